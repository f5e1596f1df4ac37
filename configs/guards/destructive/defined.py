"""Commands the command line defines for itself: shell functions (``f(){ "$@"; }; f rm -rf ~``), aliases
(``alias x=rm; x -rf ~``, also in ``bash -O expand_aliases -c $'alias x=rm\\nx -rf ~'``), and what a shell runs at
start-up or at each prompt (``BASH_ENV=x.sh bash -c ls``, ``ENV=x.sh sh``, ``PROMPT_COMMAND='...'``). A call of
a function defined in the command is checked as its arguments run as a command (the body may run ``"$@"``), an
alias as its value with the arguments appended."""

from __future__ import annotations

from .context import POLICY, Ctx
from .lexer import Op, Token, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .expand import Cmd


def define_functions(toks: list[Token], into: dict[str, list[Token]]) -> None:
    """The functions ``toks`` define (``NAME() {``, ``function NAME {``) added to ``into``: name -> the tokens of
    its ``{ ... }`` body (empty when the body is not a brace group hookgate can delimit)."""
    for k in range(len(toks) - 1):
        a, b = toks[k], toks[k + 1]
        if isinstance(a, Word) and a.literal:
            if isinstance(b, Op) and b.op == "(" and k + 2 < len(toks):
                c = toks[k + 2]
                if isinstance(c, Op) and c.op == ")":
                    into[a.text] = _body(toks, k + 3)
            elif a.text == "function" and isinstance(b, Word) and b.literal:
                at = k + 2
                opener = toks[at] if at + 1 < len(toks) else None
                if isinstance(opener, Op) and opener.op == "(":  # function g() {
                    at += 2
                into[b.text.removesuffix("()")] = _body(toks, at)


def _body(toks: list[Token], at: int) -> list[Token]:
    """The tokens inside the brace group (or the ``( ... )`` subshell: ``f() ( sh )``) that starts at
    ``toks[at]`` (newlines before it skipped), or []."""
    while at < len(toks) and (_is_op(toks[at], ";") or _is_op(toks[at], "\n")):  # the lexer reads a newline as ;
        at += 1
    first = toks[at] if at < len(toks) else None
    if isinstance(first, Op) and first.op == "(":
        depth = 0
        for end in range(at, len(toks)):
            tok = toks[end]
            if isinstance(tok, Op) and tok.op in ("(", ")"):
                depth += 1 if tok.op == "(" else -1
                if depth == 0:
                    return toks[at + 1 : end]
        return []
    if not (isinstance(first, Word) and first.literal and first.text == "{"):
        return []
    depth = 0
    for end in range(at, len(toks)):
        tok = toks[end]
        if isinstance(tok, Word) and tok.literal and tok.text in ("{", "}"):
            depth += 1 if tok.text == "{" else -1
            if depth == 0:
                return toks[at + 1 : end]
    return []


def _is_op(tok: Token, op: str) -> bool:
    return isinstance(tok, Op) and tok.op == op


_POSITIONAL = frozenset({"$@", "$*", "${@}", "${*}"})


def _called(body: list[Token], args: list[Word]) -> list[Token] | None:
    """``body`` with its positional parameters (``"$@"``, ``$*``, ``$1``...``$9``) replaced by the call's
    ``args``; None when the body uses none of them (then the call adds nothing to check)."""
    out: list[Token] = []
    used = False
    for tok in body:
        if isinstance(tok, Word) and not tok.literal and not tok.subs:
            text = tok.text
            if text in _POSITIONAL:
                out.extend(args)
                used = True
                continue
            if len(text) == 2 and text[0] == "$" and text[1] in "123456789":
                n = int(text[1])
                if n <= len(args):
                    out.append(args[n - 1])
                used = True
                continue
        out.append(tok)
    return out if used else None


def define_aliases(args: list[str], into: dict[str, str]) -> None:
    """``alias NAME=VALUE ...``: each definition added to ``into``."""
    for a in args:
        name, eq, value = a.partition("=")
        if eq and name and not name.startswith("-"):
            into[name] = value


