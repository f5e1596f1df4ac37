"""Shell commands and deletes in interpreter one-liners (``python -c``, ``perl -e``, ``node -e``, ``ruby -e``...).

String literals only: the guard stays a guard rail, not an interpreter. A call that runs a shell string
(``os.system('...')``, ``subprocess.run('...', shell=True)``, perl ``system '...'`` and backticks, node
``execSync('...')``, ruby ``system '...'``, backticks and ``%x(...)``) is checked as a shell command; one that
runs an argv list (``subprocess.run(['rm', '-rf', '/'])``, ``spawn('rm', ['-rf', '/'])``) as that command
line; a native delete (``shutil.rmtree``, also imported under another name or reached with ``getattr``, its
path a keyword or a ``Path('...')``; ``FileUtils.rm_rf``, ``fs.rmSync(p, {recursive: true})``) as
``rm -rf`` of its path, ``os.remove``/``unlink`` as ``rm``, and a write (``open(p, 'w')``) as a write, so the
same areas and protected files apply. Interpolation (``f'{x}'``, ``"#{x}"``, ``"$x"``) is a run-time value.
Deno one-liners get node's calls and Deno's own (``Deno.remove``, ``new Deno.Command``, ``Deno.run``,
``Deno.writeTextFile``); Tcl programs their ``exec``, ``open "|..."`` and ``file delete [-force]`` commands.
"""

from __future__ import annotations

import re

