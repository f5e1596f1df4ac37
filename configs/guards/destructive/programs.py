"""Program text run by a shell, an interpreter or a scheduler, and where it comes from.

``sh -c SCRIPT`` (with its positional parameters bound: ``bash -c 'eval "$0"' 'rm -rf ~'``), a shell reading
its program from stdin (a pipe, a heredoc, a here-string, a file redirect), ``xargs sh -c`` scripts that
stdin items are pasted into, ``source``/``.``, interpreters (a download piped into ``python3``; one-liners
through ``check_code``), and jobs handed to ``at``/``batch``/``crontab`` on stdin. Literal
``echo``/``printf`` text piped in is checked as the program it is; anything else hookgate cannot see is denied.
"""

from __future__ import annotations

import os
import re

from .cmdnames import FETCHERS
from .context import POLICY, Ctx
from .expand import Cmd, Unwrapped, base, bind_positionals, commands, names, printed, show, unwrap
from .getopt import getopt
from .interp import check_code
from .lexer import Token, Word
from .selfguard import check_hookgate, check_pip, is_hookgate_module, is_hookgate_script

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeGuard

STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0"})
"""Script operands that name the shell's (or interpreter's) own stdin."""


# family: (letters giving the program inline, letters naming a module (stdin is data), letters taking a value,
#          attached-only letters, long options giving the program, long options taking a value)
_INTERPRETERS: dict[str, tuple[str, str, str, str, frozenset[str], frozenset[str]]] = {
    "python": ("c", "m", "WX", "", frozenset(), frozenset({"--check-hash-based-pycs"})),
    "pypy": ("c", "m", "WX", "", frozenset(), frozenset()),
    "perl": ("eE", "", "", "MmIilxdDC0", frozenset(), frozenset()),
    "ruby": ("e", "", "rICEF", "", frozenset(), frozenset()),
    "node": (
        "ep",
        "",
        "rC",
        "",
        frozenset({"--eval", "--print"}),
        frozenset({"--require", "--import", "--loader", "--experimental-loader", "--conditions"}),
    ),
    "nodejs": ("ep", "", "rC", "", frozenset({"--eval", "--print"}), frozenset({"--require", "--import", "--loader"})),
    "php": ("r", "f", "cdz", "", frozenset(), frozenset()),
    "lua": ("e", "", "l", "", frozenset(), frozenset()),
    "Rscript": ("e", "", "", "", frozenset(), frozenset()),
    "bun": ("ep", "", "rC", "", frozenset({"--eval", "--print"}), frozenset({"--require", "--preload", "--cwd"})),
    "osascript": ("e", "", "ls", "", frozenset(), frozenset()),
    "tclsh": ("", "", "", "", frozenset(), frozenset()),  # a script file, or the program on stdin
    "wish": ("", "", "", "", frozenset(), frozenset()),
    "jimsh": ("", "", "", "", frozenset(), frozenset()),
}
_UNKNOWN = "$HOOKGATE_STDIN_ITEM"  # an argument read from stdin at run time


def download_reason() -> str:
    return (
        "Piping a downloaded script straight into a shell or interpreter (`curl ... | sh`, `bash <(curl ...)`, "
        f'`sh -c "$(curl ...)"`) runs code nobody has read, so {POLICY} blocks it. Download the script to a '
        "file, read it, then run it."
    )


def core_name(cmd: Cmd) -> str:
    words = unwrap(cmd.words).words
    return base(words[0].text) if words else ""


def fetch_in_subs(words: list[Word], shown: str, ctx: Ctx) -> str | None:
    """The download reason when a substitution inside ``words`` runs curl/wget (``sh -c "$(curl ...)"``) or
    prints a file the command downloaded (``curl -o x URL; eval "$(cat x)"``)."""
    for w in words:
        for sub in w.subs:
            if any(downloads(c, ctx) for c in commands(sub)):
                return ctx.hit("exec.download", shown, download_reason())
    return None


