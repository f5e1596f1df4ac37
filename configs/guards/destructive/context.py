"""The state of one check: where the command runs, how deep it nests, the tuning, and what matched so far.

Rules report a match through ``Ctx.hit(rule, part, reason)``: it applies the tuning (``off``, ``ask``,
``allowCommands``) and returns the reason only for a deny, so a rule can ``return ctx.hit(...)`` and the first
deny stops the check while asks are collected (a later deny still wins over an earlier ask). Rules that need
to check nested program text (``sh -c``, ``eval``, a one-liner's ``os.system``) call ``ctx.check_text`` and
``ctx.check_argv``, which the dispatcher (``rules.py``) plugs in: this module imports no rule.
"""

from __future__ import annotations

import os
import re
import time

from .lexer import MAX_DEPTH, Lexer, ParseError, TooDeep, Unanalysable
from .outside import read as read_outside
from .settings import Finding, Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .expand import Cmd
    from .lexer import Token, Word

POLICY = "hookgate's default policy"
BUDGET = 2.0
"""Seconds one check may take: past them the command is unanalysable (denied), checked where each simple
command and each nested program text is checked, so no command holds the hook past the host's timeout
(which lets the call through)."""
_BLOCKS = POLICY + r" blocks (?:it|that|`[^`]*`)"  # compiled on first use (only when a rule is tuned)


def worded(reason: str, decision: str) -> str:
    """``reason`` saying what ``decision`` does: a rule tuned to ask says "asks first" where its reason said
    "blocks it", a rule tuned to deny "blocks it" where it said "asks first"."""
    if decision == "ask" and POLICY + " blocks" in reason:
        reason = re.sub(_BLOCKS, POLICY + " asks first", reason)
        return reason.replace(POLICY + " blocks ", POLICY + " asks first about ")
    if decision == "deny" and POLICY + " asks first" in reason:
        return reason.replace(POLICY + " asks first", POLICY + " blocks it")
    return reason


class State:
    """What one ``check_command`` call shares across nesting levels."""

    __slots__ = (
        "_areas",
        "_cd",
        "_home",
        "_tmpdir",
        "aliases",
        "argv_checker",
        "asks",
        "command",
        "deadline",
        "denied",
        "downloaded",
        "fed",
        "functions",
        "git_aliases",
        "part",
        "positionals",
        "project",
        "raw_scan",
        "redirected",
        "settings",
        "token_checker",
        "variables",
    )

    def __init__(
        self,
        command: str,
        settings: Settings,
        token_checker: Callable[[list[Token], Ctx, Cmd | None], str | None],
        argv_checker: Callable[[list[Word], Cmd | None, Ctx], str | None],
        raw_scan: Callable[[str, str, Ctx], str | None],
    ) -> None:
        self.command = command
        self.settings = settings
        self.token_checker = token_checker
        self.argv_checker = argv_checker
        self.raw_scan = raw_scan
        self.asks: list[Finding] = []
        self.denied: Finding | None = None
        self._cd: bool | None = None
        self.part: str | None = None  # the simple command being judged, when a rule needs where it stands
        self._tmpdir: str | None = None
        self._home: str | None = None
        self._areas: tuple[list[str], list[str]] | None = None
        self.functions: dict[str, list[Token]] = {}  # functions the command defines: name -> body tokens
        self.downloaded: set[str] = set()  # files the command writes a download to (curl -o x; sh x): programs
        self.fed: dict[tuple[str, int, int], tuple[list[Token], Cmd]] = {}  # function bodies checked with a stdin
        self.aliases: dict[str, str] = {}  # aliases it defines (alias x=rm; x -rf ~)
        self.git_aliases: dict[str, str] = {}  # git aliases it defines (git config alias.p 'push -f'; git p)
        self.variables: dict[str, list[str]] = {}  # variables it sets (x='rm -rf ~'; eval "$x"): .variables
        self.positionals: list[list[str]] = []  # what each `set -- ARGS` in it makes $1, $@...: .variables
        self.project: str | None = None  # the event's cwd: the project, whatever directory a command moves to
        self.redirected: bool | None = None
        self.deadline = time.monotonic() + BUDGET

    def on_time(self) -> None:
        """Raise ``Unanalysable`` once the check has taken longer than ``BUDGET`` seconds (it counts as a read
        from outside the text: a verdict that depends on the machine's speed is not remembered)."""
        if time.monotonic() > self.deadline:
            read_outside()
            raise Unanalysable(f"takes longer than {BUDGET:g} s, too long")

    def areas(self) -> tuple[list[str], list[str]]:
        """``(temp roots, allowPaths)``, absolute and normalised (``$TMPDIR`` as ``tmpdir()``; unset: left out)."""
        if self._areas is None:
            tmpdir = self.tmpdir()
            roots = [
                os.path.normpath(tmpdir if r in ("$TMPDIR", "${TMPDIR}") else r)
                for r in self.settings.temp_roots
                if r not in ("$TMPDIR", "${TMPDIR}") or tmpdir
            ]
            self._areas = roots, self.settings.resolved_allow_paths()
        return self._areas

    def home(self) -> str:
        """The home directory (``~``), normalised."""
        if self._home is None:
            read_outside()
            self._home = os.path.expanduser("~").rstrip("/") or "/"
        return self._home

    def changes_directory(self) -> bool:
        """Whether the command may ``cd``/``pushd`` somewhere first (relative paths then mean something else)."""
        if self._cd is None:
            self._cd = re.compile(_CD).search(self.command) is not None
        return self._cd

    def changes_directory_before(self, part: str | None) -> bool:
        """Whether a ``cd``/``pushd`` outside a subshell comes before ``part`` (the simple command as written):
        ``rm -rf build && mkdir build && cd build`` and ``(cd docs && make) && rm -rf dist`` do not count. When
        ``part`` cannot be found in the command text, any ``cd`` counts."""
        if not self.changes_directory():
            return False
        text = self.command
        while True:  # a cd inside ( ... ) or $( ... ) leaves the outer directory alone, but counts inside
            for m in re.compile(_SUBSHELL).finditer(text):
                group = m.group(0)
                at = group.rfind(part) if part else -1
                if at >= 0 and re.compile(_CD).search(group[:at]):
                    return True  # ( cd ..; rm -rf build )
            folded = re.compile(_SUBSHELL).sub(
                lambda m: "" if re.compile(_CD).search(m.group(0)) else m.group(0).replace("(", "\x00"), text
            )
            if folded == text:
                break
            text = folded
        at = text.rfind(part) if part else -1  # the last time it appears: the most cds before it
        return re.compile(_CD).search(text[:at] if at >= 0 else text) is not None

    def cd_targets(self) -> list[str]:
        """The literal directories a ``cd``/``pushd`` in the command may move to (``cd ~/.ssh && rm id_rsa``)."""
        if not self.changes_directory():
            return []
        return [
            m.group(1).strip("'\"")
            for m in re.finditer(r"(?:^|[;&|({`\s'\"]|\\n)(?:cd|pushd)\s+([^\s;&|)'\"]+)", self.command)
            if not m.group(1).startswith("-")
        ]

    def candidates(self, path: str) -> list[str]:
        """``path``, and for a relative path the same name in each literal ``cd`` target."""
        if path.startswith(("/", "~", "$")) or not self.changes_directory():
            return [path]
        return [path, *(target.rstrip("/") + "/" + path for target in self.cd_targets())]

    def assigns_location(self) -> bool:
        """Whether the command assigns a variable that moves where a command works (``GIT_WORK_TREE=/``,
        ``export GIT_DIR=...``, ``HOME=/``, ``PWD``, ``CDPATH``): ``allowCommands`` then no longer applies."""
        if self.redirected is None:
            self.redirected = re.search(_LOCATION_VARS, self.command) is not None
        return self.redirected

    def tmpdir(self) -> str:
        """``$TMPDIR`` as the command will see it: "" when unset, or when the command itself assigns it."""
        if self._tmpdir is None:
            assigned = re.search(r"(?<![$\w{])TMPDIR\b", self.command) is not None
            if not assigned:
                read_outside()
            self._tmpdir = "" if assigned else os.environ.get("TMPDIR", "")
        return self._tmpdir