from .context import Ctx
from .lexer import Unanalysable, Word
from .selfguard import check_code_literals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_Q = "'\"`"
# where a Tcl command starts: a line, after ; [ or {, behind eval/uplevel (eval "...", eval [list ...]), as ::name
_TCL_AT = (
    r"(?:^|[;\n\[{])[ \t]*(?:(?:::)?(?:eval|uplevel(?:[ \t]+#?\d+)?)[ \t]+(?:[\"{]|\[(?:::)?list[ \t]+)?[ \t]*)*"
    r"(?:::)?"
)
# family: [(call pattern, kind)]; kinds: shell (a shell string), exec (shell string, or argv when a list or several
# strings), argv (argv from the first list, else the string arguments), rm / rmrf / rmdir / write (a native op)
_CALLS: dict[str, list[tuple[str, str]]] = {
    "python": [
        (r"\bos\.(?:system|popen)\s*\(", "shell"),
        (r"\bcommands\.getoutput\s*\(", "shell"),
        (r"\bsubprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)\s*\(", "exec"),
        (r"\b(?:check_call|check_output|Popen|getoutput|getstatusoutput)\s*\(", "exec"),
        (r"\b\w+\.(?:run|call)\s*\((?=\s*\[)", "exec"),
        (r"\bos\.(?:exec|spawn)[lvpe]{1,3}\s*\(", "argv"),
        (r"\bpty\.spawn\s*\(", "exec"),
        (r"\bshutil\.rmtree\s*\(", "rmrf"),
        (r"\bos\.(?:remove|unlink)\s*\(", "rm"),
        (r"\bos\.(?:rmdir|removedirs)\s*\(", "rmdir"),
        (r"\bPath\s*\(", "path"),
        (r"\bopen\s*\(", "open"),
        (r"\b(?:os\.(?:rename|replace|renames)|shutil\.move)\s*\(", "mv"),
        (r"\bshutil\.(?:copy|copy2|copyfile|copytree)\s*\(", "cp"),
    ],
    "perl": [
        (r"\b(?:system|exec)\b\s*\(?", "exec"),
        (r"`", "backtick"),
        (r"\bqx\s*[({\[/|!]", "qx"),
        (r"\b(?:rmtree|remove_tree)\s*\(?", "rmrf"),
        (r"\bunlink\b\s*\(?", "rm"),
        (r"\bopen\b\s*\(?", "popen"),
        (r"\brename\b\s*\(?", "mv"),
    ],
    "node": [
        (r"\bexec(?:Sync)?\s*\(", "shell"),
        (r"\b(?:spawn|spawnSync|execFile|execFileSync)\s*\(", "argv"),
        (r"\b(?:rmSync|rmdirSync|rm|rmdir)\s*\(", "rmnode"),
        (r"\b(?:unlinkSync|unlink)\s*\(", "rm"),
        (r"\b(?:writeFileSync|appendFileSync|writeFile|appendFile|createWriteStream)\s*\(", "write"),
        (r"\b(?:renameSync|rename)\s*\(", "mv"),
        (r"\b(?:copyFileSync|copyFile|cpSync)\s*\(", "cp"),
    ],
    "ruby": [
        (r"\b(?:system|exec|spawn)\b\s*\(?", "exec"),
        (r"`", "backtick"),
        (r"%x[({\[]", "qx"),
        (r"\b(?:IO\.popen|Open3\.(?:capture2e?|capture3|popen2e?|popen3))\s*\(?", "exec"),
        (r"\bFileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry|remove_entry_secure|rmtree)\b\s*\(?", "rmrf"),
        (r"\b(?:FileUtils\.(?:rm|rm_f|remove)|File\.(?:delete|unlink))\b\s*\(?", "rm"),
        (r"\bFile\.write\s*\(", "write"),
        (r"\bFile\.open\s*\(", "open"),
        (r"\b(?:File\.rename|FileUtils\.(?:mv|move))\b\s*\(?", "mv"),
        (r"\bFileUtils\.(?:cp|cp_r|copy|copy_file|install)\b\s*\(?", "cp"),
    ],
    "php": [
        (r"\b(?:system|exec|shell_exec|passthru|popen|proc_open)\s*\(", "shell"),
        (r"`", "backtick"),
        (r"\bunlink\s*\(", "rm"),
        (r"\bfile_put_contents\s*\(", "write"),
        (r"\bfopen\s*\(", "open"),
        (r"\brename\s*\(", "mv"),
        (r"\bcopy\s*\(", "cp"),
    ],
    "deno": [
        (r"\bDeno\.(?:removeSync|remove)\s*\(", "rmnode"),
        (r"\bnew\s+Deno\.Command\s*\(", "denocmd"),
        (r"\bDeno\.run\s*\(", "denorun"),
        (r"\bDeno\.(?:writeTextFileSync|writeTextFile|writeFileSync|writeFile|truncateSync|truncate)\s*\(", "write"),
    ],
    "tcl": [
        (_TCL_AT + r"exec[ \t]+", "tclexec"),
        (_TCL_AT + r"file[ \t]+de(?:l(?:e(?:te?)?)?)?[ \t]+", "tcldelete"),  # file del: a unique prefix
        (_TCL_AT + r"open[ \t]+(?=[\"{]?\|)", "tclpipe"),
    ],
    "lua": [(r"\b(?:os\.execute|io\.popen)\s*\(?", "shell"), (r"\bos\.remove\s*\(", "rm")],
    "Rscript": [(r"\bsystem\s*\(", "shell"), (r"\bunlink\s*\(", "rm")],
    "awk": [(r"\bsystem\s*\(", "shell"), (r"\bprintf?\b[^;}\n|>]*>>?[ \t]*(?=\")", "write")],  # print > "f"
    "osascript": [(r"\bdo\s+shell\s+script\s+", "shell")],
}
_CALLS["deno"] = [*_CALLS["node"], *_CALLS["deno"]]  # deno runs node's modules too (node:fs, node:child_process)
_FAMILIES = {"pypy": "python", "nodejs": "node", "bun": "node", "tclsh": "tcl", "wish": "tcl", "jimsh": "tcl"}
_COMPILED: dict[str, re.Pattern[str]] = {}
_CLOSERS = {"(": ")", "{": "}", "[": "]", "<": ">"}


def _pattern(family: str) -> re.Pattern[str]:
    pattern = _COMPILED.get(family)
    if pattern is None:
        alternatives = "|".join(f"(?P<k{n}>{p})" for n, (p, _) in enumerate(_CALLS[family]))
        pattern = _COMPILED[family] = re.compile(alternatives)
    return pattern


def check_code(family: str, code: str, shown: str, ctx: Ctx) -> str | None:
    """Check the program text of ``shown`` (an interpreter one-liner of ``family``; see the module docstring)."""
    family = _FAMILIES.get(family, family)
    if family not in _CALLS:
        return None
    calls = _CALLS[family]
    if "\\'" in code or '\\"' in code:  # exec("os.system(\\"rm -rf ~\\")"): read the nested program too
        code = code + "\n" + code.replace("\\'", "'").replace('\\"', '"')
    source = code  # literals as written, for the alias scan below
    if family == "python" and "rmtree" in code:  # import shutil as s; s.rmtree(...), from shutil import rmtree
        code = _python_rmtree(code)
    if "ome" in code or "HOME" in code:  # shutil.rmtree(pathlib.Path.home()): the calls see a known home
        code = re.sub(_HOME_ARG, "'~'", code)
    for m in _pattern(family).finditer(code):
        kind = calls[int(next(k for k, v in m.groupdict().items() if v is not None)[1:])][1]
        reason = _check_call(kind, family, code, m.start(), m.end(), ctx)
        if reason:
            call = code[m.start() : m.start() + 60].split("\n", 1)[0]
            return f"`{shown[:80]}` runs `{call.strip()}`, which hookgate checks as a shell command: {reason}"
    return check_code_literals(source, shown, ctx) or _aliased(source, shown, ctx)


def _python_rmtree(code: str) -> str:
    """``code`` with the other spellings of ``shutil.rmtree(PATH)`` written as that one: the module or the
    function under an alias (``import shutil as s``, ``from shutil import rmtree as r``, ``from shutil import
    *``), ``getattr(shutil, 'rmtree')(...)``, the path as a keyword (``path='src'``) or wrapped in
    ``Path('src')``/``pathlib.Path('src')``. Text only: a name bound any other way stays unknown."""
    for alias in re.findall(r"\bimport\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*shutil\s+as\s+(\w+)", code):
        code = re.sub(rf"(?<![\w.]){re.escape(alias)}\s*\.\s*rmtree\b", "shutil.rmtree", code)
    imports = " ".join(re.findall(r"\bfrom\s+shutil\s+import\s+([^\n;]+)", code))
    names = set(re.findall(r"\brmtree\s+as\s+(\w+)", imports))
    if re.search(r"(?:^|[\s,(])(?:rmtree|\*)(?:\s*(?:$|[,)]))", imports):
        names.add("rmtree")
    for name in names:
        code = re.sub(rf"(?<![\w.]){re.escape(name)}\s*\(", "shutil.rmtree(", code)
    code = re.sub(r"\bgetattr\s*\(\s*shutil\s*,\s*(['\"])rmtree\1\s*\)\s*\(", "shutil.rmtree(", code)
    code = re.sub(r"\bshutil\.rmtree\s*\(\s*path\s*=\s*", "shutil.rmtree(", code)
    return re.sub(
        r"\bshutil\.rmtree\s*\(\s*(?:pathlib\s*\.\s*)?(?:Pure)?(?:Posix)?Path\s*\(\s*('[^'\n]*'|\"[^\"\n]*\")\s*\)",
        r"shutil.rmtree(\1",
        code,
    )


