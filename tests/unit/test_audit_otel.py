"""OpenTelemetry spans from audit records reach an OTLP/HTTP receiver on loopback."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")

from gateway.audit.otel import Telemetry, traces_endpoint
from tests.fakes.otlp_receiver import OtlpReceiver

RECORD = {
    "time": "2030-01-01T00:00:00.000Z",
    "host": "claude",
    "event": "PreToolUse",
    "session_id": "sess-1",
    "tool_use_id": "toolu_1",
    "prompt_id": None,
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf /"},
    "updated_input": None,
    "decision": "deny",
    "reason": "no rm",
    "approval": None,
    "version": "0",
    "config_hash": "c",
    "handlers": [
        {
            "id": "guard",
            "type": "command",
            "status": "ok",
            "verdict": "deny",
            "reason": "no rm",
            "duration_ms": 3.0,
            "side_effects": [],
        },
        {
            "id": "slow",
            "type": "http",
            "status": "timeout",
            "verdict": "none",
            "reason": "no answer within 1 s",
            "duration_ms": 1000.0,
            "side_effects": [],
        },
    ],
}


def test_traces_endpoint() -> None:
    assert traces_endpoint("http://h:4318") == "http://h:4318/v1/traces"
    assert traces_endpoint("http://h:4318/v1/traces/") == "http://h:4318/v1/traces"
    assert traces_endpoint(None) is None


def test_spans_per_dispatch_and_handler() -> None:
    with OtlpReceiver() as otlp:
        telemetry = Telemetry(
            {"endpoint": otlp.endpoint, "headers": {"x-team": "infra"}, "service_name": "hg-test"}, batch=False
        )
        telemetry.emit(RECORD, None, started_ns=None)
        telemetry.close()
        spans = otlp.wait_spans(3)
        assert otlp.requests[0]["x-team"] == "infra"
    by_name = {s["name"]: s for s in spans}
    parent = by_name["execute_tool Bash"]
    assert parent["resource"]["service.name"] == "hg-test"
    assert parent["attributes"] == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "Bash",
        "gen_ai.tool.call.id": "toolu_1",
        "gen_ai.conversation.id": "sess-1",
        "hookgate.event": "PreToolUse",
        "hookgate.host": "claude",
        "hookgate.decision": "deny",
        "hookgate.reason": "no rm",
        "error.type": "handler_failure",
    }
    guard, slow = by_name["hookgate.handler guard"], by_name["hookgate.handler slow"]
    assert guard["parent_span_id"] == slow["parent_span_id"] == parent["span_id"]
    assert guard["trace_id"] == parent["trace_id"]
    assert guard["attributes"]["hookgate.handler.type"] == "command"
    assert guard["attributes"]["hookgate.handler.status"] == "ok"
    assert "error.type" not in guard["attributes"]
    assert slow["attributes"]["error.type"] == "timeout" and slow["status"] == "STATUS_CODE_ERROR"
    assert abs((slow["end_ns"] - slow["start_ns"]) - 1_000_000_000) < 1_000_000
    assert parent["start_ns"] <= guard["start_ns"] and guard["end_ns"] <= parent["end_ns"]
