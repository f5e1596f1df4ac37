"""Prometheus metrics of ``hookgate serve`` in a private registry (``prometheus_client``, imported when
the server starts): events by decision, handler durations and errors, in-flight events, reloads and
rejected requests (see ``gateway.serve``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.decision import Decision

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def decision_label(decision: Decision) -> str:
    """The ``decision`` metric label: deny | defer | ask | allow | block | none (``passthrough`` is
    counted apart, for a host event hookgate leaves alone)."""
    if decision.permission is not None:
        return decision.permission
    return "block" if decision.block else "none"


class Metrics:
    """Prometheus metrics in a private registry (``prometheus_client``; see module docstring)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

        disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series: they double the exposition for no use here
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.events = Counter(
            "hookgate_events", "Events answered, by event name and merged decision.", ["event", "decision"], registry=r
        )
        self.event_seconds = Histogram(
            "hookgate_event_duration_seconds",
            "Time to answer one event.",
            ["event"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.handler_seconds = Histogram(
            "hookgate_handler_duration_seconds",
            "Run time of one handler.",
            ["handler", "type"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.handler_errors = Counter(
            "hookgate_handler_errors", "Handler failures (error or timeout).", ["handler", "type", "status"], registry=r
        )
        self.inflight = Gauge("hookgate_inflight_events", "Events being dispatched now.", registry=r)
        self.dispatching = 0
        """Events being dispatched now: a plain count on the request path, read by the gauge when scraped."""
        self.inflight.set_function(lambda: self.dispatching)
        self.reloads = Counter("hookgate_config_reloads", "Config reloads, by result.", ["result"], registry=r)
        self.rejected = Counter(
            "hookgate_requests_rejected", "Requests refused before dispatch, by reason.", ["reason"], registry=r
        )
        # the labelled children, looked up once per label set (``labels()`` validates and locks every time)
        self._children: dict[tuple[Any, ...], Any] = {}

    def _child(self, metric: Any, *labels: str) -> Any:
        key = (id(metric), *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def observe(self, decision: Decision, seconds: float) -> None:
        """Count one answered event: its decision, its time (seconds) and each handler's."""
        self._child(self.events, decision.event, decision_label(decision)).inc()
        self._child(self.event_seconds, decision.event).observe(seconds)
        for result in decision.results:
            if result.status in ("ok", "error", "timeout"):
                self._child(self.handler_seconds, result.id, result.type).observe(result.duration_ms / 1000)
            if result.failed:
                self._child(self.handler_errors, result.id, result.type, result.status).inc()

    def render(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST
