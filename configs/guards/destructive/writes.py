"""Shell writes to protected files: redirections, ``tee``, ``cp``/``mv``/``ln``/``install``/``rsync``
destinations, ``sed -i``, ``perl -i``, ``dd of=``, ``truncate``, ``curl -o``, ``wget -O`` (``secrets_guard``
decides what is protected), a glob that could name a protected file (``> .e?v``), a whole directory copied, moved
or linked into place as hook configuration or a ``.git`` (``cp -a /tmp/evil/.claude ./``), the home or project
folder moved away (``mv ~ /tmp/x``), and ``dd`` onto a device."""

from __future__ import annotations

import os
import re

from .cmdnames import writes_files
from .context import POLICY, Ctx
from .delete import check_removals
from .expand import base, names
from .getopt import getopt
from .gitdir import git_dir_reason, holder, is_git_dir, worked_git_dir
from .protected import (
    config_kind,
    git_kind,
    git_reason,
    glob_reason,
    in_project,
    installed_kind,
    link_target,
    policy_file,
)
from .protected import write_reason as protected_write_reason

# command: (short options with a value, long options with a value)
COPIERS: dict[str, tuple[str, frozenset[str]]] = {
    "cp": ("tS", frozenset({"--target-directory", "--suffix"})),
    "mv": ("tS", frozenset({"--target-directory", "--suffix"})),
    "ln": ("tS", frozenset({"--target-directory", "--suffix"})),
    "install": ("tSmogZ", frozenset({"--target-directory", "--suffix", "--mode", "--owner", "--group"})),
    "rsync": (
        "efBTM",
        frozenset(
            {
                "--rsh",
                "--exclude",
                "--include",
                "--filter",
                "--files-from",
                "--exclude-from",
                "--include-from",
                "--rsync-path",
                "--password-file",
                "--log-file",
                "--chmod",
                "--backup-dir",
                "--suffix",
                "--compare-dest",
                "--link-dest",
                "--copy-dest",
                "--partial-dir",
                "--temp-dir",
                "--out-format",
                "--max-size",
                "--min-size",
                "--bwlimit",
                "--timeout",
                "--port",
                "--block-size",
            }
        ),
    ),
}


def copy_operands(name: str, args: list[str]) -> tuple[list[str], str | None, set[str], bool]:
    """``(sources, target, options, explicit)`` of a copier's (``COPIERS``) command line: ``target`` from
    ``-t``/``--target-directory`` (``explicit``), else its last operand; None for ``install -d`` (whose operands,
    returned as ``sources``, are the directories it makes) and when there are too few operands (no sources)."""
    short_arg, long_arg = COPIERS[name]
    operands, opts, _ = getopt(args, short_arg, long_arg)
    found = names(opts)
    if name == "install" and "-d" in found:
        return operands, None, found, False
    target = next((v for o, v in opts if o in ("-t", "--target-directory")), None)
    if target is not None:
        return operands, target, found, True
    if len(operands) < 2:
        return [], None, found, False
    return operands[:-1], operands[-1], found, False


_SED_WRITE = r"(?m)(?:^|[;{}\s\d$/!gpiIeM])[wW][ \t]+([^\n]+)$"


