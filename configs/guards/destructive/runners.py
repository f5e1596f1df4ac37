"""Project runners that run their arguments as a command after a subcommand (``uv run``, ``npm exec --``, ``nix
develop -c``...), and tools that run a shell string (``nix-shell --run``, ``gdb -ex 'shell ...'``, ``vim -c
'!...'``, ``man -P``, ``tmux new 'CMD'``/``send-keys``): ``expand.unwrap`` asks this module what they run."""

from __future__ import annotations

from .getopt import getopt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .lexer import Word

_F = frozenset
# tool: (subcommands that run the rest as a command, short options with a value, long options with a value,
# operands between the subcommand and the command): ``uv run rm -rf ~``, ``npm exec -- rimraf ~``
RUNNERS: dict[str, tuple[frozenset[str], str, frozenset[str], int]] = {
    "uv": (
        _F({"run"}),
        "p",
        _F(
            {
                "--with",
                "--python",
                "--directory",
                "--project",
                "--env-file",
                "--extra",
                "--group",
                "--package",
                "--index",
                "--index-url",
                "--with-requirements",
                "--with-editable",
                "--cache-dir",
                "--script",
            }
        ),
        0,
    ),
    "poetry": (_F({"run"}), "CP", _F({"--directory", "--project"}), 0),
    "pipenv": (_F({"run"}), "", _F(), 0),
    "pdm": (_F({"run"}), "pg", _F({"--project", "--venv"}), 0),
    "hatch": (_F({"run"}), "e", _F({"--env"}), 0),
    "conda": (_F({"run"}), "np", _F({"--name", "--prefix", "--cwd"}), 0),
    "mamba": (_F({"run"}), "np", _F({"--name", "--prefix", "--cwd"}), 0),
    "micromamba": (_F({"run"}), "np", _F({"--name", "--prefix", "--cwd"}), 0),
    "npm": (_F({"exec", "x"}), "pw", _F({"--package", "--workspace", "--prefix"}), 0),
    "pnpm": (_F({"exec", "dlx"}), "C", _F({"--package", "--dir", "--filter"}), 0),
    "yarn": (_F({"exec", "dlx"}), "p", _F({"--package", "--cwd"}), 0),
    "bun": (_F({"x"}), "p", _F({"--package"}), 0),
    "bundle": (_F({"exec"}), "", _F({"--gemfile"}), 0),
    "mise": (_F({"exec", "x"}), "C", _F({"--cd"}), 0),
    "asdf": (_F({"exec"}), "", _F(), 0),
    "devbox": (_F({"run"}), "c", _F({"--config", "--environment"}), 0),
    "direnv": (_F({"exec"}), "", _F(), 1),
    "nix": (
        _F({"develop", "shell"}),
        "",
        _F(
            {"--command", "--profile", "--override-input", "--expr", "--file", "--keep", "--unset", "--arg", "--argstr"}
        ),
        0,
    ),
}


def run_by(name: str, rest: list[Word]) -> tuple[list[Word], list[str]] | None:
    """What ``uv run ...`` / ``npm exec -- ...`` / ``nix develop -c ...`` runs: (the command's words, shell
    strings), or None when the subcommand runs nothing hookgate judges (``npm install``)."""
    subs, short_arg, long_arg, skip = RUNNERS[name]
    texts = [w.text for w in rest]
    _, opts, stop = getopt(texts, short_arg, long_arg, permute=False)  # global options before the subcommand
    if stop >= len(rest) or rest[stop].text not in subs:
        return None
    args = texts[stop + 1 :]
    _, opts, sub_stop = getopt(args, short_arg + "c", long_arg | {"--call", "--command", "--run"}, permute=False)
    strings = [v for o, v in opts if (o in ("-c", "--call") and name in ("npm", "pnpm", "yarn")) or o == "--run"]
    words = rest[stop + 1 + sub_stop :]
    if name == "nix":  # nix develop [installable] -c|--command CMD ARGS...: the command words follow -c
        at = next((k for k, a in enumerate(args) if a in ("-c", "--command")), None)
        return (rest[stop + 2 + at :] if at is not None else []), strings
    if name == "mise" and "--" in args:  # mise exec TOOL@VERSION... -- CMD
        return rest[stop + 2 + args.index("--") :], strings
    return words[skip:], strings