# expressions that compute the home directory, read as the literal '~' (compiled on first use)
_HOME_EXPR = (
    r"\"\$ENV\{\s*['\"]?HOME['\"]?\s*\}\"|\$ENV\{\s*['\"]?HOME['\"]?\s*\}"
    r"|(?:pathlib\.)?Path\.home\(\)|os\.path\.expanduser\(\s*['\"]~/?['\"]\s*\)"
    r"|os\.environ\s*\[\s*['\"]HOME['\"]\s*\]|os\.environ\.get\(\s*['\"]HOME['\"]\s*\)"
    r"|os\.getenv\(\s*['\"]HOME['\"]\s*\)|os\.path\.expandvars\(\s*['\"]\$HOME['\"]\s*\)"
    r"|(?:require\(\s*['\"](?:node:)?os['\"]\s*\)|\bos)\.homedir\(\)"
    r"|process\.env(?:\.HOME\b|\[\s*['\"]HOME['\"]\s*\])|\bENV\[\s*['\"]HOME['\"]\s*\]|\bDir\.home\b"
    r"|File\.expand_path\(\s*['\"]~['\"]\s*\)|Deno\.env\.get\(\s*['\"]HOME['\"]\s*\)"
)
_HOME_ARG = r"(?:" + _HOME_EXPR + r")(?=\s*[,)])"  # the whole argument: Path.home() / 'x' is somewhere else
# patterns, compiled on first use (re's cache)
_DANGEROUS_MODULES = r"\b(?:shutil|os|subprocess|child_process|fileutils|FileUtils|system|exec|qw)\b"
_LITERALS = (
    r"'([^'\\\n]{1,400})'|\"([^\"\\\n]{1,400})\""
    r"|\bqw\s*\(([^)]{1,400})\)|\bqw\s*\[([^\]]{1,400})\]|\bqw\s*\{([^}]{1,400})\}"
)


def _aliased(code: str, shown: str, ctx: Ctx) -> str | None:
    """A one-liner that reaches a module that deletes or runs commands (``import shutil as s``, ``from os import
    system``, ``require('child_process')``) under any alias: each string literal that is a destructive shell
    command, or a path holding the home directory or the project, counts as run or deleted."""
    if not re.compile(_DANGEROUS_MODULES).search(code):
        return None
    home, project = ctx.state.home(), ctx.state.project
    for m in re.compile(_LITERALS).finditer(code):
        text = next(g for g in m.groups() if g is not None).strip()
        reason = ctx.check_text(" ".join(text.split())) if " " in text else None
        if reason is None and text[:1] in ("/", "~"):
            path = home + text[1:] if text[:1] == "~" else text
            path = "/" + "/".join(p for p in path.split("/") if p and p != ".")
            if any(o == path or o.startswith(path.rstrip("/") + "/") for o in (home, project) if o):
                reason = ctx.check_argv([Word("rm"), Word("-rf"), Word(text)])
        if reason:
            return (
                f"`{shown[:80]}` imports a module that deletes or runs commands and holds `{text[:60]}`, which "
                f"hookgate checks as a command or delete target: {reason}"
            )
    return None