# patterns, compiled on first use (re's cache)
_CD = r"(?:^|[;&|({`\s'\"]|\\n)(?:cd|pushd|popd)(?:[\s;&|)'\"]|\\n|$)"
_LOCATION_VARS = r"(?:^|[\s;&|(`'\"])(?:GIT_[A-Z_]+|HOME|PWD|OLDPWD|CDPATH|XDG_[A-Z_]+)\+?="  # compiled on first use
_SUBSHELL = r"\([^()'\"`]*\)"


class Ctx:
    """One nesting level of a check: ``cwd`` (None when unknown), ``depth``, the shared ``state``."""

    __slots__ = ("cwd", "depth", "lost", "moved", "state")

    def __init__(self, cwd: str | None, depth: int, state: State, moved: bool = False, lost: bool = False) -> None:
        self.cwd = cwd
        self.depth = depth
        self.state = state
        self.moved = moved  # runs elsewhere than the project, or with assignments (env -C /, VAR=x cmd)
        self.lost = lost  # moved to a directory hookgate cannot tell (env -C "$D", a relative one from nowhere)

    @property
    def settings(self) -> Settings:
        return self.state.settings

    def deeper(self) -> Ctx:
        if self.depth >= MAX_DEPTH:
            raise TooDeep
        return Ctx(self.cwd, self.depth + 1, self.state, self.moved, self.lost)

    def moved_to(self, cwd: str | None, lost: bool = False) -> Ctx:
        """This level with the command running in ``cwd`` (``env -C DIR``, ``sudo -D DIR``; ``lost``: where is
        unknown) or with variable assignments (same ``cwd``): ``allowCommands`` no longer applies."""
        return Ctx(cwd, self.depth, self.state, True, lost or self.lost)

    def allowed_command(self, part: str) -> bool:
        """``part`` matches ``allowCommands`` and runs where the user allowed it: in the project directory, with
        no ``cd`` before it, no ``env -C``/``sudo -D``, and no assignment that moves where it works."""
        settings = self.state.settings
        if not settings.allow_commands or not settings.allows_command(part):
            return False
        state = self.state
        return not (
            self.moved or self.cwd != state.project or state.changes_directory_before(part) or state.assigns_location()
        )

    def hit(self, rule: str, part: str, reason: str) -> str | None:
        """Report that ``rule`` matched simple command ``part``; the reason when the check must stop (deny)."""
        settings = self.state.settings
        decision = settings.decision(rule)
        if decision == "off" or self.allowed_command(part):
            return None
        reason = worded(reason, decision)
        finding = Finding(rule, decision, reason, part)
        if decision == "ask":
            self.state.asks.append(finding)
            return None
        self.state.denied = finding
        return reason

    def check_text(self, text: str, stdin: Cmd | None = None) -> str | None:
        """Check ``text`` as a shell program one level down (``sh -c TEXT``, ``eval TEXT``...); ``stdin``: the
        command whose output the program reads (``stdin_source``), or None."""
        ctx = self.deeper()
        self.state.on_time()
        try:
            toks = Lexer(text, ctx.depth).run()
        except ParseError as exc:
            return self.state.raw_scan(text, str(exc), ctx)
        return self.state.token_checker(toks, ctx, stdin)

    def check_tokens(self, toks: list[Token]) -> str | None:
        return self.state.token_checker(toks, self, None)

    def check_argv(self, words: list[Word], cmd: Cmd | None = None) -> str | None:
        """Check one command line given as words (``cmd``: where its stdin comes from, or None)."""
        return self.state.argv_checker(words, cmd, self)