def downloads(cmd: Cmd, ctx: Ctx | None) -> bool:
    """Whether ``cmd`` prints a download: it runs a downloader, or (``ctx``: the files the command downloads
    to) it is ``cat`` of such a file or reads one on stdin (``$(< x)``)."""
    name = core_name(cmd)
    if name in FETCHERS:
        return True
    if ctx is None or not ctx.state.downloaded:
        return False
    if any(r.op in ("<", "<>") and r.target is not None and was_downloaded(r.target, ctx) for r in cmd.redirs):
        return True
    words = unwrap(cmd.words).words if name in ("cat", "tac", "head", "tail", "less", "more") else []
    return any(was_downloaded(w, ctx) for w in words[1:])


def fetches(toks: list[Token], ctx: Ctx | None = None, depth: int = 0) -> bool:
    """Whether the commands of ``toks`` print a download (``downloads``), also in a substitution or a
    ``< <(...)`` of theirs (``<(curl ...)``, ``<(curl ... | gunzip)``, ``<(cat <(curl ...))``)."""
    for c in commands(toks):
        if downloads(c, ctx):
            return True
        words = [*c.words, *(r.target for r in c.redirs if r.target is not None)]
        if depth < 8 and any(fetches(sub, ctx, depth + 1) for w in words for sub in w.subs):
            return True
    return False


def was_downloaded(word: Word, ctx: Ctx) -> bool:
    """Whether ``word`` names a file the command writes a download to (``record_downloads``), as written."""
    return bool(word.text) and os.path.normpath(word.text) in ctx.state.downloaded


def downloaded_file(word: Word, ctx: Ctx | None = None) -> bool:
    """Whether ``word``, a file a program reads as program text, is a download: a ``<(...)`` that prints one
    (``fetches``), or (``ctx``) a file the command writes a download to first (``curl -o x URL && sh x``)."""
    if word.procsub is not None:
        return fetches(word.procsub, ctx)
    return ctx is not None and was_downloaded(word, ctx)


_OUTPUTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_CURL_VALUES = "AbcCdDeEFHKmoPQrtTuUwxXyYz"
_WGET_VALUES = "OoaeiBtTwQPUlARDXI"


def record_downloads(toks: list[Token], ctx: Ctx, depth: int = 0) -> None:
    """Add to ``ctx.state.downloaded`` the files the commands of ``toks`` (and of their substitutions) write a
    download to: ``curl -o FILE``/``-O`` (the URL's last segment), ``wget URL`` (``-O FILE``, ``-P DIR``),
    ``curl URL > FILE``, ``curl URL | tee FILE``: run later in the command (``sh FILE``, ``eval "$(cat FILE)"``),
    that is code nobody has read. Paths as written (``os.path.normpath``: ``./x`` is ``x``)."""
    into = ctx.state.downloaded
    for c in commands(toks):
        for w in (*c.words, *(r.target for r in c.redirs if r.target is not None)):
            for sub in w.subs if depth < 8 else []:
                record_downloads(sub, ctx, depth + 1)
        name = core_name(c)
        fed = any(core_name(p) in FETCHERS for p in _chain(c.pipe_in))
        if name not in FETCHERS and not fed:
            continue
        paths = [r.target.text for r in c.redirs if r.op in _OUTPUTS and r.target is not None]
        words = unwrap(c.words).words
        texts = [w.text for w in words[1:]]
        if name == "tee" and fed:
            paths += getopt(texts, "", frozenset(), "")[0]
        elif name in FETCHERS:
            paths += _fetched_to(name, texts)
        into.update(os.path.normpath(p) for p in paths if p and p not in ("-", "/dev/null", "/dev/stdout"))


