"""hookgate's default shell guard, as a package: why a shell command must not run (or must be confirmed first).

Layout (each module one job): ``lexer`` tokenizes Bash (why hookgate has a second Bash parser: see its docstring),
``expand`` turns tokens into the simple commands bash runs (braces, ``$IFS``, wrappers, positional parameters;
``runners``: uv run, npm exec, nix develop -c...), ``rules`` dispatches each command to ``delete``, ``git``,
``writes``, ``tools`` (chmod -R, rsync --delete, tar --remove-files), ``programs`` (shells, interpreters through
``interp``, schedulers), ``optruns`` the commands tools run from options (tar, ssh, sed e), ``rawtext`` handles
text that cannot be tokenized, ``settings`` holds the rule list and the user's tuning, ``context`` one check's state,
``protected`` reaches the sibling ``secrets_guard`` (what counts as a secrets file or hook configuration). Standard
library only.

``analyse(command, cwd=None, settings=None) -> Finding | None`` gives the rule, its decision (deny/ask), the
reason and the part of the command that triggered it; ``check_command`` is the deny reason alone;
``analyse_powershell(script, cwd=None, settings=None)`` the same for a PowerShell script (Claude Code's
``PowerShell`` tool), read statement by statement as ``pwsh -c`` text is.
``configs/guards/shell_guard.py`` is the hook entry point (``check_event``, and ``python -I -S`` by path).
"""

from __future__ import annotations

from . import outside, rules
from .context import POLICY, Ctx, State
from .lexer import MAX_DEPTH, Lexer, ParseError, TooDeep, Unanalysable
from .settings import RULES, Finding, Settings, active, configure

MAX_LENGTH = 1_000_000  # longer commands are only scanned as raw text


def raw_scan(text: str, why: str, ctx: Ctx) -> str | None:
    """``rawtext.raw_scan``, imported on first use (only text that cannot be tokenized needs it)."""
    from .rawtext import raw_scan as scan

    return scan(text, why, ctx)


def regex_scan(text: str, lead: str, ctx: Ctx) -> str | None:
    """``rawtext.regex_scan``, imported on first use."""
    from .rawtext import regex_scan as scan

    return scan(text, lead, ctx)


__all__ = ["RULES", "Finding", "Settings", "analyse", "analyse_powershell", "check_command", "configure"]


MEMO_SIZE = 1024
"""At most this many remembered verdicts (``analyse``); the oldest goes first."""
MEMO_CHARS = 4096
"""Longer commands are not remembered."""
_MEMO: dict[tuple[str, str | None], tuple[Settings, Finding | None]] = {}
_PS_MEMO: dict[tuple[str, str | None], tuple[Settings, Finding | None]] = {}
"""``analyse_powershell``'s verdicts (a script is not the same text read as Bash)."""


def analyse(command: str, cwd: str | None = None, settings: Settings | None = None) -> Finding | None:
    """The deny (or, when nothing denies, the first ask) for ``command``, or None. Never raises.

    ``cwd``: the directory it runs in (the event's ``cwd``: the project, for build folders and ``find``);
    ``settings``: the tuning (default: what ``configure`` set; a ``Settings`` is read as it is when a
    check first uses it: change the tuning by configuring a new one).

    A verdict reached from the command's text alone (no read of the environment or the file system:
    ``outside``) is remembered per command, ``cwd`` and tuning (the last ``MEMO_SIZE``): an agent runs
    ``npm test`` and ``git status`` again and again, and the same text always gets the same verdict. A
    verdict that read ``$HOME``, ``$TMPDIR``, a symlink or the installed hookgate is found afresh each
    time."""
    return _memoised(_MEMO, command, cwd, settings or active(), False)


def analyse_powershell(script: str, cwd: str | None = None, settings: Settings | None = None) -> Finding | None:
    """``analyse`` for a PowerShell script (the ``PowerShell`` tool's ``command``): checked statement by
    statement, exactly as the script of ``pwsh -c SCRIPT`` is (``powershell.check_script``). Never raises."""
    return _memoised(_PS_MEMO, script, cwd, settings or active(), True)


def _memoised(
    memo: dict[tuple[str, str | None], tuple[Settings, Finding | None]],
    command: str,
    cwd: str | None,
    tuning: Settings,
    powershell: bool,
) -> Finding | None:
    key = (command, cwd)
    known = memo.get(key)
    if known is not None and known[0] is tuning:
        return known[1]
    before = next(outside.READS)
    found = _analyse(command, cwd, tuning, powershell)
    if next(outside.READS) == before + 1 and len(command) <= MEMO_CHARS:  # nothing read but the text
        _remember(key, tuning, found, memo)
    return found


def _remember(
    key: tuple[str, str | None],
    tuning: Settings,
    found: Finding | None,
    memo: dict[tuple[str, str | None], tuple[Settings, Finding | None]] = _MEMO,
) -> None:
    """Keep a verdict, the oldest going first past ``MEMO_SIZE``. Safe under threads (another thread may
    change the memo while this one evicts: then this one stops evicting, and the memo clears itself
    if it has grown past twice its size)."""
    try:
        while len(memo) >= MEMO_SIZE:
            memo.pop(next(iter(memo)), None)
    except (RuntimeError, StopIteration):  # changed during the iteration by another thread
        if len(memo) >= 2 * MEMO_SIZE:
            memo.clear()
    memo[key] = (tuning, found)


def _analyse(command: str, cwd: str | None, settings: Settings, powershell: bool = False) -> Finding | None:
    state = State(command, settings, rules.check_tokens, rules.check_argv, raw_scan)
    state.project = cwd
    ctx = Ctx(cwd, 0, state)
    reason: str | None
    try:
        if len(command) > MAX_LENGTH:
            reason = regex_scan(
                command, "hookgate cannot analyse this command (it is too long), and it appears to contain", ctx
            )
        elif powershell:
            from .powershell import check_script

            reason = check_script(command, " ".join(command.split())[:80], ctx)
        else:
            try:
                toks = Lexer(command, 0).run()
            except ParseError as exc:
                reason = raw_scan(command, str(exc), ctx)
            else:
                reason = rules.check_tokens(toks, ctx)
    except Unanalysable as exc:
        reason = ctx.hit(
            "parse.unanalysable",
            command[:80],
            f"The command {exc} for hookgate to check, so {POLICY} blocks it. Simplify the command.",
        )
    except (TooDeep, RecursionError):
        reason = ctx.hit(
            "parse.unanalysable",
            command[:80],
            (
                f"The command nests substitutions or `sh -c` more than {MAX_DEPTH} levels deep, too deep for hookgate "
                f"to check, so {POLICY} blocks it. Simplify the command."
            ),
        )
    except Exception as exc:  # a bug in this guard must not block ordinary commands: fall back to the raw scan
        state.denied, state.asks = None, []
        reason = regex_scan(
            command,
            f"hookgate cannot analyse this command (internal error {type(exc).__name__}), and it appears to contain",
            ctx,
        )
    if reason and state.denied is not None:
        found = state.denied
        return Finding(found.rule, "deny", reason, found.part)
    return state.asks[0] if state.asks else None


def check_command(command: str, cwd: str | None = None, settings: Settings | None = None) -> str | None:
    """Why ``command`` must not run (a sentence for the user), or None (also when it only needs asking)."""
    found = analyse(command, cwd, settings)
    return found.reason if found is not None and found.decision == "deny" else None
