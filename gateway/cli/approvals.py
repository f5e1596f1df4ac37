"""``hookgate approvals``: list, show, approve and reject approval requests from any shell with the same
config (the same state store and channels). Its parser is ``gateway.cli.parser.add_approvals_parser``.

::

    hookgate approvals list [--json] [--status STATUS] [--limit N]
    hookgate approvals show ID [--json]
    hookgate approvals approve ID [--reason TEXT]
    hookgate approvals reject ID [--reason TEXT]

``list --json`` prints a JSON array of request objects, newest first, each with at least ``id``,
``status``, ``session_id``, ``tool_use_id``, ``tool_name``, ``created_at``, ``expires_at`` (seconds
since the epoch), ``decided_by``, ``reason`` (the whole ``ApprovalRecord``), and ``unreadable`` for a row
damaged in the database (``list`` marks it ``[unreadable: ...]`` and goes on; it can be rejected, not
approved). An answer from here is
recorded as ``cli:<login name>`` (``cli:uid-<n>`` for a user id with no name); the channel message is
updated and the waiting hook released.
Every command expires what is due first (the sweeper).

Exit codes: 0 done; 1 usage, config or store error; 3 the answer was refused (the request is no longer
pending: already answered, expired or cancelled); 4 no such request.
"""

from __future__ import annotations

import sys

from gateway.wire import EXIT_ERROR, EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from gateway.approvals.desk import Desk
    from gateway.approvals.record import ApprovalRecord

EXIT_REFUSED, EXIT_NOT_FOUND = 3, 4
SUMMARY_FIELDS = (
    "id",
    "status",
    "session_id",
    "tool_use_id",
    "tool_name",
    "created_at",
    "expires_at",
    "decided_by",
    "reason",
)


def _desk(args: argparse.Namespace) -> Desk:
    import os

    from gateway.approvals.desk import Desk
    from gateway.approvals.trail import audit_trail
    from gateway.config import find_config_paths, load_config
    from gateway.store import default_state_dir, open_store

    config = load_config(find_config_paths(args.config))
    state_dir = os.path.expanduser(config.settings.get("state_dir") or default_state_dir())
    redact = (config.audit or {}).get("redact") or ()
    return Desk(open_store(config), config.channels, state_dir, trail=audit_trail(config), redact=redact)


def _where(desk: Desk, args: argparse.Namespace) -> str:
    """Which store was read, and whose config named it: ``in /p/state.sqlite3 (config: /p/hookgate.yaml)``.
    Requests live in the store of the config that asked, so an empty list or an unknown id run with
    another config (another folder, no ``--config``) says where it looked."""
    from gateway.config import find_config_paths
    from gateway.config.loading import BUILTIN_DEFAULT, default_config_path

    paths = [BUILTIN_DEFAULT if p == default_config_path() else p for p in find_config_paths(args.config)]
    return f"in {_plain(desk.store.display)} (config: {_plain(', '.join(paths))})"


def login() -> str:
    """Who answers from this shell: the login name (``getpass.getuser``), or ``uid-<n>`` for a user id with
    no name (a container run as ``--user 1000`` has no passwd entry and no ``$USER``), so such a user can
    still answer and the record still says who."""
    import getpass
    import os

    try:
        return getpass.getuser()
    except (KeyError, OSError, ImportError):  # no $LOGNAME/$USER and no passwd entry for the uid
        return f"uid-{os.getuid()}"


def _when(seconds: float | None) -> str:
    import time

    return "-" if seconds is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(seconds))


def _plain(value: object) -> str:
    """``value`` on one line for the terminal (``printable`` with nothing kept: newlines and tabs escaped)."""
    from gateway.approvals.record import printable

    return printable(str(value), keep="")


def _line(record: ApprovalRecord) -> str:
    consumed = " (delivered)" if record.consumed_at else ""
    who = f" by {_plain(record.decided_by)}" if record.decided_by else ""
    message = _plain(record.message)
    message = message if len(message) <= 60 else message[:59] + "…"
    if record.unreadable:  # a row damaged in the database: what could be read, and that it is damaged
        message = f"[unreadable: {_plain(record.unreadable)}] {message}".rstrip()
    return (
        f"{record.id}  {record.status + consumed + who:<40}  {_plain(record.tool_name or '-'):<12}  "
        f"{_when(record.created_at)}  expires {_when(record.expires_at)}  {message}"
    )


def cmd_approvals(args: argparse.Namespace) -> int:
    import json

    from gateway.errors import HookgateError

    try:
        desk = _desk(args)
        desk.sweep()
        action = args.approvals_action
        if action == "list":
            records = desk.store.approval_list([args.status] if args.status else None, max(args.limit, 1))
            if args.json:
                print(json.dumps([r.to_dict() for r in records], indent=2, default=str))
            elif not records:
                status = f" with status {args.status}" if args.status else ""
                print(f"no approval requests{status} {_where(desk, args)}")
            else:
                for record in records:
                    print(_line(record))
            return EXIT_OK
        found = desk.store.approval_get(args.id)
        if found is None:
            sys.stderr.write(
                f"hookgate: no approval request {args.id!r} {_where(desk, args)}; see 'hookgate approvals list', "
                "or pass the config of the hook that asked (--config FILE)\n"
            )
            return EXIT_NOT_FOUND
        if action == "show":
            if args.json:
                print(json.dumps(found.to_dict(), indent=2, default=str))
            else:
                _show(found)
            return EXIT_OK
        outcome = desk.decide(args.id, action == "approve", f"cli:{login()}", args.reason)
        if outcome.refused:
            sys.stderr.write(f"hookgate: {args.id}: {outcome.refused}\n")
            return EXIT_REFUSED
        assert outcome.record is not None
        print(f"{outcome.record.id}: {outcome.record.status} by {outcome.record.decided_by}")
        return EXIT_OK
    except HookgateError as exc:
        sys.stderr.write(f"hookgate: {str(exc).splitlines()[0]}\n")
        return EXIT_ERROR


def _show(record: ApprovalRecord) -> None:
    import json

    rows = [("unreadable", record.unreadable)] if record.unreadable else []
    rows += [
        ("id", record.id),
        ("status", record.status),
        ("message", record.message),
        ("tool", record.tool_name or "-"),
        ("input", json.dumps(record.tool_input, ensure_ascii=False)),
        ("event", record.event),
        ("session", record.session_id or "-"),
        ("tool_use_id", record.tool_use_id or "-"),
        ("folder", record.cwd or "-"),
        ("channel", record.channel or "(inbox only)"),
        ("approvers", ", ".join(record.approvers) or "(anyone who can reach it)"),
        ("on timeout", record.on_timeout),
        ("created", _when(record.created_at) + " UTC"),
        ("expires", _when(record.expires_at) + " UTC"),
        ("decided", f"{_when(record.decided_at)} UTC by {record.decided_by}" if record.decided_at else "-"),
        ("reason", record.reason or "-"),
        ("delivered", _when(record.consumed_at) + " UTC" if record.consumed_at else "no"),
    ]
    for label, value in rows:
        print(f"{label + ':':<13}{_plain(value)}")