def _fetched_to(name: str, texts: list[str]) -> list[str]:
    """The files downloader ``name ARGS`` saves what it fetches to (not its log files)."""
    if name == "wget":
        operands, opts, _ = getopt(texts, _WGET_VALUES, frozenset({"--output-document", "--directory-prefix"}))
        out = [v for o, v in opts if o in ("-O", "--output-document")]
        if out:
            return out
        prefix = next((v for o, v in opts if o in ("-P", "--directory-prefix")), "")
        return [os.path.join(prefix, _url_file(u)) for u in operands if "://" in u or "." in u]
    if name == "curl":
        operands, opts, _ = getopt(texts, _CURL_VALUES, frozenset({"--output", "--output-dir"}))
        out = [v for o, v in opts if o in ("-o", "--output")]
        if names(opts) & {"-O", "--remote-name", "--remote-name-all"}:
            where = next((v for o, v in opts if o == "--output-dir"), "")
            out += [os.path.join(where, _url_file(u)) for u in operands]
        return out
    _, opts, _ = getopt(texts, "o", frozenset({"--output"}))  # httpie, xh: -o/--output FILE
    return [v for o, v in opts if o in ("-o", "--output")]


def _url_file(url: str) -> str:
    """The file name a URL is saved under (its last path segment; ``index.html`` when there is none)."""
    path = url.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    return path.rsplit("/", 1)[-1] if "/" in path and not path.endswith("/") else "index.html"


def run_downloaded(word: Word, shown: str, ctx: Ctx) -> str | None:
    """The deny when ``word`` (a script run) is a file the command downloads to first."""
    if not ctx.state.downloaded or not was_downloaded(word, ctx):
        return None
    return ctx.hit(
        "exec.download",
        shown,
        (
            f"`{shown}` runs {word.text[:60]}, a file this same command downloads first: code nobody has read, "
            f"so {POLICY} blocks it. Download the file in one command, read it, then run it in another."
        ),
    )


def check_program_files(name: str, args: list[Word], shown: str, ctx: Ctx) -> str | None:
    """``awk -f <(curl ...)``, ``sqlite3 -init <(curl ...)``, ``make -f``, ``node -r``... (``cmdnames.PROGRAM_FILES``):
    program text from a download, run as code."""
    from .cmdnames import PROGRAM_FILES

    shorts, longs = PROGRAM_FILES[name]
    for k, w in enumerate(args):
        text = w.text
        if text == "--":
            break
        value: Word | None = None
        if name == "expect" and not text.startswith("-"):
            value = w  # expect <(curl ...): its script
        elif text in longs or (len(text) == 2 and text[0] == "-" and text[1] in shorts) or _attached(text, longs):
            value = args[k + 1] if k + 1 < len(args) else None
        if value is not None and (run_downloaded(value, shown, ctx) or downloaded_file(value, ctx)):
            return ctx.hit("exec.download", shown, download_reason())
    return None


def _attached(text: str, longs: frozenset[str]) -> bool:
    """``--file=<(...)``, ``-f<(...)``: the lexer gives the substitution as the word after ``--file=``/``-f``."""
    return text.endswith("=") and text[:-1] in longs


def _chain(cmd: Cmd | None) -> list[Cmd]:
    out: list[Cmd] = []
    while cmd is not None and len(out) < 100:
        out.append(cmd)
        cmd = cmd.pipe_in
    return out


def piped_download(src: Word | Cmd | None, kind: str, ctx: Ctx) -> TypeGuard[Cmd]:
    """Whether a stdin ``(kind, src)`` (``stdin``) is a pipe from a download, anywhere up the pipeline."""
    return kind == "pipe" and isinstance(src, Cmd) and any(downloads(c, ctx) for c in _chain(src))


def stdin(cmd: Cmd | None) -> tuple[str, Word | Cmd | None]:
    """Where ``cmd`` reads stdin: ``("text", Word)`` (heredoc, here-string), ``("pipe", producer Cmd)``,
    ``("file", Word)`` or ``("none", None)``."""
    if cmd is None:
        return "none", None
    for r in reversed(cmd.redirs):
        if r.op in ("<<", "<<-"):
            return "text", r.body
        if r.op == "<<<":
            return "text", r.target
        if r.op in ("<", "<>", "<&") and r.target is not None:
            if r.target.procsub is not None:  # < <(curl ...)
                producers = commands(r.target.procsub)
                return ("pipe", producers[-1]) if producers else ("none", None)
            return "file", r.target
    if cmd.pipe_in is not None:
        return "pipe", cmd.pipe_in
    return "none", None


