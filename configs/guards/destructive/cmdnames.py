"""The command names each rule module judges, apart from the modules themselves: the dispatcher (``rules``)
reads them to import a rule module only when a command's name can need it (``ls -la`` loads none of
``delete``, ``git``, ``writes``, ``programs``...: a hook call pays for the modules it uses). These tables are
the only copy (``writes.written_paths`` starts from ``writes_files``, so a writer missing here is one its own
tests see write nothing; ``tests/unit/guards/test_lazy_rules.py``). Imports nothing."""

from __future__ import annotations

SHELLS = frozenset({"sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "csh", "tcsh"})
"""Shells (``programs.check_shell``)."""
FETCHERS = frozenset({"curl", "wget", "fetch", "http", "https", "xh"})
"""Downloaders: their output run as code is ``exec.download`` (``programs``), and so is a file they write to
that the same command then runs (``programs.record_downloads``)."""
HTTP_CLIENTS = frozenset({"curl", "wget", "http", "https", "xh", "httpie", "curlie"})
"""HTTP clients that could call hookgate's approval routes (``selfguard.check_http``)."""
TOOLS = frozenset({"chmod", "chown", "chgrp", "rsync", "tar", "gtar", "bsdtar", "unzip"})
"""``tools.check_tool``'s commands."""
WRITERS = frozenset(
    {"tee", "cp", "mv", "ln", "install", "rsync", "sed", "dd", "truncate", "curl", "wget"}
    | {"sort", "patch", "sponge", "uniq", "xxd", "gpg", "gpg2"}
)
"""Commands whose arguments name files they write (``writes.written_paths``), with ``perl*`` (``writes``)."""
DISK_TOOLS = frozenset({"wipefs", "blkdiscard", "mkswap", "sgdisk", "sfdisk", "parted", "fdisk", "gdisk"})
"""Partition and signature tools (``writes.check_disk_tool``)."""
OPTION_RUNNERS = frozenset({"tar", "gtar", "bsdtar", "rsync", "ssh", "scp", "sftp", "sqlite3", "sed", "gsed"})
"""Commands that run shell text given in an option or script (``optruns.option_runs``)."""
FORMATTERS = frozenset({"mke2fs", "mkntfs", "mkdosfs", "mkexfatfs", "mkreiserfs", "mkudffs", "newfs"})
"""File system makers not named ``mkfs*`` (``newfs_hfs`` and the other ``newfs_*`` count too): rule ``disk.mkfs``."""
PROGRAM_FILES: dict[str, tuple[str, frozenset[str]]] = {
    "awk": ("fEi", frozenset({"--file", "--exec", "--include"})),
    "gawk": ("fEi", frozenset({"--file", "--exec", "--include"})),
    "mawk": ("fE", frozenset({"--file", "--exec"})),
    "nawk": ("f", frozenset()),
    "sqlite3": ("", frozenset({"-init", "--init"})),
    "sed": ("f", frozenset({"--file"})),
    "gsed": ("f", frozenset({"--file"})),
    "make": ("f", frozenset({"--file", "--makefile"})),
    "gmake": ("f", frozenset({"--file", "--makefile"})),
    "gdb": ("x", frozenset({"--command", "-command", "--init-command", "-init-command"})),
    "vim": ("Su", frozenset()),
    "nvim": ("Su", frozenset()),
    "expect": ("f", frozenset()),  # (and its script operand: every download among its arguments counts)
    "php": ("f", frozenset()),
    "ruby": ("r", frozenset({"--require"})),
    "node": ("r", frozenset({"--require", "--import", "--loader", "--experimental-loader"})),
    "nodejs": ("r", frozenset({"--require", "--import", "--loader", "--experimental-loader"})),
    "bun": ("r", frozenset({"--require", "--preload"})),
}
"""Commands (or interpreter families) with options whose value is a file of program text they run (``awk -f
FILE``, ``sqlite3 -init FILE``, ``make -f FILE``, ``node -r FILE``): short option letters (the value attached or
the next word), long options (``--x=v`` or the next word). ``programs.check_program_files``: a download there
runs as code."""
VERSIONED_INTERPRETERS = frozenset(
    {"python", "pypy", "perl", "ruby", "node", "php", "lua", "tclsh", "wish"}
)  # python3.12, lua5.4, tclsh8.6
PLAIN_INTERPRETERS = frozenset({"nodejs", "Rscript", "bun", "osascript", "jimsh"})


def writes_files(name: str) -> bool:
    """Whether ``name``'s arguments can name a file it writes (else ``writes.check_writes`` has nothing to do)."""
    return name in WRITERS or name.startswith("perl")


def interpreter_family(name: str) -> str | None:
    """The interpreter family a command name runs (``python3.12`` -> ``python``, ``nodejs``), or None: the full
    match of ``(python|pypy|perl|ruby|node|php|lua|tclsh|wish)[0-9.]*|(nodejs|Rscript|bun|osascript|jimsh)``, without a
    regex."""
    if name in PLAIN_INTERPRETERS:
        return name
    stem = name.rstrip("0123456789.")
    return stem if stem in VERSIONED_INTERPRETERS else None