def _check_call(kind: str, family: str, code: str, start: int, end: int, ctx: Ctx) -> str | None:
    if kind.startswith("tcl"):
        return _check_tcl(kind, code, end, ctx)
    if kind == "backtick":
        close = code.find("`", end)
        return ctx.check_text(_interpolated(code[end:close], family)) if close > 0 else None
    if kind == "qx":
        opener = code[end - 1]
        close = code.find(_CLOSERS.get(opener, opener), end)
        return ctx.check_text(_interpolated(code[end:close], family)) if close > 0 else None
    args, _ = _arguments(code, end)
    values = [_value(a, family) for a in args]
    raw = ",".join(args)
    if kind == "path":  # pathlib: Path('x').unlink() / .rmdir() / .write_text()
        after = code[end:]
        close = _matching(code, end - 1) if code[end - 1] == "(" else -1
        method = (
            re.match(r"\)\s*\.\s*(unlink|rmdir|write_text|write_bytes|open)\b", code[close:]) if close > 0 else None
        )
        if not method or not values or not isinstance(values[0], str) or not after:
            return None
        kind = {"unlink": "rm", "rmdir": "rmdir"}.get(method.group(1), "write")
    if kind == "open":
        mode = values[1] if len(values) > 1 else None
        if not (isinstance(mode, str) and re.search(r"[wax+]", mode)):
            return None
        kind = "write"
    if kind == "popen":  # perl open(FH, "cmd |") / open(my $f, "-|", "cmd", ...)
        strings = [v for v in values[1:] if isinstance(v, str)]
        if len(values) >= 3 and isinstance(values[1], str) and values[1].strip() in ("-|", "|-"):
            rest = [v for v in values[2:] if isinstance(v, str)]
            if len(rest) != len(values) - 2:
                return None
            return ctx.check_text(rest[0]) if len(rest) == 1 else _run(rest, ctx)
        if strings and ("|" in strings[0][:1] or strings[0].rstrip().endswith("|")):
            return ctx.check_text(strings[0].strip().strip("|"))
        written = _perl_written(values)  # open(F, ">.env"), open(my $f, ">>", ".git/config")
        return ctx.check_argv([Word("tee"), Word(written)]) if written else None
    if kind in ("mv", "cp"):  # os.rename(src, dst), shutil.copy(src, dst): a move takes its source away
        if len(values) < 2 or not isinstance(values[0], str):
            return None
        target = values[1] if isinstance(values[1], str) else None
        if target is None and kind == "cp":
            return None
        return ctx.check_argv([Word(kind), Word(values[0]), Word(target or "/tmp/hookgate-unknown-target")])
    first = values[0] if values else None
    if kind == "shell":
        return ctx.check_text(first) if isinstance(first, str) else None
    if kind == "exec":
        if isinstance(first, list):
            return (
                _run(first, ctx)
                if not re.search(r"shell\s*[=:]\s*(?:True|true)", raw)
                else ctx.check_text(" ".join(first))
            )
        strings = [v for v in values if isinstance(v, str)]
        if family in ("perl", "ruby") and len(values) > 1 and len(strings) == len(values):
            return _run(strings, ctx)  # system('rm', '-rf', '/'): an argv list
        return ctx.check_text(first) if isinstance(first, str) else None
    if kind in ("denocmd", "denorun"):  # new Deno.Command('rm', {args: [...]}), Deno.run({cmd: ['rm', ...]})
        listed = _listed(raw, "args" if kind == "denocmd" else "cmd", family)
        argv = [first, *(listed or [])] if kind == "denocmd" and isinstance(first, str) else listed
        return _run(argv, ctx) if argv else None
    if kind == "argv":
        lists = [v for v in values if isinstance(v, list)]
        if family == "node" and isinstance(first, str):
            argv = [first, *(lists[0] if lists else [])]
            return ctx.check_text(" ".join(argv)) if re.search(r"shell\s*:\s*true", raw) else _run(argv, ctx)
        if lists:
            return _run(lists[0], ctx)
        strings = [v for v in values if isinstance(v, str)]
        return _run(strings[1:], ctx) if len(strings) > 1 else None
    if not isinstance(first, str):
        return None
    if kind == "rmnode":
        kind = "rmrf" if re.search(r"recursive\s*:\s*true", raw) else "rmdir" if "rmdir" in code[start:end] else "rm"
    words = {"rmrf": ["rm", "-rf"], "rm": ["rm"], "rmdir": ["rmdir"], "write": ["tee"]}[kind]
    return ctx.check_argv([Word(w) for w in words] + [Word(first)])


def _perl_written(values: Sequence[object]) -> str | None:
    """The file a perl ``open`` writes: ``open(F, ">.env")``, ``open(F, "+<x")``, ``open(my $f, ">>", "x")``."""
    mode = values[1] if len(values) > 1 and isinstance(values[1], str) else None
    if mode is None:
        return None
    if len(values) > 2:
        path = values[2]
        return path if isinstance(path, str) and re.match(r"\s*(?:\+?>|\+<)", mode) else None
    m = re.match(r"\s*(?:\+?>>?|\+<)\s*([^&\s].*?)\s*$", mode)
    return m.group(1) if m else None