def written_paths(name: str, args: list[str]) -> list[str]:
    """The files ``name ARGS`` writes to, as far as its arguments tell (none unless ``cmdnames.writes_files``)."""
    if not writes_files(name):
        return []
    if name == "tee":
        return getopt(args, "", frozenset(), "")[0]
    if name in COPIERS:
        sources, target, found, explicit = copy_operands(name, args)
        if target is None:
            return sources  # install -d DIR...: the directories it makes (or too few operands: none)
        if not explicit:
            no_dir = found & {"-T", "--no-target-directory"}
            # a repository's .git is a directory wherever one exists (cp -r hooks .git -> .git/hooks); where
            # it is not, the copy writes .git itself: both are judged
            is_dir = (
                target.endswith("/") or target in (".", "..", "~") or base(target.rstrip("/")) == ".git"
            ) and not no_dir
            if not is_dir:
                return [target]
        # a directory destination: the file each source becomes in it (cp .env backup/ -> backup/.env)
        return [target, *(target.rstrip("/") + "/" + base(src.rstrip("/")) for src in sources)]
    if name == "sed":
        operands, opts, _ = getopt(args, "efl", frozenset({"--expression", "--file", "--line-length"}), "i")
        found = names(opts)
        scripted = bool(found & {"-e", "-f", "--expression", "--file"})
        scripts = [v for o, v in opts if o in ("-e", "--expression")] or ([] if scripted else operands[:1])
        # its `w FILE` command and `s///w FILE` flag write FILE (sed -n 'w .env' x)
        out = [m.group(1).strip() for t in scripts if "w" in t for m in re.finditer(_SED_WRITE, t)]
        if not found & {"-i", "--in-place"}:
            return out
        return out + (operands if scripted else operands[1:])
    if name.startswith("perl"):
        operands, opts, _ = getopt(args, "eE", frozenset(), "iMmIlxdDC0")
        found = names(opts)
        if "-i" not in found:
            return []
        return operands if found & {"-e", "-E"} else operands[1:]
    if name == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if name == "truncate":
        return getopt(args, "sr", frozenset({"--size", "--reference"}))[0]
    if name == "curl":
        _, opts, _ = getopt(args, "AbcCdDeEFHKmoPQrtTuUwxXyYz", frozenset({"--output"}))
        return [v for o, v in opts if o in ("-o", "--output")]
    if name == "wget":
        _, opts, _ = getopt(
            args, "OoaeiBtTwQPUlARDXI", frozenset({"--output-document", "--output-file", "--append-output"})
        )
        return [v for o, v in opts if o in ("-O", "-o", "-a", "--output-document", "--output-file", "--append-output")]
    return _output_paths(name, args)


_SORT_ARGS = frozenset({"--output", "--key", "--field-separator", "--buffer-size", "--temporary-directory"})
_PATCH_ARGS = frozenset(
    {"--output", "--reject-file", "--input", "--directory", "--strip", "--fuzz", "--prefix", "--suffix", "--get"}
)


def _output_paths(name: str, args: list[str]) -> list[str]:
    """The files of the filters and converters that write one: ``sort -o F``, ``patch F``/``-o F``/``-r F``,
    ``sponge F``, ``uniq IN OUT``, ``xxd IN OUT``, ``gpg -o F``. (``openssl req -x509 -out cert.pem`` makes a
    new key or certificate, an everyday step, and is not read.)"""
    if name == "sort":
        _, opts, _ = getopt(args, "otkST", _SORT_ARGS | {"--files0-from", "--parallel", "--compress-program"})
        return [v for o, v in opts if o in ("-o", "--output")]
    if name == "patch":
        operands, opts, _ = getopt(args, "oriBdDFgpVYzx", _PATCH_ARGS | {"--ifdef", "--basename-prefix"})
        out = [v for o, v in opts if o in ("-o", "--output", "-r", "--reject-file")]
        return out or operands[:1]  # patch FILE < diff: FILE is changed in place
    if name == "sponge":
        return getopt(args)[0]
    if name in ("uniq", "xxd"):
        return getopt(args, "fswcglson" if name == "xxd" else "fsw", frozenset())[0][1:2]
    if name in ("gpg", "gpg2"):
        _, opts, _ = getopt(args, "ourl", frozenset({"--output", "--recipient", "--local-user"}))
        return [v for o, v in opts if o in ("-o", "--output")]
    return []


_SAFE_DEVICES = ("/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/", "/dev/shm/")
# disk devices (Linux: SCSI/SATA, IDE, virtio, Xen, NVMe, SD/eMMC, RAID, device-mapper, loop and the by-id/by-uuid
# links; macOS: disk and rdisk): writing onto one overwrites a file system
_DISK_DEVICE = (
    r"/dev/(?:(?:s|h|v|xv)d[a-z]+[0-9]*|nvme[0-9]+n[0-9]+(?:p[0-9]+)?|mmcblk[0-9]+(?:p[0-9]+)?|md[0-9]+|dm-[0-9]+"
    r"|loop[0-9]+|r?disk[0-9]+(?:s[0-9]+)*|disk/.+|mapper/.+)"
)


def is_disk_device(path: str) -> bool:
    """Whether ``path`` (as written, or after ``..`` folding) names a disk device (``_DISK_DEVICE``)."""
    import re

    return re.fullmatch(_DISK_DEVICE, os.path.normpath(path)) is not None


