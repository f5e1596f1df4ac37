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


def define_functions(toks: list[Token], into: set[str]) -> None:
    """The names of the functions ``toks`` define (``NAME() {``, ``function NAME {``) added to ``into``."""
    for k in range(len(toks) - 1):
        a, b = toks[k], toks[k + 1]
        if isinstance(a, Word) and a.literal:
            if isinstance(b, Op) and b.op == "(" and k + 2 < len(toks):
                c = toks[k + 2]
                if isinstance(c, Op) and c.op == ")":
                    into.add(a.text)
            elif a.text == "function" and isinstance(b, Word) and b.literal:
                into.add(b.text.removesuffix("()"))


def define_aliases(args: list[str], into: dict[str, str]) -> None:
    """``alias NAME=VALUE ...``: each definition added to ``into``."""
    for a in args:
        name, eq, value = a.partition("=")
        if eq and name and not name.startswith("-"):
            into[name] = value


def check_defined(name: str, args: list[Word], cmd: Cmd | None, ctx: Ctx) -> str | None:
    """A call of a function or alias the command defined: the alias's value with the arguments, or (a
    function) the arguments as a command of their own."""
    alias = ctx.state.aliases.get(name)
    if alias is not None:
        import shlex  # here: a plain command never needs it

        return ctx.check_text(" ".join([alias, *(shlex.quote(w.text) for w in args)]))
    if not args:
        return None
    reason = ctx.deeper().check_argv(args, cmd)  # f(){ "$@"; }; f rm -rf ~
    if reason or not any(" " in w.text for w in args):
        return reason
    return ctx.check_text(" ".join(w.text for w in args))  # f(){ eval "$*"; }; f 'rm -rf ~'


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
