"""serve's per-event metrics (plain counts, turned into metric families at scrape time) expose exactly
what prometheus_client's own Counter and Histogram would for the same observations."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from gateway.decision import HandlerResult, Verdict, merge
from gateway.serve.metrics import LATENCY_BUCKETS, Metrics, decision_label

DECISIONS = [
    merge("PreToolUse", [HandlerResult(id="guard", type="python", duration_ms=0.4)]),
    merge(
        "PreToolUse",
        [
            HandlerResult(id="guard", type="python", duration_ms=1.0, verdict=Verdict(permission="deny")),
            HandlerResult(id="hook", type="http", status="timeout", duration_ms=10_000.0),
        ],
    ),
    merge("Stop", [HandlerResult(id="check", type="command", status="error", duration_ms=2.5)]),
    merge("PreToolUse", [HandlerResult(id="bg", type="command", status="skipped")]),
    merge("PreToolUse", [HandlerResult(id="guard", type="python", status="cached")]),
]
SECONDS = [0.0004, 0.001, 0.0025, 70.0, 0.3]  # on a bucket bound, inside, past the last bound


def reference(observations: list[tuple[object, float]]) -> str:
    """The same series made with prometheus_client's own classes."""
    r = CollectorRegistry()
    events = Counter(
        "hookgate_events", "Events answered, by event name and merged decision.", ["event", "decision"], registry=r
    )
    event_seconds = Histogram(
        "hookgate_event_duration_seconds", "Time to answer one event.", ["event"], buckets=LATENCY_BUCKETS, registry=r
    )
    handler_seconds = Histogram(
        "hookgate_handler_duration_seconds",
        "Run time of one handler.",
        ["handler", "type"],
        buckets=LATENCY_BUCKETS,
        registry=r,
    )
    errors = Counter(
        "hookgate_handler_errors", "Handler failures (error or timeout).", ["handler", "type", "status"], registry=r
    )
    for decision, seconds in observations:
        events.labels(decision.event, decision_label(decision)).inc()  # type: ignore[attr-defined]
        event_seconds.labels(decision.event).observe(seconds)  # type: ignore[attr-defined]
        for result in decision.results:  # type: ignore[attr-defined]
            if result.status in ("ok", "error", "timeout"):
                handler_seconds.labels(result.id, result.type).observe(result.duration_ms / 1000)
            if result.failed:
                errors.labels(result.id, result.type, result.status).inc()
    events.labels("BeforeModel", "passthrough").inc()
    return generate_latest(r).decode()


def families(text: str, names: tuple[str, ...]) -> list[str]:
    return sorted(line for line in text.splitlines() if any(n in line for n in names) and "_created" not in line)


def test_the_scrape_shows_what_prometheus_client_would() -> None:
    metrics = Metrics()
    observations = [(d, s) for d, s in zip(DECISIONS, SECONDS, strict=True)] * 3
    for decision, seconds in observations:
        metrics.observe(decision, seconds)
    metrics.count_event("BeforeModel", "passthrough")
    ours = metrics.render()[0].decode()
    names = ("hookgate_events", "hookgate_event_duration", "hookgate_handler_duration", "hookgate_handler_errors")
    assert families(ours, names) == families(reference(observations), names)
    assert 'hookgate_handler_errors_total{handler="hook",status="timeout",type="http"} 3.0' in ours
    assert 'hookgate_event_duration_seconds_bucket{event="PreToolUse",le="0.001"} 6.0' in ours  # 0.001 is in le=0.001


def test_families_are_declared_before_anything_is_observed() -> None:
    text = Metrics().render()[0].decode()
    for name, kind in (
        ("hookgate_events_total", "counter"),
        ("hookgate_event_duration_seconds", "histogram"),
        ("hookgate_handler_duration_seconds", "histogram"),
        ("hookgate_handler_errors_total", "counter"),
    ):
        assert f"# TYPE {name} {kind}" in text