def stdin_text(kind: str, src: Word | Cmd | None) -> str | None:
    """The literal text on stdin (a heredoc, a here-string, ``echo``/``printf`` or ``cat <<EOF`` piped in), or None."""
    if kind == "text" and isinstance(src, Word):
        return src.text
    if kind != "pipe" or not isinstance(src, Cmd):
        return None
    u = unwrap(src.words)
    name = base(u.words[0].text) if u.words and not u.strings else ""
    if name in ("echo", "printf") and all(w.literal for w in u.words[1:]):
        return printed(name, [w.text for w in u.words[1:]])
    if name == "cat" and len(u.words) == 1:
        kind, body = stdin(src)
        if kind == "text" and isinstance(body, Word):
            return body.text
    return None


def check_program(kind: str, src: Word | Cmd | None, shell: str, ctx: Ctx, transform: object = None) -> str | None:
    """Check the program text a shell (or ``at``, ``crontab``: ``transform`` maps the text to commands) reads."""
    part = shell
    if kind == "text" and isinstance(src, Word):
        reason = fetch_in_subs([src], part, ctx)
        if reason:
            return reason
    if kind == "file" and isinstance(src, Word) and src.text not in ("/dev/null", "/dev/zero"):
        return ctx.hit(
            "exec.unseen",
            f"{shell} < {src.text}",
            (
                f"`{shell} < {src.text}` runs commands from a file that hookgate cannot see, so {POLICY} blocks it. "
                "Run the commands directly instead, or ask the user."
            ),
        )
    if piped_download(src, kind, ctx):
        return ctx.hit("exec.download", f"{show(src.words, src.redirs, 80)} | {shell}", download_reason())
    if (
        kind == "pipe"
        and isinstance(src, Cmd)
        and src.words
        and base(src.words[0].text) == "cat"
        and len(src.words) == 1
        and stdin(src)[0] == "text"
    ):
        body = stdin(src)[1]
        reason = fetch_in_subs([body], part, ctx) if isinstance(body, Word) else None
        if reason:
            return reason
    text = stdin_text(kind, src)
    if text is not None:
        return ctx.check_text(transform(text) if callable(transform) else text)
    if kind != "pipe" or not isinstance(src, Cmd):
        return None
    producer = show(src.words, src.redirs, 80)
    return ctx.hit(
        "exec.unseen",
        f"{producer} | {shell}",
        (
            f"Piping the output of `{producer}` into `{shell}` runs commands that hookgate cannot see, so {POLICY} "
            "blocks it. Run the commands directly instead."
        ),
    )


def _check_rcfile(shell: str, option: str, file: Word, ctx: Ctx) -> str | None:
    """``--rcfile FILE``: an interactive bash runs FILE first, text hookgate cannot see (``<(echo …)``: that text)."""
    if file.text in ("/dev/null", "/dev/zero"):
        return None
    if file.procsub is not None:
        producers = commands(file.procsub)
        text = stdin_text("pipe", producers[-1]) if producers else None
        if text is not None:
            return ctx.check_text(text)
    shown = f"{shell} {option} {file.text}"[:80]
    return ctx.hit(
        "exec.unseen",
        shown,
        (
            f"`{shown}` makes the shell read and run the file {file.text[:60]} first, program text hookgate cannot "
            f"see, so {POLICY} blocks it. Run the file's commands directly, or ask the user."
        ),
    )


