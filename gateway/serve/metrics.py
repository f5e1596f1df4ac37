"""Prometheus metrics of ``hookgate serve`` in a private registry (``prometheus_client``, imported when
the server starts): events by decision, handler durations and errors, in-flight events, reloads and
rejected requests (see ``gateway.serve``)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
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
    """Prometheus metrics in a private registry (``prometheus_client``; see module docstring).

    The per-event series (``hookgate_events``, ``hookgate_event_duration_seconds``,
    ``hookgate_handler_duration_seconds``, ``hookgate_handler_errors``) are plain counts and bucket
    arrays on the request path (``observe``: a dict lookup and a ``bisect`` per series, no lock: the
    event loop is the only writer) and become metric families only when ``/metrics`` is scraped
    (``_Collector``), with the same names, labels, buckets and exposition as prometheus_client's own
    ``Counter``/``Histogram``. The rare ones (reloads, rejected requests) are its own ``Counter``s."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, disable_created_metrics

        disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series: they double the exposition for no use here
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self._events: dict[tuple[str, str], float] = {}
        self._event_seconds: dict[tuple[str, ...], _Buckets] = {}
        self._handler_seconds: dict[tuple[str, ...], _Buckets] = {}
        self._handler_errors: dict[tuple[str, str, str], float] = {}
        r.register(_Collector(self))
        self.inflight = Gauge("hookgate_inflight_events", "Events being dispatched now.", registry=r)
        self.dispatching = 0
        """Events being dispatched now: a plain count on the request path, read by the gauge when scraped."""
        self.inflight.set_function(lambda: self.dispatching)
        self.reloads = Counter("hookgate_config_reloads", "Config reloads, by result.", ["result"], registry=r)
        self.rejected = Counter(
            "hookgate_requests_rejected", "Requests refused before dispatch, by reason.", ["reason"], registry=r
        )

    def count_event(self, event: str, decision: str) -> None:
        """One more ``hookgate_events`` for ``event`` answered with ``decision`` (a ``decision_label``, or
        ``passthrough``)."""
        key = (event, decision)
        self._events[key] = self._events.get(key, 0.0) + 1.0

    def observe(self, decision: Decision, seconds: float) -> None:
        """Count one answered event: its decision, its time (seconds) and each handler's."""
        event = decision.event
        self.count_event(event, decision_label(decision))
        _observe(self._event_seconds, (event,), seconds)
        for result in decision.results:
            status = result.status
            if status in ("ok", "error", "timeout"):
                _observe(self._handler_seconds, (result.id, result.type), result.duration_ms / 1000)
            if status in ("error", "timeout"):
                key = (result.id, result.type, status)
                self._handler_errors[key] = self._handler_errors.get(key, 0.0) + 1.0

    def render(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class _Buckets:
    """One histogram child: a count per bucket (not cumulative; the last is ``+Inf``) and the sum."""

    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(LATENCY_BUCKETS) + 1)
        self.sum = 0.0


def _observe(children: dict[tuple[str, ...], _Buckets], labels: tuple[str, ...], value: float) -> None:
    child = children.get(labels)
    if child is None:
        child = children[labels] = _Buckets()
    child.counts[bisect_left(LATENCY_BUCKETS, value)] += 1  # le: a value equal to a bound is in its bucket
    child.sum += value


class _Collector:
    """The per-event series of a ``Metrics``, as metric families at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def describe(self) -> list[Any]:
        return []  # nothing to check names against at registration: these are the only ones

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
        from prometheus_client.utils import floatToGoString

        m = self.metrics
        events = CounterMetricFamily(
            "hookgate_events", "Events answered, by event name and merged decision.", labels=["event", "decision"]
        )
        for event_labels, value in list(m._events.items()):
            events.add_metric(list(event_labels), value)
        yield events
        bounds = [floatToGoString(b) for b in LATENCY_BUCKETS] + ["+Inf"]  # type: ignore[no-untyped-call]
        for name, text, label_names, children in (
            ("hookgate_event_duration_seconds", "Time to answer one event.", ["event"], m._event_seconds),
            (
                "hookgate_handler_duration_seconds",
                "Run time of one handler.",
                ["handler", "type"],
                m._handler_seconds,
            ),
        ):
            family = HistogramMetricFamily(name, text, labels=label_names)
            for child_labels, child in list(children.items()):
                cumulative, total = [], 0
                for bound, count in zip(bounds, child.counts, strict=True):
                    total += count
                    cumulative.append((bound, float(total)))
                family.add_metric(list(child_labels), cumulative, child.sum)
            yield family
        errors = CounterMetricFamily(
            "hookgate_handler_errors",
            "Handler failures (error or timeout).",
            labels=["handler", "type", "status"],
        )
        for error_labels, value in list(m._handler_errors.items()):
            errors.add_metric(list(error_labels), value)
        yield errors
