"""Which arguments of an exec-form command are code (a shell's ``-c`` script, ``python -c``, ``node -e``),
so that no value derived from an event or a request is ever pasted into code.

``code_arguments(argv)`` maps the index of each such argument to its language: ``sh`` (any POSIX shell:
sh, bash, dash, zsh, ksh, ash, busybox sh; through ``env``, ``sudo``, ``nice``, ``timeout``, ``nohup``,
``exec``, ``command``, ``stdbuf``, ``setsid``), ``fish``, ``powershell`` (``pwsh``/``powershell``
``-Command``), or an interpreter name (``python``, ``node``, ``perl``, ``ruby``, ``php``, ...).

``shell_reference(text, language)`` rewrites ``${NAME}`` placeholders in a shell script into that
shell's own reference to the environment variable (hookgate exports every placeholder's value), so the
shell expands the value as data: ``${NAME}`` stays as written for POSIX shells, ``{$NAME}`` for fish,
``${env:NAME}`` for PowerShell. Interpreters other than shells have no such spelling inside their code,
so a placeholder whose value may come from the event (``${CLAUDE_PROJECT_DIR}``, which falls back to the
event's ``cwd``) is refused there (``handlers.command.check_command``).
"""

from __future__ import annotations

import os
import re

POSIX_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"})
INLINE_FLAGS = {
    "python": ("-c",),
    "pypy": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"),
    "deno": ("eval",),
    "bun": ("-e", "--eval"),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
    "lua": ("-e",),
    "Rscript": ("-e",),
    "osascript": ("-e",),
    "tclsh": ("-c",),
}
WRAPPERS = frozenset(
    {
        "env",
        "sudo",
        "doas",
        "nice",
        "ionice",
        "nohup",
        "timeout",
        "exec",
        "command",
        "stdbuf",
        "setsid",
        "time",
        "chrt",
        "taskset",
        "flock",
        "busybox",
    }
)
_TAKES_VALUE = {
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"},
    "nice": {"-n"},
    "ionice": {"-c", "-n", "-p"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "env": {"-u", "-C", "-S", "--unset", "--chdir"},
    "stdbuf": {"-i", "-o", "-e"},
    "chrt": set(),
    "taskset": set(),
    "flock": {"-w", "-E"},
}
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _name(word: str) -> str:
    """The program name of ``word``: basename, a trailing version stripped (``python3.12`` -> ``python``)."""
    base = os.path.basename(word)
    stripped = base.rstrip("0123456789.")
    return stripped or base


def _skip_wrapper(argv: list[str], i: int) -> int:
    """The index of the command a wrapper at ``argv[i]`` runs."""
    wrapper = _name(argv[i])
    takes = _TAKES_VALUE.get(wrapper, set())
    i += 1
    positional = {"timeout": 1, "chrt": 1, "taskset": 1, "flock": 1}.get(wrapper, 0)
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return i + 1
        if word.startswith("-") and len(word) > 1:
            i += 2 if word in takes else 1
            continue
        if wrapper == "env" and "=" in word:
            i += 1
            continue
        if wrapper == "busybox":
            return i
        if positional:
            positional -= 1
            i += 1
            continue
        return i
    return i


def code_arguments(argv: list[str]) -> dict[int, str]:
    """``{index: language}`` for the arguments of ``argv`` that its program parses as code (see module)."""
    i = 0
    while i < len(argv) and _name(argv[i]) in WRAPPERS:
        i = _skip_wrapper(argv, i)
    if i >= len(argv):
        return {}
    program = _name(argv[i])
    words = argv[i + 1 :]
    if program in POSIX_SHELLS or program == "fish":
        language = "fish" if program == "fish" else "sh"
        script_flag = False
        j = 0
        while j < len(words):
            word = words[j]
            if word in ("-o", "+o", "-O", "+O", "--init-file", "--rcfile"):
                j += 2
                continue
            if word.startswith(("-", "+")) and len(word) > 1 and not word.startswith("--"):
                script_flag = script_flag or "c" in word[1:]
                j += 1
                continue
            if word.startswith("--"):
                script_flag = script_flag or word == "--command"
                j += 1
                continue
            return {i + 1 + j: language} if script_flag else {}
        return {}
    if program in ("pwsh", "powershell"):
        for j, word in enumerate(words):
            if word.lower() in ("-c", "-command", "/c", "-commandwithargs", "-cwa") and j + 1 < len(words):
                return {i + 2 + j: "powershell"}
        return {}
    flags = INLINE_FLAGS.get(program)
    if flags is None:
        return {}
    for j, word in enumerate(words):
        if word in flags or (flags == ("-c",) and re.fullmatch(r"-[A-Za-z]*c", word)):
            return {i + 2 + j: program} if j + 1 < len(words) else {}
        if not word.startswith("-"):
            return {}  # a script file: what follows are its arguments
    return {}


def shell_reference(text: str, language: str) -> str:
    """``text`` (a shell script) with each ``${NAME}`` spelled as that shell's environment reference."""
    if language == "fish":
        return _PLACEHOLDER.sub(lambda m: "{$" + m.group(1) + "}", text)
    if language == "powershell":
        return _PLACEHOLDER.sub(lambda m: "${env:" + m.group(1) + "}", text)
    return text


def is_shell(language: str) -> bool:
    return language in ("sh", "fish", "powershell")


def placeholders_in(text: str, names: tuple[str, ...] | frozenset[str]) -> list[str]:
    """The placeholder names of ``names`` that ``text`` uses as ``${NAME}``, in order."""
    return [m.group(1) for m in _PLACEHOLDER.finditer(text) if m.group(1) in names]