def check_shell(name: str, args: list[Word], cmd: Cmd | None, ctx: Ctx, u: Unwrapped | None = None) -> str | None:
    """A shell: ``-c SCRIPT [arg0 args...]``, a script operand, or a program on stdin. ``u``: the wrapper chain
    that runs it (``xargs``/``parallel`` feed it stdin items; its own stdin is then empty)."""
    i, inline, from_stdin = 0, False, False
    while i < len(args):
        a = args[i].text
        if a in ("--", "-"):
            i += 1
            break
        if a.startswith("--"):
            if a in ("--rcfile", "--init-file") and i + 1 < len(args):  # bash --rcfile <(echo 'rm -rf ~') -i
                reason = _check_rcfile(name, a, args[i + 1], ctx)
                if reason:
                    return reason
            i += 2 if a in ("--rcfile", "--init-file") else 1
            continue
        if a[:1] in "-+" and len(a) > 1:
            inline = inline or "c" in a[1:]
            from_stdin = from_stdin or "s" in a[1:]
            i += 1 + sum(ch in "oO" for ch in a[1:])  # -o pipefail, -O extglob take a value
            continue
        break
    operands = args[i:]
    feeder = u is not None and u.feeder
    if inline:
        if feeder and u is not None and (not operands or (u.replace and u.replace in operands[0].text)):
            return _pasted(operands[0].text if operands else None, u.replace, cmd, name, ctx)  # stdin becomes code
        if not operands:
            return None
        script = operands[0]
        reason = fetch_in_subs(operands[:1], show([Word(name), *args]), ctx)
        if reason:
            return reason
        values: list[str | None] = [w.text if w.literal else None for w in operands[1:]]
        if feeder:
            values.append(None)
        bound = bind_positionals(script.text, [_UNKNOWN if v is None else v for v in values])
        from .stdin import stdin_source  # echo 'rm -rf ~' | sh -c 'sh': the program reads the shell's stdin

        return ctx.check_text(script.text if bound is None else bound, None if feeder else stdin_source(cmd))
    if feeder:
        return None  # xargs sh script.sh args...: runs a script file
    if operands and not from_stdin:
        script = operands[0]
        if script.procsub is not None:  # bash <(curl ...)
            producers = commands(script.procsub)
            return check_program("pipe", producers[-1], name, ctx) if producers else None
        if script.text not in STDIN_FILES:  # runs a script file (curl -o x.sh URL && sh x.sh: a download)
            return run_downloaded(script, show([Word(name), *args], limit=80), ctx) if ctx.state.downloaded else None
    kind, src = stdin(cmd)
    return check_program(kind, src, name, ctx)


def _pasted(script: str | None, replace: str | None, cmd: Cmd | None, shell: str, ctx: Ctx) -> str | None:
    """``... | xargs -I{} sh -c 'SCRIPT {}'``: each stdin item is pasted into the script (or is the script)."""
    kind, src = stdin(cmd)
    text = stdin_text(kind, src)
    if text is None:
        return check_program(kind, src, f"xargs {shell} -c", ctx)
    for item in [line for line in text.split("\n") if line.strip()] or [""]:
        program = item if script is None else script.replace(replace or "{}", item)
        reason = ctx.check_text(program)
        if reason:
            return reason
    return None


def check_source(name: str, args: list[Word], cmd: Cmd | None, ctx: Ctx) -> str | None:
    if not args:
        return None
    if args[0].procsub is not None:
        producers = commands(args[0].procsub)
        if len(producers) == 1 and shell_setup(producers[0]):
            return None  # source <(kubectl completion bash): as eval "$(kubectl completion bash)" passes
        return check_program("pipe", producers[-1], name, ctx) if producers else None
    if args[0].text in STDIN_FILES:
        kind, src = stdin(cmd)
        return check_program(kind, src, name, ctx)
    return run_downloaded(args[0], f"{name} {args[0].text}"[:80], ctx)  # curl -o x URL; source x


_SETUP_SUBCOMMANDS = frozenset({"completion", "completions", "hook", "init", "activate", "shellenv", "env"})
_SETUP_SHELLS = frozenset({"bash", "zsh", "sh", "fish", "ksh", "-"})
# commands that print a file or their arguments (cat completion: the file `completion`), never a tool's setup
_PRINTERS = frozenset(
    {
        *("cat", "tac", "head", "tail", "less", "more", "nl", "zcat", "bzcat", "xzcat", "zstdcat", "gzip", "gunzip"),
        *("base64", "xxd", "od", "rev", "sort", "uniq", "tr", "cut", "grep", "egrep", "fgrep", "rg", "sed", "gsed"),
        *("awk", "gawk", "mawk", "echo", "printf", "dd", "tee", "strings", "column", "paste", "fold", "fmt", "iconv"),
        *("jq", "yq", "xargs", "find", "ls", "eval", "source", ".", "exec", "openssl", "gpg", "tar", "unzip"),
    }
)


