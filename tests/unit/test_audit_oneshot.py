"""The one-shot recorder of ``hookgate run``: the same record as ``Recorder`` writes, redacted, into the
spool that drains into the chained store; picked only for an ``audit`` section it fits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.audit import oneshot
from gateway.audit.oneshot import OneShotRecorder, fits
from gateway.audit.recorder import Recorder
from gateway.audit.report import verify_store
from gateway.audit.spool import SPOOL_NAME, spool_dir
from gateway.config.specs import RuntimeConfig
from gateway.context import RunContext
from gateway.decision import HandlerResult, Verdict, merge
from gateway.dialects import parse_event
from gateway.errors import StoreBusy
from gateway.store.audit_types import AuditFilter
from gateway.store.sqlite import SQLiteStore

KEY = "sk-ant-" + "a1" * 20
AUDIT: dict[str, Any] = {"record": "handled", "sinks": ["store"], "keep_days": None, "max_mb": None}


def event() -> Any:  # a HookEvent
    return parse_event(
        {
            "hook_event_name": "PreToolUse",
            "session_id": "s",
            "tool_name": "Bash",
            "cwd": "/tmp",
            "tool_input": {"command": f"curl -H 'x-api-key: {KEY}' https://api.example"},
            "tool_use_id": "t1",
        },
        "claude",
    )


def decision() -> Any:
    verdict = Verdict(permission="deny", permission_reason=f"saw {KEY}", side_effects=["scanned"])
    results = [HandlerResult(id="secret-scan", type="python", duration_ms=0.5, verdict=verdict)]
    return merge("PreToolUse", results, tool_input={"command": "ls"})


def one_shot(tmp_path: Path, drain: Any = None, audit: dict[str, Any] | None = None) -> OneShotRecorder:
    return OneShotRecorder(
        audit or AUDIT, state_dir=str(tmp_path), config_hash="c0ffee", version="9.9", drain=drain or (lambda: None)
    )


def spooled(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (Path(spool_dir(str(tmp_path))) / SPOOL_NAME).read_text().splitlines()
    return [json.loads(line.partition("\t")[2]) for line in lines]


def test_fits_only_the_store_sink_without_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    assert fits({}) and fits({"sinks": ["store"]})
    assert not fits({"sinks": ["store", "jsonl:/tmp/a.jsonl"]}) and not fits({"sinks": []})
    assert not fits({"sinks": ["store"], "otel": {"endpoint": "http://127.0.0.1:4318"}})
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert not fits({"sinks": ["store"]})


def test_the_record_is_recorders_redacted_and_drains_into_a_chain_that_verifies(tmp_path: Path) -> None:
    one_shot(tmp_path).submit(event(), decision())
    [record] = spooled(tmp_path)
    full = Recorder(AUDIT, state_dir=str(tmp_path), store_factory=lambda: None, config_hash="c0ffee", version="9.9")
    _, _, expected, _, _, _ = full._prepare(event(), decision(), 1.0, None)
    own = ("time", "id")  # each record's own: when and which
    assert {k: v for k, v in record.items() if k not in own} == {k: v for k, v in expected.items() if k not in own}
    spool = (Path(spool_dir(str(tmp_path))) / SPOOL_NAME).read_bytes()
    assert spool.decode().partition("\t")[0] == record["id"]  # the spooled id is the one in the body
    assert KEY.encode() not in spool and b"[REDACTED:" in spool and record["handlers"][0]["id"] == "secret-scan"
    store = SQLiteStore(str(tmp_path))
    Recorder(AUDIT, state_dir=str(tmp_path), store_factory=lambda: store, config_hash="c0ffee", version="9.9").drain()
    [row] = store.audit_records(AuditFilter())
    assert json.loads(row.body) == record and row.decision == "deny" and row.id == record["id"]
    assert [r.problem for r in verify_store(store)] == [None]


def test_a_plain_record_is_written_as_it_is(tmp_path: Path) -> None:
    plain: Any = parse_event(
        {"hook_event_name": "PreToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}},
        "claude",
    )
    one_shot(tmp_path).submit(plain, merge("PreToolUse", [HandlerResult(id="g", type="python")], tool_input=None))
    [record] = spooled(tmp_path)
    assert record["tool_input"] == {"command": "ls"} and record["decision"] == "none"


def test_custom_patterns_redact_too(tmp_path: Path) -> None:
    audit = {**AUDIT, "redact": [r"hunter\d"]}
    plain: Any = parse_event(
        {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "echo hunter2"}}, "claude"
    )
    one_shot(tmp_path, audit=audit).submit(plain, merge("PreToolUse", [HandlerResult(id="g", type="python")]))
    assert spooled(tmp_path)[0]["tool_input"]["command"] == "echo [REDACTED:custom]"


def test_a_grown_spool_is_drained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drained: list[int] = []
    monkeypatch.setattr(oneshot, "DRAIN_BYTES", 1)
    one_shot(tmp_path, drain=lambda: drained.append(1)).submit(event(), decision())
    assert drained == [1]


def test_a_failed_write_or_drain_is_one_line_and_never_raises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    one_shot(blocker / "state").submit(event(), decision())
    assert capsys.readouterr().err.startswith("hookgate: audit: cannot record: ")

    def broken() -> None:
        raise OSError("disk I/O error")

    monkeypatch.setattr(oneshot, "DRAIN_BYTES", 1)
    one_shot(tmp_path, drain=broken).submit(event(), decision())
    # written before the drain failed: not "cannot record", it waits for the next drain
    assert capsys.readouterr().err == (
        "hookgate: audit: the record is in the spool; it was not moved into the store (disk I/O error), hook "
        "calls try again in 30 s\n"
    )
    assert len(spooled(tmp_path)) == 1

    def busy() -> None:
        raise StoreBusy("state store x: database is locked")

    one_shot(tmp_path, drain=busy).submit(event(), decision())
    assert capsys.readouterr().err == ""  # another process is moving it: nothing to say
    assert len(spooled(tmp_path)) == 2


def _config(tmp_path: Path, audit: dict[str, Any]) -> RuntimeConfig:
    return RuntimeConfig({}, [], settings={"state_dir": str(tmp_path)}, audit=audit, config_hash="c0ffee")


def test_a_run_context_picks_the_one_shot_recorder_when_it_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    ctx = RunContext(_config(tmp_path, AUDIT), mode="run")
    assert isinstance(ctx.recorder(), OneShotRecorder)
    ctx.close_recorder()
    jsonl = {**AUDIT, "sinks": ["store", f"jsonl:{tmp_path / 'a.jsonl'}"]}
    other = RunContext(_config(tmp_path, jsonl), mode="run").recorder()
    assert isinstance(other, Recorder) and not other.background
    served = RunContext(_config(tmp_path, AUDIT), mode="serve").recorder()
    assert isinstance(served, Recorder) and served.background