def _listed(raw: str, key: str, family: str) -> list[str] | None:
    """The literal list of strings under ``key:`` in an options object (``{args: ['-rf', '/']}``), or None."""
    m = re.search(r"\b" + key + r"\s*:\s*\[", raw)
    close = _matching(raw, m.end() - 1) if m else -1
    value = _value(raw[m.end() - 1 : close + 1], family) if m and close > 0 else None
    return value if isinstance(value, list) else None


def _check_tcl(kind: str, code: str, end: int, ctx: Ctx) -> str | None:
    """Tcl: ``exec CMD ARGS`` (``|`` pipelines), ``open "|CMD ARGS"`` and ``file delete [-force] PATH...``
    (``-force``: whole directory trees, as ``rm -rf``)."""
    words = _tcl_words(code, end)
    if kind == "tclpipe":
        words = _tcl_words(words[0].text.lstrip("|"), 0) if words and words[0].text.startswith("|") else []
    while words and words[0].text.startswith("-") and kind != "tclpipe":  # exec -ignorestderr, file delete -force
        option = words.pop(0).text
        if option == "--":
            break
        if len(option) >= 2 and "-force".startswith(option):  # -forc: Tcl takes a unique prefix
            kind = "tclforce"
    if kind == "tcldelete" or kind == "tclforce":
        head = [Word("rm"), Word("-rf")] if kind == "tclforce" else [Word("rm")]
        return ctx.check_argv([*head, *words]) if words else None
    segment: list[Word] = []
    for w in [*words, Word("|")]:  # exec a | b: each command of the pipeline
        if w.text in ("|", "|&"):
            reason = ctx.check_argv(segment) if segment else None
            if reason:
                return reason
            segment = []
        elif not w.text.startswith(("<", ">", "2>")):  # redirections are not part of the command
            segment.append(w)
    return None


_TCL_MAX_WORDS = 1000  # words one Tcl command may hold; more is refused as unanalysable
_TCL_HOME = ("$env(HOME)", "$::env(HOME)", "${env(HOME)}", "${::env(HOME)}")


def _closing(code: str, i: int, opening: str, closing: str) -> int:
    """The index of the ``closing`` bracket that matches the ``opening`` one at ``code[i]`` (``len(code)``
    when it is never closed)."""
    depth, j, n = 0, i, len(code)
    while j < n:
        depth += (code[j] == opening) - (code[j] == closing)
        if depth == 0:
            break
        j += 1
    return j


def _tcl_words(code: str, i: int) -> list[Word]:
    """The Tcl words of the command starting at ``code[i]`` (to ``;``, a newline, ``]`` or ``}``): braces quote
    literally, ``"..."`` and bare words holding ``$`` or ``[`` are known only at run time (``$env(HOME)``: ``~``)."""
    words: list[Word] = []
    n = len(code)
    while True:
        if len(words) > _TCL_MAX_WORDS:
            raise Unanalysable(f"runs a Tcl command of more than {_TCL_MAX_WORDS} words, too many")
        while (i < n and code[i] in " \t") or code.startswith("\\\n", i):
            i += 2 if code[i] == "\\" else 1
        if i >= n or code[i] in ";\n]}":
            break
        expand = code.startswith("{*}", i) and i + 3 < n and code[i + 3] not in " \t;\n]}"
        i += 3 if expand else 0  # {*}{rm -rf ~}: the list's elements are words of the command
        if expand and code.startswith("[list", i) and code[i + 5 : i + 6] in (" ", "\t"):  # {*}[list rm -rf ~]
            j = _closing(code, i, "[", "]")
            words.extend(_tcl_words(code[i + 6 : j], 0))
            i = j + 1
            continue
        if code[i] == "{":
            j = _closing(code, i, "{", "}")
            text, literal, i = code[i + 1 : j], True, j + 1
        else:
            quoted = code[i] == '"'
            j = i + 1 if quoted else i
            while j < n and (code[j] != '"' if quoted else code[j] not in " \t;\n]}"):
                j += 2 if code[j] == "\\" else 1
            text, i = code[i + quoted : j], j + quoted
            for home in _TCL_HOME:
                text = text.replace(home, "~")
            literal = "$" not in text and "[" not in text
        for part in text.split() if expand and literal else [text]:
            w = Word(part)
            w.literal = literal
            words.append(w)
    return words