def shell_setup(cmd: Cmd) -> bool:
    """Whether ``cmd`` is a tool printing its own shell completion or start-up code (``kubectl completion bash``,
    ``gh completion -s zsh``, ``direnv hook bash``, ``starship init bash``, ``pyenv init -``, ``brew shellenv``,
    ``mise activate bash``): a literal ``TOOL SUBCOMMAND [shell names, options]`` whose tool is no shell,
    interpreter, downloader or printer of files. Sourced, it runs what the tool prints, as ``eval "$(...)"``
    does (which passes too)."""
    from .cmdnames import SHELLS, interpreter_family

    if cmd.pipe_in is not None or any(r.op.startswith("<") for r in cmd.redirs):
        return False
    u = unwrap(cmd.words)
    words = u.words
    if u.strings or u.feeder or len(words) < 2 or not all(w.literal for w in words):
        return False
    name = base(words[0].text)
    return (
        words[1].text in _SETUP_SUBCOMMANDS
        and all(w.text.startswith("-") or w.text in _SETUP_SHELLS for w in words[2:])
        and name not in _PRINTERS
        and name not in SHELLS
        and name not in FETCHERS
        and interpreter_family(name) is None
    )


def check_interpreter(family: str, args: list[Word], cmd: Cmd | None, ctx: Ctx, shown: str) -> str | None:
    """An interpreter: its inline program (one-liner) checked through ``interp``, a program read from a
    download denied, a heredoc program checked like a one-liner."""
    inline, module, with_value, attached, long_inline, long_value = _INTERPRETERS[family]
    codes: list[str] = []
    code_words: list[Word] = []  # the words the inline programs come from (python3 -c "$(curl ...)")
    i = 0
    while i < len(args):
        a = args[i].text
        if a == "-":
            break  # the program is stdin
        if a == "-encoding" and family in ("tclsh", "wish"):  # tclsh -encoding NAME [FILE]
            i += 2
            continue
        if a == "--":
            i += 1
            break
        if a.startswith("--"):
            opt, eq, value = a.partition("=")
            if opt in long_inline:
                codes.append(value if eq else (args[i + 1].text if i + 1 < len(args) else ""))
                code_words += args[i : i + (1 if eq else 2)]
                i += 1 if eq else 2
                continue
            i += 2 if opt in long_value and not eq else 1
            continue
        if a.startswith("-") and len(a) > 1:
            step = 1
            for k in range(1, len(a)):
                ch = a[k]
                if ch in module:  # python -m module: stdin is data; hookgate's CLI and pip are checked
                    value = a[k + 1 :] or (args[i + 1].text if i + 1 < len(args) else "")
                    rest = [w.text for w in args[i + (1 if a[k + 1 :] else 2) :]]
                    if is_hookgate_module(value):
                        return check_hookgate(rest, shown, ctx)
                    return check_pip("pip", rest, shown, ctx) if value == "pip" else None
                if ch in inline:
                    value = a[k + 1 :]
                    if not value and i + 1 < len(args):
                        value, step = args[i + 1].text, 2
                    codes.append(value)
                    code_words += args[i : i + step]
                    break
                if ch in with_value:
                    step = 1 if a[k + 1 :] else 2
                    break
                if ch in attached:
                    break
            i += step
            if codes and family in ("python", "pypy"):
                break  # python -c CODE args...: the rest is sys.argv
            continue
        break
    if codes:
        return fetch_in_subs(code_words, shown, ctx) or check_code(family, "\n".join(codes), shown, ctx)
    if i < len(args) and args[i].text != "-" and args[i].text not in STDIN_FILES:
        script = args[i]
        if family in ("python", "pypy") and is_hookgate_script(script.text):  # python .../gateway/cli/hookgate
            return check_hookgate([w.text for w in args[i + 1 :]], shown, ctx)
        if downloaded_file(script, ctx):  # python3 <(curl ...), curl -o x.py URL && python3 x.py
            return run_downloaded(script, shown, ctx) or ctx.hit("exec.download", shown, download_reason())
        return None
    kind, src = stdin(cmd)
    if kind == "file" and isinstance(src, Word):  # curl -o x.py URL; python3 < x.py
        reason = run_downloaded(src, shown, ctx)
        if reason:
            return reason
    if piped_download(src, kind, ctx):
        return ctx.hit("exec.download", shown, download_reason())
    text = stdin_text(kind, src)
    if text and family == "tclsh" and ("spawn" in text or "send" in text or "system" in text):
        from .expect import expect_runs  # echo 'spawn rm -rf ~' | expect (as tclsh, its program on stdin)

        for run in expect_runs(text):
            reason = ctx.check_text(run)
            if reason:
                return reason
    return check_code(family, text, shown, ctx) if text else None