# per partition editor, the options that only read the partition table
_READ_ONLY_DISK_OPTIONS = {
    "sgdisk": frozenset(
        {
            "-p",
            "--print",
            "-i",
            "--info",
            "-v",
            "--verify",
            "-b",
            "--backup",
            "-L",
            "--list-types",
            "-O",
            "--print-mbr",
            "-P",
            "--pretend",
            "-V",
            "--version",
            "-h",
            "--help",
            "-?",
        }
    ),
    "sfdisk": frozenset(
        {
            "-l",
            "--list",
            "-d",
            "--dump",
            "-J",
            "--json",
            "-s",
            "--show-size",
            "-g",
            "--show-geometry",
            "-F",
            "--list-free",
            "-V",
            "--version",
            "-h",
            "--help",
            "-n",
            "--no-act",
        }
    ),
    "fdisk": frozenset({"-l", "--list", "-x", "--list-details", "-V", "--version", "-h", "--help"}),
    "gdisk": frozenset({"-l", "-V", "-h"}),
    "parted": frozenset({"-l", "--list", "-v", "--version", "-h", "--help"}),
}
_PARTED_READS = frozenset({"print", "p", "unit", "s", "B", "kB", "MB", "GB", "TB", "MiB", "GiB", "%", "cyl", "chs"})