def _run(argv: list[str], ctx: Ctx) -> str | None:
    return ctx.check_argv([Word(a) for a in argv]) if argv else None


def _matching(code: str, i: int) -> int:
    """The index of the bracket closing ``code[i]`` (quotes skipped), or -1."""
    opener, depth, j, n = code[i], 0, i, len(code)
    closer = _CLOSERS.get(opener, opener)
    while j < n:
        c = code[j]
        if c in _Q:
            end = _string_end(code, j)
            if end < 0:
                return -1
            j = end
            continue
        if c == "\\":
            j += 2
            continue
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return -1


def _string_end(code: str, j: int) -> int:
    q = code[j]
    if code.startswith(q * 3, j):
        end = code.find(q * 3, j + 3)
        return -1 if end < 0 else end + 3
    k = j + 1
    while k < len(code):
        if code[k] == "\\":
            k += 2
            continue
        if code[k] == q:
            return k + 1
        k += 1
    return -1


def _arguments(code: str, end: int) -> tuple[list[str], int]:
    """The raw top-level arguments of the call whose name ends at ``end`` (``(`` already read, or a bare
    perl/ruby argument list up to ``;``/newline)."""
    if code[end - 1] == "(":
        close = _matching(code, end - 1)
        stop = len(code) if close < 0 else close
        inner, start = code[end:stop], 0
    else:
        m = re.compile(r"[;\n}]").search(code, end)
        inner, start = code[end : m.start() if m else len(code)], 0
    args, depth, j = [], 0, 0
    while j < len(inner):
        c = inner[j]
        if c in _Q:
            k = _string_end(inner, j)
            j = len(inner) if k < 0 else k
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(inner[start:j])
            start = j + 1
        j += 1
    args.append(inner[start:])
    return [a.strip() for a in args if a.strip()], end


def _value(raw: str, family: str) -> str | list[str] | None:
    """A literal argument: a string, a list of strings (``[...]``, perl ``(...)``, ruby ``%w[...]``), or None."""
    if raw[:1] in "[(" and raw[-1:] in "])":
        items = _split(raw[1:-1])
        values = [_string(i, family) for i in items]
        return [v for v in values if v is not None] if all(v is not None for v in values) else None
    if raw.startswith("%w") and len(raw) > 3:
        return raw[3:-1].split()
    return _string(raw, family)


def _split(inner: str) -> list[str]:
    return _arguments("(" + inner + ")", 1)[0]


def _string(raw: str, family: str) -> str | None:
    m = re.fullmatch(r"([rRbBuUfF]{0,2})('''|\"\"\"|'|\"|`)(.*)\2", raw, re.DOTALL)
    if m is None or (family != "python" and m.group(1)):
        return None
    prefix, quote, body = m.group(1).lower(), m.group(2), m.group(3)
    if "r" not in prefix:
        body = re.sub(r"\\(.)", lambda e: {"n": "\n", "t": "\t"}.get(e.group(1), e.group(1)), body)
    if "f" in prefix:
        body = re.sub(r"\{[^}]*\}", "$HOOKGATE_VALUE", body)
    if quote != "'" or family == "python":
        body = _interpolated(body, family)
    return body


def _interpolated(text: str, family: str) -> str:
    """Run-time values in an interpolating string, spelled as a shell variable (so they count as unknown)."""
    if family == "ruby":
        return re.sub(r"#\{[^}]*\}", "$HOOKGATE_VALUE", text)
    return text