_DENO_VALUES = frozenset(
    {
        "--ext",
        "--import-map",
        "--config",
        "--cert",
        "--location",
        "--seed",
        "--log-level",
        "--preload",
        "--import",
        "--v8-flags",
        "--eval",
        "--eval-file",
    }
)


def check_deno(args: list[Word], cmd: Cmd | None, ctx: Ctx, shown: str) -> str | None:
    """Deno: ``deno eval [OPTIONS] CODE``, ``deno repl --eval CODE`` and ``deno run -`` (the program on stdin)
    checked like a ``node -e`` one-liner, with Deno's own calls (``Deno.remove``, ``Deno.Command``...)."""
    texts = [w.text for w in args]
    _, _, stop = getopt(texts, "L", frozenset({"--log-level"}), permute=False)  # global options
    sub, rest = (texts[stop], texts[stop + 1 :]) if stop < len(texts) else ("", [])
    _, opts, at = getopt(rest, "cL", _DENO_VALUES, permute=False)
    if sub == "eval":
        return check_code("deno", rest[at], shown, ctx) if at < len(rest) else None
    if sub == "repl":
        codes = [v for o, v in opts if o == "--eval"]
        return check_code("deno", "\n".join(codes), shown, ctx) if codes else None
    if sub == "run" and at < len(rest) and downloaded_file(args[stop + 1 + at], ctx):  # deno run <(curl ...)
        return ctx.hit("exec.download", shown, download_reason())
    if sub == "run" and at < len(rest) and rest[at] == "-":
        kind, src = stdin(cmd)
        if piped_download(src, kind, ctx):
            return ctx.hit("exec.download", shown, download_reason())
        text = stdin_text(kind, src)
        return check_code("deno", text, shown, ctx) if text else None
    return None


def check_scheduler(name: str, args: list[Word], cmd: Cmd | None, ctx: Ctx) -> str | None:
    """``at``/``batch`` run the commands on stdin later; ``crontab -`` installs the jobs on stdin."""
    texts = [w.text for w in args]
    if name == "crontab":
        operands, opts, _ = getopt(texts, "uc", frozenset())
        if names(opts) & {"-l", "-r", "-e", "-V"} or (operands and operands[0] != "-"):
            return None  # lists, removes or edits the table, or installs a file
        kind, src = stdin(cmd)
        return check_program(kind, src, "crontab", ctx, cron_commands)
    _, opts, _ = getopt(texts, "qftM", frozenset())
    if names(opts) & {"-f", "-l", "-d", "-r", "-c", "-V"}:
        return None  # a job file, or job management
    kind, src = stdin(cmd)
    return check_program(kind, src, name, ctx)


def cron_commands(table: str) -> str:
    """The commands of a crontab: each job line without its schedule (five fields, or ``@daily``...)."""
    out = []
    for line in table.split("\n"):
        line = line.strip()
        if not line or line.startswith("#") or re.match(r"[A-Za-z_][A-Za-z0-9_]*\s*=", line):
            continue
        fields = line.split(None, 1 if line.startswith("@") else 5)
        out.append(fields[-1] if len(fields) > (1 if line.startswith("@") else 5) else "")
    return "\n".join(out)