def check_defined(name: str, args: list[Word], cmd: Cmd | None, ctx: Ctx) -> str | None:
    """A call of a function or alias the command defined: the alias's value with the arguments, or (a
    function) the arguments as a command of their own, and the function's body with the call's arguments
    in place of its positional parameters and reading what the call's stdin is (``curl x | f``, ``f() { sh;
    }``: the ``sh`` in the body reads the download)."""
    alias = ctx.state.aliases.get(name)
    if alias is not None:
        import shlex  # here: a plain command never needs it

        from .stdin import stdin_source  # alias f=sh; curl x | f: the alias's command reads the call's stdin

        return ctx.check_text(" ".join([alias, *(shlex.quote(w.text) for w in args)]), stdin_source(cmd))
    body = ctx.state.functions.get(name)
    source = None
    if body and cmd is not None:
        from .stdin import stdin_source  # curl x | f, f() { sh; }: the body reads f's stdin

        source = stdin_source(cmd)
    called = _called(body, args) if body and args else None
    if called is None and body and source is not None and _fed(ctx, name, body, source):
        called = body  # checked at its definition without stdin: again with what the call pipes in
    if called is not None:  # f() { command rm "$@"; }; f -rf ~: the body run with these arguments
        functions = ctx.state.functions
        functions[name] = []  # a call of itself inside the body is checked as its arguments only
        try:
            reason = ctx.state.token_checker(called, ctx.deeper(), source)
        finally:
            functions[name] = body or []
        if reason:
            return reason
    if not args:
        return None
    reason = ctx.deeper().check_argv(args, cmd)  # f(){ "$@"; }; f rm -rf ~
    if reason or not any(" " in w.text for w in args):
        return reason
    return ctx.check_text(" ".join(w.text for w in args))  # f(){ eval "$*"; }; f 'rm -rf ~'


def _fed(ctx: Ctx, name: str, body: list[Token], source: Cmd) -> bool:
    """Whether the body of ``name`` has not yet been checked reading ``source`` (then it is, once: nested
    functions each calling the next twice, all fed the same pipe, would otherwise be checked 2**n times)."""
    key = (name, id(body), id(source))
    fed = ctx.state.fed
    if key in fed:
        return False
    fed[key] = (body, source)  # kept, so that their ids are not reused during the check
    return True


_STARTUP_FILES = frozenset({"BASH_ENV", "ENV"})
_SHELLS = frozenset({"sh", "bash", "dash", "ksh", "mksh", "zsh", "ash", "posh", "yash"})


def check_startup(assigns: list[Word], core: list[Word], ctx: Ctx) -> str | None:
    """``PROMPT_COMMAND`` runs as a shell command; ``BASH_ENV`` (and ``ENV`` for a shell it starts) names a
    file a shell reads and runs first, text hookgate cannot see (its value is expanded: ``$(...)`` runs too)."""
    starts_shell = bool(core) and core[0].text.rsplit("/", 1)[-1] in _SHELLS
    for w in assigns:
        name, _, value = w.text.partition("=")
        name = name.rstrip("+")
        if name == "PROMPT_COMMAND" and value:
            reason = ctx.check_text(value)
            if reason:
                return reason
        elif name in _STARTUP_FILES and value and value != "/dev/null" and (name == "BASH_ENV" or starts_shell):
            reason = ctx.check_text("echo " + value)  # BASH_ENV='$(rm -rf ~)': bash expands it
            if reason:
                return reason
            shown = w.text if len(w.text) < 80 else w.text[:77] + "..."
            return ctx.hit(
                "exec.unseen",
                shown,
                (
                    f"`{shown}` makes the shell read and run the file {value} before anything else, program text "
                    f"hookgate cannot see, so {POLICY} blocks it. Run the file's commands directly, or ask the user."
                ),
            )
    return None


def fork_bomb(toks: list[Token], window: int = 64) -> bool:
    """A function that calls itself in a pipeline or in the background: ``:(){ :|:& };:``, ``f() ( f|f& )``,
    ``function f { f|f& }``."""
    for k in range(len(toks) - 2):
        a, b, c = toks[k], toks[k + 1], toks[k + 2]
        if isinstance(a, Word) and a.text == "function" and isinstance(b, Word):  # (its `()` is the next case)
            name, start = b.text, k + 2
        elif isinstance(a, Word) and isinstance(b, Op) and b.op == "(" and isinstance(c, Op) and c.op == ")":
            name, start = a.text, k + 3
        else:
            continue
        depth, calls_self, forks = 0, False, False
        for t in toks[start : start + window]:  # a fork bomb is short; this keeps the scan linear
            if (isinstance(t, Word) and t.text in ("{", "(")) or (isinstance(t, Op) and t.op == "("):
                depth += 1
            elif (isinstance(t, Word) and t.text == "}") or (isinstance(t, Op) and t.op == ")"):
                depth -= 1
                if depth <= 0:
                    break
            elif isinstance(t, Word) and t.text == name and depth > 0:
                calls_self = True
            elif isinstance(t, Op) and t.op in ("|", "|&", "&") and depth > 0:
                forks = True
        if calls_self and forks:
            return True
    return False