def check_disk_tool(name: str, args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``disk.wipe``: wipefs (unless it only lists, with no ``-a``/``-o``), blkdiscard, mkswap on a device, and the
    partition editors unless every option only reads (``fdisk -l``, ``sgdisk -p``, ``parted -l``/``print``)."""
    if name == "mkswap" and not any(a.startswith("/dev/") for a in args):
        return None  # mkswap /swapfile: a swap file of one's own
    if name == "wipefs":
        erases = any(
            a in ("-a", "--all")
            or a.startswith(("-o", "--offset"))
            or (a[:1] == "-" and a[1:2] != "-" and "a" in a[1:])
            for a in args
        )
        if not erases or any(a in ("-n", "--no-act") for a in args):
            return None
    elif name in _READ_ONLY_DISK_OPTIONS:
        options = [a.split("=", 1)[0] for a in args if a.startswith("-")]
        words = [a for a in args if not a.startswith("-")]
        if name == "parted" and words[1:] and all(w in _PARTED_READS for w in words[1:]):
            options = [o for o in options if o not in ("-s", "--script", "-m", "--machine")]
            if all(o in _READ_ONLY_DISK_OPTIONS[name] for o in options):
                return None
        elif options and all(o in _READ_ONLY_DISK_OPTIONS[name] for o in options):
            return None
    return ctx.hit(
        "disk.wipe",
        shown,
        f"`{shown}` erases or rewrites a disk's signatures or partition table, which loses everything on it, so "
        f"{POLICY} blocks it.",
    )


def check_writes(name: str, args: list[str], shown: str, ctx: Ctx) -> str | None:
    if name == "dd":
        for a in args:
            if a.startswith("of=/dev/") and not a[3:].startswith(_SAFE_DEVICES):
                return ctx.hit(
                    "disk.dd-device",
                    shown,
                    f"`{shown}` writes straight onto a device and can overwrite a disk, so {POLICY} blocks it.",
                )
    linked = _linked_sources(name, args, shown, ctx)
    if linked:
        return linked
    paths = written_paths(name, args)
    # cp -r dir .claude: a whole configuration directory. A folder that merely holds the installed hookgate
    # (`cp -t /tmp x` with hookgate installed under /tmp) is written into, not replaced: checked path by path.
    replaced = paths and not paths[0].endswith("/") and config_kind(paths[0], removal=True)
    if replaced and replaced == installed_kind(paths[0], removal=True) and not installed_kind(paths[0]):
        replaced = None
    if name in COPIERS and replaced:
        reason = protected_write_reason(paths[0], f"`{shown}`", removal=True, verb="replaces")
        return ctx.hit("write.hook-config", shown, reason) if reason else None
    if name in COPIERS:  # cp -a /tmp/evil/.claude ./, cp -r evil/.claude/. .claude/: a whole directory lands
        reason = _placed_directories(name, args, shown, ctx)
        if reason:
            return reason
    for path in paths:
        reason = write_reason(path, shown, ctx)
        if reason:
            return reason
    if name == "mv":  # moving hook configuration away switches it off
        operands, opts, _ = getopt(args, *COPIERS["mv"])
        if not any(o in ("-t", "--target-directory") for o, _ in opts):
            operands = operands[:-1]
        for source in operands:  # mv ~ /tmp/x, mv . ../x: the folder holding the hook configuration goes
            where = holder(source, ctx)
            if where:
                return ctx.hit("write.hook-config", shown, holder_reason(shown, where))
        return check_removals(operands, shown, ctx)
    return None


# the folders a host reads its hook configuration from, by name, and git's (whose config and hooks run commands)
_CONFIG_DIR_NAMES = (".claude", ".kiro", ".codex", ".gemini")
_DIRECTORY_KIND = "a directory holding agent hook configuration"


def replaced_kind(path: str) -> str | None:
    """What of the agent's hook configuration a directory ``path`` is when something replaces or fills it whole
    (``cp -r x .claude``, ``tar -C .claude -xf x.tar``), or None. A folder that merely holds the installed hookgate
    (``/tmp`` with hookgate installed under ``/tmp``) is written into, not replaced: it does not count."""
    kind = config_kind(path, removal=True)
    if kind and kind == installed_kind(path, removal=True) and not installed_kind(path):
        return None
    return kind


def holder_reason(shown: str, where: str) -> str:
    return (
        f"`{shown}` moves {where}, and with it the agent's hook configuration it holds (the project's .claude/ "
        f"and hookgate.yaml, ~/.claude/settings.json, hookgate's state); {POLICY} blocks changes to the agent's "
        "own hook configuration (the agent must not change its own guard rails): ask the user to make this change."
    )


def _placed_directories(name: str, args: list[str], shown: str, ctx: Ctx) -> str | None:
    """A copy, move or link that puts a whole directory in place as hook configuration or a ``.git``: into a
    directory destination (``.``, ``./``, ``DIR/``, the project or home directory, and any rsync destination), a
    source lands as ``DEST/basename(SOURCE)`` (``cp -a /tmp/evil/.claude ./`` -> ``./.claude``), and one that
    copies a directory's contents (cp's ``SRC/.``, rsync's ``SRC/``) fills ``DEST`` itself
    (``cp -r evil/.claude/. .claude/``). A landing named like a host's config folder counts where the host reads
    it (the project, a folder holding it, the home directory) or inside another config folder (``cp -r agents
    .kiro/``); copying one elsewhere (``cp -r .claude backup/``) is a backup and passes."""
    operands, target, found, explicit = copy_operands(name, args)
    if target is None:
        return None
    if not explicit:
        if found & {"-T", "--no-target-directory"}:
            return None
        if name == "rsync" and (":" in target.split("/", 1)[0] or target.startswith("rsync://")):
            return None  # host:path, a remote destination
        into = (
            name == "rsync"  # rsync puts a source folder without a trailing / inside its destination, always
            or len(operands) > 1
            or target.endswith("/")
            or target in (".", "..", "~")
            or holder(target, ctx) is not None  # cp -r x /srv/proj (the project: a directory that exists)
        )
        if not into:
            return None
    what = f"`{shown}`"
    verb = {"mv": "moves", "ln": "links"}.get(name, "copies")
    for source in operands:
        text = source.replace("\\", "/")
        contents = text == "." or text.endswith("/.") or (name == "rsync" and text.endswith("/"))
        last = base(text.rstrip("/"))
        if contents:  # the source folder's contents land in the destination itself
            landing, whole = target.rstrip("/") or target, True
        else:
            if last in ("", ".", ".."):
                continue
            landing, whole = target.rstrip("/") + "/" + last, False
        kind = replaced_kind(landing)
        if kind is not None and (
            whole or kind != _DIRECTORY_KIND or replaced_kind(target) or holder(target, ctx) is not None
        ):
            head = f"{verb} a directory's contents into" if whole else f"{verb} a whole directory to"
            reason = protected_write_reason(landing, what, removal=True, verb=head)
            if reason:
                return ctx.hit("write.hook-config" if config_kind(landing, True) else "write.secrets", shown, reason)
        if is_git_dir(landing) and (whole or holder(target, ctx) is not None):
            return ctx.hit("write.git-config", shown, git_dir_reason(what, landing, f"{verb} a whole directory to"))
        if not whole and ("*" in last or "?" in last or "[" in last) and holder(target, ctx) is not None:
            import fnmatch  # cp -r /tmp/evil/.c* .: the glob can name a config folder

            named = next((d for d in (*_CONFIG_DIR_NAMES, ".git") if fnmatch.fnmatchcase(d, last.lower())), None)
            if named and last.startswith("."):
                reason = protected_write_reason(
                    target.rstrip("/") + "/" + named, f"{what} (its {last} can match {named})", True, f"{verb} to"
                )
                if named == ".git":
                    return ctx.hit("write.git-config", shown, git_dir_reason(what, landing, f"{verb} to"))
                return ctx.hit("write.hook-config", shown, reason or "")
    return None


def _linked_sources(name: str, args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``ln [-s] HOOK-CONFIG x``, ``cp -s``/``-l``/``--link`` of one, and a hard link (``ln``, ``cp -l``) to a
    secrets file: a link through which a later write (a Write tool call, ``>> x``) changes the protected file,
    so making it counts as writing that file. (A write through a symbolic link is also judged where it lands,
    ``protected.link_target``; a hard link cannot be followed back.)"""
    if name not in ("ln", "cp"):
        return None
    operands, opts, _ = getopt(args, *COPIERS[name])
    if name == "cp" and not names(opts) & {"-s", "-l", "--symbolic-link", "--link"}:
        return None
    if not any(o in ("-t", "--target-directory") for o, _ in opts):
        operands = operands[:-1] if len(operands) > 1 else operands
    symbolic = bool(names(opts) & {"-s", "--symbolic", "--symbolic-link"})
    for source in operands:
        hook_config = config_kind(source) is not None
        if symbolic and not hook_config:
            continue  # ln -s ../.env .env is everyday; a write through it is judged where it lands (link_target)
        reason = protected_write_reason(source, f"`{shown}`", verb="links to")
        if reason is not None:  # a hard link cannot be followed back: the link itself is the write
            return ctx.hit("write.hook-config" if hook_config else "write.secrets", shown, reason)
    return None


def write_reason(path: str, shown: str, ctx: Ctx) -> str | None:
    """A write to ``path`` by ``shown``: onto a disk device (``disk.device-write``), ``secrets_guard.write_reason``,
    and for a glob (``.e?v``) whether it could name a protected file."""
    what = f"`{shown}`"
    for candidate in ctx.state.candidates(path):  # after `cd ~/.ssh`, `> authorized_keys` is ~/.ssh/authorized_keys
        if candidate.startswith("/dev/") and is_disk_device(candidate):
            return ctx.hit(
                "disk.device-write",
                shown,
                f"{what} writes straight onto the disk device {candidate} and can overwrite its file systems, so "
                f"{POLICY} blocks it.",
            )
        reason = protected_write_reason(candidate, what)
        glob = reason is None and ("*" in candidate or "?" in candidate or "[" in candidate)
        if glob:
            reason = glob_reason(candidate, what)
        if reason is not None:
            kind = config_kind(candidate) or (glob and "agent's own hook" in reason)
            return ctx.hit("write.hook-config" if kind else "write.secrets", shown, reason)
        git = git_kind(candidate)
        if git is not None:
            return ctx.hit("write.git-config", shown, git_reason(candidate, what, git))
        if worked_git_dir(candidate, ctx):  # .git itself: a gitdir file or link there points git elsewhere
            return ctx.hit("write.git-config", shown, git_dir_reason(what, candidate, "writes to"))
    if not ctx.state.changes_directory_before(ctx.state.part):
        linked = link_target(path, ctx.cwd or "")
        reason = protected_write_reason(linked, f"{what} (through a link to {linked})") if linked else None
        if reason is not None:  # ln -s ~/.ssh/authorized_keys notes.txt; echo k >> notes.txt
            return ctx.hit("write.hook-config" if config_kind(linked or "") else "write.secrets", shown, reason)
    full = in_project(path, ctx.cwd)
    if full and (installed_kind(full) or policy_file(full)) and not ctx.state.changes_directory_before(ctx.state.part):
        return ctx.hit("write.hook-config", shown, protected_write_reason(full, what) or "")
    return None
