"""``hookgate audit``: read the audit trail that ``hookgate run`` and ``hookgate serve`` record.

Reads the same config and state as ``hookgate run`` (``--config``, ``HOOKGATE_CONFIG``, ...: the store
that ``settings`` names); first moves records still waiting in the spool into the store.

    hookgate audit tail [-n N] [--follow] [--json]      newest N (default 20), oldest first; --follow polls
    hookgate audit query [FILTERS] [--limit N] [--json]  records that fit; --json: a JSON array of records
    hookgate audit export --format jsonl|csv [FILTERS] [--limit N] [--output FILE]
    hookgate audit verify                               walk every chain; exit 1 naming the first bad record
    hookgate audit verify --jsonl PATH [--continued]    walk a JSON-lines file (the jsonl sink, an export)
    hookgate audit stats [--since T] [--json]            per handler: calls, denies, errors, timeouts, p50/p95

FILTERS: ``--session ID``, ``--tool NAME``, ``--decision allow|deny|ask|defer|block|stop|none``,
``--handler ID``, ``--event NAME``, ``--since T`` (``30m``, ``1h``, ``2d``, or an ISO 8601 time; UTC when
no zone). Output is oldest first, by the time each record was made (a ``hookgate run`` record that
waited in the spool takes its place among ``serve``'s); ``export`` keeps the store's order, each chain in
``seq`` order, so its file verifies. Exit codes: 0 done; 1 a bad record (``verify``), spooled records that
could not be moved into the store (``verify``; the others show what the store holds and say so on stderr)
or a store that cannot be read; 2 a usage error (one line on stderr, as for every hookgate command);
a reader that leaves early (``| head``) ends the output quietly with 0, as for every hookgate command;
4 (``verify``) no audit records at all: the state dir or store does not exist or holds none, or the
``--jsonl`` file holds none (empty, or only whitespace), so nothing was verified.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from typing import TYPE_CHECKING

from gateway.cli import _err
from gateway.wire import EXIT_ERROR, EXIT_OK

if TYPE_CHECKING:
    import argparse

    from gateway.config import RuntimeConfig
    from gateway.store.audit_types import AuditFilter, AuditRow
    from gateway.store.base import Store

EXIT_NOTHING = 4
"""``hookgate audit verify``: no audit records (no store, or an empty one): nothing was verified."""
FOLLOW_SECONDS = 0.5
"""How often ``tail --follow`` looks for new records (seconds)."""


def audit_parser() -> argparse.ArgumentParser:
    """The parser of ``hookgate audit ACTION ...`` (see module docstring)."""

    from gateway.audit.record import DECISIONS
    from gateway.cli.argtypes import positive_int
    from gateway.cli.parser import build_parser

    top = build_parser()  # for its error style and prog name
    audit = type(top)(prog="hookgate audit", description="Read the audit trail that run and serve record.")
    actions = audit.add_subparsers(dest="action", required=True)

    def with_config(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument(
            "--config", "-c", action="append", metavar="FILE", help="config file (repeatable; as for 'hookgate run')"
        )
        return p

    def filters(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        with_config(p)
        p.add_argument("--session", metavar="ID", help="only this session_id")
        p.add_argument("--tool", metavar="NAME", help="only this tool_name")
        p.add_argument("--decision", choices=DECISIONS, help="only this merged decision")
        p.add_argument("--handler", metavar="ID", help="only records in which this handler ran")
        p.add_argument("--event", type=_event, metavar="NAME", help="only this event (PreToolUse, Stop, ...)")
        p.add_argument("--since", type=_since, metavar="T", help="only newer records: 30m, 1h, 2d, or an ISO 8601 time")
        return p

    tail = with_config(actions.add_parser("tail", help="the newest records (oldest first)"))
    tail.add_argument("-n", type=positive_int, default=20, metavar="N", help="how many (default: 20)")
    tail.add_argument("--follow", "-f", action="store_true", help="keep printing new records (Ctrl-C stops)")
    tail.add_argument("--json", action="store_true", help="one JSON record per line")
    query = filters(actions.add_parser("query", help="records that fit the filters"))
    query.add_argument("--limit", type=positive_int, metavar="N", help="at most the newest N")
    query.add_argument("--json", action="store_true", help="a JSON array of records")
    export = filters(actions.add_parser("export", help="records as JSON lines or CSV"))
    export.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    export.add_argument("--limit", type=positive_int, metavar="N", help="at most the newest N (written oldest first)")
    export.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout")
    verify = with_config(
        actions.add_parser(
            "verify", help="check the hash chains; exit 1 naming the first bad record, 4 when there is none"
        )
    )
    verify.add_argument(
        "--jsonl", metavar="PATH", help="check this JSON-lines file (the jsonl sink, or an export) instead of the store"
    )
    verify.add_argument(
        "--continued",
        action="store_true",
        help="with --jsonl: the file continues an earlier one (rotated, pruned): a chain's first record is its anchor",
    )
    stats = with_config(actions.add_parser("stats", help="per handler: calls, denies, errors, timeouts, latency"))
    stats.add_argument("--since", type=_since, metavar="T", help="only newer records: 30m, 1h, 2d, or ISO time")
    stats.add_argument("--json", action="store_true")
    return audit


def _since(text: str) -> float:
    import argparse

    from gateway.audit.report import parse_since

    try:
        return parse_since(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--since {text!r}: ")) from None


def _event(text: str) -> str:
    """``--event``: ``gateway.audit.report.event_name``, a usage error when it names no event."""
    import argparse

    from gateway.audit.report import event_name

    try:
        return event_name(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _since_values_joined(words: list[str]) -> list[str]:
    """``words`` with ``--since -1h`` (a value argparse would take for an option, and say "expected one
    argument") written as ``--since=-1h``, so ``--since`` itself says what is wrong with it."""
    import re

    out: list[str] = []
    i = 0
    while i < len(words):
        if words[i] == "--since" and i + 1 < len(words) and re.match(r"-\s*\d", words[i + 1]):
            out.append(f"--since={words[i + 1]}")
            i += 2
            continue
        if words[i] == "--":
            return out + words[i:]
        out.append(words[i])
        i += 1
    return out


def open_audit_store(config: RuntimeConfig, *, prune: bool = True) -> tuple[Store, str | None]:
    """The store ``config`` names, with the spool drained into it and (``prune``) retention applied, and
    why the drain or retention failed (None: done). ``verify`` does not prune: it checks the records as
    they are, before retention could act on them. A store that cannot be opened raises (StoreError,
    OSError); one that takes no records (a chain whose head row was damaged by hand) is still read: what
    it holds is shown, the spooled records stay in the spool for a later drain."""
    from gateway.audit.recorder import Recorder
    from gateway.errors import HookgateError
    from gateway.store import default_state_dir, open_store
    from gateway.wire import VERSION as __version__

    store = open_store(config)
    state_dir = os.path.expanduser(config.settings.get("state_dir") or default_state_dir())
    audit = {**config.audit, "otel": None}  # reading the trail exports nothing
    recorder = Recorder(
        audit, state_dir=state_dir, store_factory=lambda: store, config_hash=config.config_hash, version=__version__
    )
    step = "records waiting in the spool were not moved into the store (they stay in the spool)"
    try:
        recorder.drain(prune=False)
        step = "retention was not applied"
        if prune:
            recorder.prune()
    except (HookgateError, OSError) as exc:
        return store, f"{step}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return store, None


def cmd_audit(top_args: argparse.Namespace) -> int:
    from gateway.cli.run import _load
    from gateway.errors import ConfigError, HookgateError

    words = _since_values_joined(top_args.words)
    args = audit_parser().parse_args((["--help"] if top_args.audit_help else []) + words)
    # a record may hold a lone surrogate (from an agent's tool input): printed as a \udXXX escape, which
    # in JSON output is the same string again, instead of failing the whole query or export
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    if args.action == "verify" and args.jsonl:
        try:
            return _verify_jsonl(args.jsonl, args.continued)
        except BrokenPipeError:
            raise
        except OSError as exc:  # its report could not be written (a full disk under `> FILE`)
            _err(f"audit verify: {exc}")
            return EXIT_ERROR
    try:
        config = _load(args.config)
    except ConfigError as exc:
        _err(f"invalid config: {exc.issues[0]}")
        return EXIT_ERROR
    if "store" not in config.audit.get("sinks", ["store"]):  # else an empty listing would look like no records
        files = [s.removeprefix("jsonl:") for s in config.audit.get("sinks", []) if s.startswith("jsonl:")]
        where = f"writes {', '.join(files)}" if files else "writes no records"
        hint = f" (hookgate audit verify --jsonl {files[0]})" if files else ""
        _err(f"audit {args.action}: audit.sink has no 'store' (it {where}): only what the store holds is read{hint}")
    if args.action == "verify" and (missing := _missing_store(config)) is not None:
        _err(f"audit verify: no audit records: {missing}; nothing was verified")
        return EXIT_NOTHING
    try:
        store, unmoved = open_audit_store(config, prune=args.action != "verify")
    except (HookgateError, OSError) as exc:
        _err(f"audit: {exc}")
        return EXIT_ERROR
    if unmoved is not None:  # what the store holds is still shown; verify fails (it could not check them all)
        _err(f"audit {args.action}: {unmoved}")
    try:
        action = {"tail": _tail, "query": _query, "export": _export, "verify": _verify, "stats": _stats}[args.action]
        done = action(args, store, config)
        _write("", flush=True)  # what is still buffered fails here, named, rather than at exit
        return EXIT_ERROR if unmoved is not None and args.action == "verify" else done
    except BrokenPipeError:  # `| head`: the reader left; `main` ends quietly (exit 0), as for every command
        raise
    except (HookgateError, OSError) as exc:
        _err(f"audit {args.action}: {exc}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_OK
    finally:
        store.close()


def _write(text: str, flush: bool = False) -> None:
    """``text`` to stdout; a failure to write it (a full disk under ``> FILE``) names stdout, which an
    ``OSError`` from ``write`` does not (``| head``'s BrokenPipeError is left to ``main``: a quiet end)."""
    try:
        sys.stdout.write(text)
        if flush:
            sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, "<stdout>") from None


def _missing_store(config: RuntimeConfig) -> str | None:
    """Why there is no SQLite store to verify (its file and the spool are absent: a state dir that does
    not exist, or was emptied), or None. ``verify`` says so instead of creating an empty store."""
    from gateway.audit.spool import spool_dir
    from gateway.store import state_dir
    from gateway.store.url import parse, selected

    try:
        choice = parse(selected(config.settings.get("store")))
    except ValueError:
        return None  # open_store reports it
    if choice.kind != "sqlite":
        return None
    folder = choice.sqlite_dir or state_dir(config)
    if os.path.exists(os.path.join(folder, "state.sqlite3")) or os.path.isdir(spool_dir(state_dir(config))):
        return None
    return f"{folder} holds no state store" if os.path.isdir(folder) else f"the state dir {folder} does not exist"


def _filter(args: argparse.Namespace, limit: int | None = None, order: str = "time") -> AuditFilter:
    from gateway.store.audit_types import AuditFilter

    return AuditFilter(
        order=order,
        since=getattr(args, "since", None),
        session=getattr(args, "session", None),
        tool=getattr(args, "tool", None),
        decision=getattr(args, "decision", None),
        handler=getattr(args, "handler", None),
        event=getattr(args, "event", None),
        limit=limit,
    )


def _print_rows(rows: list[AuditRow], as_json: bool) -> None:
    from gateway.audit.record import ordered
    from gateway.audit.report import line

    for row in rows:
        _write((json.dumps(ordered(row.record), ensure_ascii=False) if as_json else line(row)) + "\n")
    _write("", flush=True)


def _tail(args: argparse.Namespace, store: Store, config: RuntimeConfig) -> int:
    if not args.follow:
        _print_rows(list(reversed(store.audit_records(_filter(args, args.n)))), args.json)
        return EXIT_OK
    from gateway.audit.follow import Follower
    from gateway.audit.recorder import default_chain
    from gateway.audit.spool import drain
    from gateway.store import default_state_dir

    follower = Follower(store)  # cursors first: a record committed after them is the poll's, not this print's
    _print_rows([r for r in reversed(store.audit_records(_filter(args, args.n))) if follower.seen(r)], args.json)
    state_dir = os.path.expanduser(config.settings.get("state_dir") or default_state_dir())
    chain = config.audit.get("chain") or default_chain()
    from gateway.errors import StoreBusy, StoreUnavailable

    down = False
    while True:
        time.sleep(FOLLOW_SECONDS)
        try:
            drain(state_dir, store, chain)
            new = follower.poll()
        except (StoreUnavailable, StoreBusy) as exc:  # a shared store restarting: keep following, say so once
            if not down:
                _err(f"audit tail: {exc}; still following, retrying every {FOLLOW_SECONDS:g} s")
                down = True
            continue
        if down:
            _err(f"audit tail: store {store.display} is reachable again")
            down = False
        if new:
            _print_rows(new, args.json)


def _query(args: argparse.Namespace, store: Store, config: RuntimeConfig) -> int:
    rows = list(reversed(store.audit_records(_filter(args, args.limit))))
    if args.json:
        from gateway.audit.record import ordered

        _write(json.dumps([ordered(r.record) for r in rows], ensure_ascii=False, indent=1) + "\n")
    else:
        _print_rows(rows, False)
    return EXIT_OK


def _export(args: argparse.Namespace, store: Store, config: RuntimeConfig) -> int:
    from gateway.audit.report import csv_text, export_line

    rows = list(reversed(store.audit_records(_filter(args, args.limit, "insertion"))))  # each chain in seq order
    text = csv_text(rows) if args.format == "csv" else "".join(export_line(r) + "\n" for r in rows)
    if args.output:
        import contextlib
        import stat

        fh = open(args.output, "w", encoding="utf-8", newline="")  # noqa: SIM115 (closed below, also on failure)
        regular = stat.S_ISREG(os.fstat(fh.fileno()).st_mode)
        try:
            fh.write(text)
            fh.close()
        except OSError as exc:  # a full disk: no cut-off file that looks like the export, and say which
            with contextlib.suppress(OSError):
                fh.close()
            if regular:  # never a device, a FIFO, ...
                os.unlink(args.output)
            raise OSError(exc.errno, f"{exc.strerror} (the export is not written)", args.output) from None
    else:
        _write(text)
    return EXIT_OK


def _verify(args: argparse.Namespace, store: Store, config: RuntimeConfig) -> int:
    from gateway.audit.report import verify_store

    reports = verify_store(store)
    bad = [r for r in reports if r.problem is not None]
    try:
        for report in reports:
            if report.problem is None:
                pruned = (
                    f", records 1-{report.base_seq} pruned by retention (retention record seq {report.voucher_seq})"
                    if report.base_seq
                    else ""
                )
                _write(
                    f"chain {report.chain!r}: {report.checked} record(s) ok{pruned}; head seq {report.head_seq} "
                    f"hash {report.head_hash}\n"
                )
        _write("", flush=True)
    except BrokenPipeError:  # the reader left (`| head`): the bad chains are still said and still fail
        from gateway.client import _silence_stdout

        _silence_stdout()
    if not reports:
        _err(
            "audit verify: no audit records in the store: nothing was verified (a trail never written and "
            "one emptied look the same)"
        )
        return EXIT_NOTHING
    if bad:
        for report in bad:
            _err(f"audit verify: {report.problem}")
        return EXIT_ERROR
    return EXIT_OK


def _verify_jsonl(path: str, continued: bool) -> int:
    from gateway.audit.jsonl import verify_file

    try:
        report = verify_file(path, continued=continued)
    except OSError as exc:
        _err(f"audit verify: {path}: {exc.strerror or exc}")
        return EXIT_ERROR
    if report.problem is not None:
        _err(f"audit verify: {path} {report.problem}")
        return EXIT_ERROR
    if not report.chains:
        _err(
            f"audit verify: {path}: no audit records: nothing was verified (a file never written and one "
            "emptied look the same)"
        )
        return EXIT_NOTHING
    for chain, (first, last, digest) in sorted(report.chains.items()):
        _write(f"{path}: chain {chain!r}: seq {first}-{last} ok; last hash {digest}\n")
    return EXIT_OK


def _stats(args: argparse.Namespace, store: Store, config: RuntimeConfig) -> int:
    from gateway.audit.report import handler_stats, stats_table

    entries = handler_stats(store.audit_handler_lists(_filter(args)))
    if args.json:
        _write(json.dumps(entries, indent=1) + "\n")
    elif entries:
        _write(stats_table(entries) + "\n")
    else:
        _write("no audit records\n")
    return EXIT_OK
