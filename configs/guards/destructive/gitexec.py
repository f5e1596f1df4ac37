"""git subcommands and settings that run a shell command: ``bisect run CMD``, ``submodule foreach CMD``,
``filter-branch --tree-filter CMD`` (and the other filters), ``difftool -x CMD``, ``grep -OCMD``,
``--upload-pack``/``--receive-pack``/``--exec`` programs (fetch, pull, clone ``-u``, ls-remote, push, archive),
``mergetool --tool-cmd``, ``send-email --to-cmd``/``--cc-cmd``..., and ``-c`` keys such as ``sendemail.tocmd``:
each command is checked like any shell program. ``ext::`` remote URLs and ``uploadpack.packObjectsHook`` (git runs
a command as the transport or to pack objects) are checked too and, when nothing denies them, asked about
(rule ``git.ext-command``). ``git config -f FILE`` that sets or unsets a key writes FILE (``config_file_reason``)."""

from __future__ import annotations

import re
import shlex

from .context import POLICY, Ctx

# subcommand: options whose value git runs as a shell command (long forms also as --opt=VALUE)
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "filter-branch": frozenset(
        {
            "--env-filter",
            "--tree-filter",
            "--index-filter",
            "--parent-filter",
            "--msg-filter",
            "--commit-filter",
            "--tag-name-filter",
        }
    ),
    "difftool": frozenset({"-x", "--extcmd"}),
    "fetch": frozenset({"--upload-pack"}),
    "pull": frozenset({"--upload-pack"}),
    "ls-remote": frozenset({"--upload-pack"}),
    "fetch-pack": frozenset({"--upload-pack", "--exec"}),
    "clone": frozenset({"-u", "--upload-pack"}),
    "push": frozenset({"--receive-pack", "--exec"}),
    "send-pack": frozenset({"--receive-pack", "--exec"}),
    "archive": frozenset({"--exec"}),
    "mergetool": frozenset({"--tool-cmd"}),
    "send-email": frozenset({"--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd"}),
}
# -c keys whose value git runs as a shell command (not in git.py's own list); compiled on first use
_KEYS = r"sendemail\.(?:tocmd|cccmd|headercmd|sendmailcmd)|core\.gitproxy|remote\..+\.(?:uploadpack|receivepack)"
_HOOK_KEY = "uploadpack.packobjectshook"


def check_runs(global_args: list[str], sub: str, rest: list[str], shown: str, ctx: Ctx) -> str | None:
    """The shell commands ``git GLOBAL SUB REST`` runs by itself (see the module docstring)."""
    for k, a in enumerate(global_args):
        if a == "-c" and k + 1 < len(global_args):
            key, _, value = global_args[k + 1].partition("=")
            if value and re.fullmatch(_KEYS, key, re.IGNORECASE):
                reason = ctx.check_text(value)
                if reason:
                    return reason
            elif value and key.lower() == _HOOK_KEY:
                reason = _ask(ctx.check_text(value), shown, "uploadpack.packObjectsHook", value, ctx)
                if reason:
                    return reason
    for a in [*global_args, *rest]:
        if "ext::" in a:
            at = a.find("ext::")
            reason = _ask(_check_ext(a[at + 5 :], ctx), shown, "an ext:: remote", a[at:], ctx)
            if reason:
                return reason
    if sub == "bisect" and rest[:1] == ["run"] and rest[1:]:
        return ctx.check_text(" ".join(shlex.quote(a) for a in rest[1:]))
    if sub == "submodule":
        words = [a for a in rest if a not in ("--quiet", "-q", "--recursive")]
        if words[:1] == ["foreach"] and words[1:]:
            return ctx.check_text(" ".join(words[1:]))  # git joins the arguments and runs them with sh
        return None
    if sub == "grep":
        for a in rest:
            if a == "--":
                break
            value = (
                a[2:] if a.startswith("-O") else a.partition("=")[2] if a.startswith("--open-files-in-pager=") else ""
            )
            if value:
                reason = ctx.check_text(value + " FILE")
                if reason:
                    return reason
        return None
    options = _VALUE_OPTIONS.get(sub)
    if options is None:
        return None
    for k, a in enumerate(rest):
        if a == "--":
            break
        name, eq, value = a.partition("=")
        if name in options and (eq or not name.startswith("--") or k + 1 < len(rest)):
            if not eq:
                value = rest[k + 1] if k + 1 < len(rest) else ""
        elif len(name) > 2 and not name.startswith("--") and name[:2] in options:  # -xCMD, -uCMD
            value = a[2:]
        else:
            continue
        if value:
            reason = ctx.check_text(value)
            if reason:
                return reason
    return None


def _check_ext(spec: str, ctx: Ctx) -> str | None:
    """``ext::CMD ARGS``: git splits the command at unescaped spaces (``% `` is a space, ``%%`` a ``%``,
    ``%s``/``%S``/``%G`` the service) and runs it without a shell."""
    argv, cur, i = [], "", 0
    while i < len(spec):
        c = spec[i]
        if c == "%" and i + 1 < len(spec):
            nxt = spec[i + 1]
            cur += {" ": " ", "%": "%", "s": "git-upload-pack", "S": "upload-pack", "G": ""}.get(nxt, nxt)
            i += 2
            continue
        if c == " ":
            if cur:
                argv.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        argv.append(cur)
    return ctx.check_text(" ".join(shlex.quote(a) for a in argv)) if argv else None


def _ask(denied: str | None, shown: str, what: str, value: str, ctx: Ctx) -> str | None:
    if denied:
        return denied
    return ctx.hit(
        "git.ext-command",
        shown,
        (
            f"`{shown}` makes git run a command through {what} ({value[:80]}), a way to run programs that "
            f"is rarely meant, so {POLICY} asks first."
        ),
    )


CONFIG_EDITS = frozenset(
    {"--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "-e", "--edit", "unset"}
    | {"rename-section", "remove-section", "edit"}
)


def config_file_reason(file: str, shown: str, ctx: Ctx) -> str | None:
    """``git config -f FILE`` that changes FILE: a write of it, judged as one (a secrets file or hook
    configuration; ``-f .git/config`` is ``git config k v``, which passes)."""
    from .protected import config_kind, write_reason

    for candidate in ctx.state.candidates(file):
        reason = write_reason(candidate, f"`{shown}`")
        if reason:
            return ctx.hit("write.hook-config" if config_kind(candidate) else "write.secrets", shown, reason)
    return None