# tools whose options hold a shell command (``string_runs``)
STRING_RUNNERS = frozenset({"nix-shell", "gdb", "vim", "vi", "nvim", "view", "ex", "less", "man", "make", "gmake"})
_VIM_BANG = r"\s*:*\s*(?:sil(?:e|en|ent)?!?\s*)?(?:(?:r(?:e|ea|ead)?|w(?:r|ri|rit|rite)?)\s*)?!(.*)"
_MAKE_EVAL = ("--eval", "-E")


def string_runs(name: str, args: list[str]) -> list[str]:
    """The shell programs ``nix-shell --run|--command 'CMD'``, ``gdb -ex 'shell CMD'`` (``!CMD``, ``pipe X |
    CMD``), ``vim -c '!CMD'`` (``+CMD``, ``--cmd``), ``less +'!CMD'``, ``man -P CMD`` and the recipe lines and
    ``$(shell CMD)`` of ``make --eval=TEXT`` run."""
    import re

    out = []
    if name in ("vim", "vi", "nvim", "view", "ex", "less"):
        for k, a in enumerate(args):
            value = a[1:].lstrip("+") if a.startswith("+") else args[k + 1] if k + 1 < len(args) else ""
            if a.startswith("+") or (name != "less" and a in ("-c", "--cmd")):
                m = re.match(_VIM_BANG, value, re.DOTALL)
                if m and m.group(1).strip():
                    out.append(m.group(1))
        return out
    if name == "man":
        opts = getopt(args, "PMCLmSsepRrEK", frozenset({"--pager", "--manpath", "--config-file"}))[1]
        return [v for o, v in opts if o in ("-P", "--pager") and v]
    if name in ("make", "gmake"):
        for k, a in enumerate(args):
            key, eq, value = a.partition("=")
            if key in _MAKE_EVAL or (a.startswith("-E") and len(a) > 2):
                text = value if eq else a[2:] if key not in _MAKE_EVAL else args[k + 1] if k + 1 < len(args) else ""
                out += [line[1:] for line in text.split("\n") if line.startswith("\t")]
                out += re.findall(r"\$\(shell\s+([^)]*)\)", text)
        return out
    if name == "gdb" and "--args" in args:  # gdb --args PROG ARGS...: `run` starts it
        import shlex

        out.append(shlex.join(args[args.index("--args") + 1 :]))
    for k, a in enumerate(args[:-1]):
        value = args[k + 1]
        if name == "nix-shell" and a in ("--run", "--command"):
            out.append(value)
        elif name == "gdb" and a in ("-ex", "--ex", "-eval-command", "--eval-command", "-iex"):
            m = re.match(r"\s*(?:shell\s+|!|(?:pipe\s+|\|)[^|]*\|)(.*)", value, re.DOTALL)  # pipe p 1 | CMD
            if m:
                out.append(m.group(1))
    return out


# tmux subcommands that run a shell command, and their options that take a value
_TMUX_RUNS = {
    "new-session": "cefFnstxy",
    "new": "cefFnstxy",
    "new-window": "cefFnt",
    "neww": "cefFnt",
    "split-window": "celtF",
    "splitw": "celtF",
    "respawn-pane": "cet",
    "respawnp": "cet",
    "respawn-window": "cet",
    "respawnw": "cet",
    "run-shell": "cdt",
    "run": "cdt",
    "display-popup": "bcdehsStTwxy",
    "popup": "bcdehsStTwxy",
    "send-keys": "Nt",
    "send": "Nt",
}
_TMUX_KEYS = frozenset({"Enter", "C-m", "KPEnter", "C-j", "Space", "Tab", "Escape"})


def tmux_runs(args: list[str]) -> list[str]:
    """The shell commands ``tmux [global options] SUBCOMMAND ... [\\; SUBCOMMAND ...]`` runs or types."""
    _, opts, stop = getopt(args, "LSfcT", permute=False)
    out = [v for o, v in opts if o == "-c"]  # tmux -c 'cmd' runs cmd like sh -c
    groups: list[list[str]] = [[]]
    for a in args[stop:]:
        if a in (";", "\\;"):
            groups.append([])
        else:
            groups[-1].append(a)
    for group in groups:
        if not group or group[0] not in _TMUX_RUNS:
            continue
        _, _, stop = getopt(group[1:], _TMUX_RUNS[group[0]], permute=False)
        rest = group[1 + stop :]
        if group[0] in ("send-keys", "send"):
            rest = [k for k in rest if k not in _TMUX_KEYS]
        if rest:
            out.append(" ".join(rest))
    return out
