"""OpenTelemetry spans for recorded events (optional: ``pip install 'hookgate[otel]'``).

Imported only when ``audit.otel`` is set or ``OTEL_EXPORTER_OTLP_ENDPOINT`` is in the environment
(``gateway.audit.recorder.otel_wanted``); the SDK costs ~30 ms to import. Spans go over OTLP/HTTP
(protobuf) with the SDK's ``OTLPSpanExporter``: to ``audit.otel.endpoint`` + ``/v1/traces`` when set,
else wherever the standard ``OTEL_EXPORTER_OTLP_*`` variables say. ``hookgate run`` exports when the
process ends (``close``: one request), ``hookgate serve`` batches (``BatchSpanProcessor``); either way
``close`` waits for the collector at most ``CLOSE_SECONDS`` (``RUN_CLOSE_SECONDS`` for ``hookgate run``,
whose host waits for the process to end), whatever ``OTEL_EXPORTER_OTLP_TIMEOUT`` says, then lets the
export go (its thread is a daemon) with one line on stderr: a collector that does not answer never holds
back a hook's answer, nor a server's shutdown. The SDK's own log lines (``Failed to export ...``) are
kept off stderr, where a blocked hook's first line is the reason the agent reads; one line of hookgate's
says when spans were not exported (``hookgate serve`` logs it as soon as an export fails, once per
outage, and again when spans go out).

Spans are built after the fact from the redacted audit record, with explicit times, so nothing of
OpenTelemetry runs on the dispatch path:

- one span per dispatch, ``execute_tool <tool>`` on tool events, else ``hookgate <event>``, from the
  dispatch start to the record's time (when the answer was decided, not when the record is written);
  attributes (GenAI semantic conventions where they fit):
  ``gen_ai.operation.name`` = ``execute_tool`` (tool events), ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id`` (``tool_use_id``), ``gen_ai.conversation.id`` (``session_id``), plus
  ``hookgate.event``, ``hookgate.host``, ``hookgate.decision``, ``hookgate.reason``;
- one child span per handler, ``hookgate.handler <id>``, starting with the dispatch and lasting its
  ``duration_ms``: ``hookgate.handler.id``, ``hookgate.handler.type``, ``hookgate.handler.status``,
  ``hookgate.handler.verdict``, ``hookgate.reason``, ``gen_ai.tool.name``; a failed handler (error,
  timeout) sets ``error.type`` to its status and the span status to ERROR.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.decision import Decision

RUN_CLOSE_SECONDS = 1.0
"""Seconds ``hookgate run`` waits for the collector at exit (also the export's own timeout when no OTEL
timeout variable sets one)."""
CLOSE_SECONDS = 2.0
"""Seconds ``hookgate serve`` waits for the collector when it stops."""
SCOPE = "hookgate.audit"
DEFAULT_TRACES = "http://localhost:4318/v1/traces"
"""Where the SDK's OTLP/HTTP exporter sends spans when nothing says where."""


def traces_endpoint(endpoint: str | None) -> str | None:
    """``endpoint`` (a collector base URL) as its OTLP/HTTP traces URL; None: let the SDK read the
    environment."""
    if not endpoint:
        return None
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"


class Telemetry:
    """A tracer provider with an OTLP/HTTP exporter. otel: the normalized ``audit.otel`` dict (may be
    empty). batch: export every second (long-lived processes), else at ``close``. version: hookgate's.
    Raises HookgateError (ConfigError) when the SDK is not installed."""

    def __init__(self, otel: dict[str, Any], *, batch: bool, version: str = "") -> None:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError as exc:
            from gateway.errors import ConfigError

            raise ConfigError(
                f"audit.otel: the OpenTelemetry SDK is not installed ({exc}); pip install 'hookgate[otel]'"
            ) from None
        import logging

        otel_log = logging.getLogger("opentelemetry")  # the SDK's lines would land on the hook's stderr
        otel_log.addHandler(logging.NullHandler())
        otel_log.propagate = False
        timeout = None
        if not batch and not (
            os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        ):
            timeout = RUN_CLOSE_SECONDS
        endpoint = traces_endpoint(otel.get("endpoint"))
        self.where = (
            endpoint
            or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
            or f"{DEFAULT_TRACES} (the default: neither audit.otel.endpoint nor OTEL_EXPORTER_OTLP_ENDPOINT is set)"
        )
        self.batch = batch
        self.exporter = _Outcome(
            OTLPSpanExporter(endpoint=endpoint, headers=otel.get("headers") or None, timeout=timeout),
            where=self.where if batch else None,
        )
        resource = Resource.create({"service.name": otel.get("service_name") or "hookgate", "service.version": version})
        # shutdown_on_exit=False: the SDK's own atexit shutdown would wait for the exporter without a bound
        self.provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        # One processor either way: in run mode the batch is flushed (one request) at close.
        self.provider.add_span_processor(
            BatchSpanProcessor(self.exporter, schedule_delay_millis=1000 if batch else 60_000)  # type: ignore[arg-type]  # a SpanExporter by duck typing (the SDK is imported here, lazily)
        )
        self.tracer = self.provider.get_tracer(SCOPE, version)

    def emit(
        self,
        record: dict[str, Any],
        decision: Decision | None = None,
        started_ns: int | None = None,
        ended_ns: int | None = None,
    ) -> None:
        """Spans for one (redacted) record; ``started_ns``: dispatch start (``time.time_ns()``); ``ended_ns``:
        when the answer was decided (the record's time; default: now). A server writes its records a
        batch at a time, up to a quarter second later and after the store's commit: that wait is not the
        dispatch's, so the span ends at ``ended_ns``, not when it is emitted."""
        from opentelemetry import trace
        from opentelemetry.trace import Status, StatusCode

        end_ns = time.time_ns() if ended_ns is None else ended_ns
        if started_ns is not None and end_ns < started_ns:  # the wall clock stepped back meanwhile
            end_ns = started_ns
        handlers = record.get("handlers") or []
        if started_ns is None:
            longest = max((float(h.get("duration_ms") or 0) for h in handlers), default=0.0)
            started_ns = end_ns - int(longest * 1e6)
        tool = record.get("tool_name")
        tool_event = tool is not None
        attrs: dict[str, Any] = {
            "hookgate.event": record.get("event"),
            "hookgate.host": record.get("host"),
            "hookgate.decision": record.get("decision"),
            "hookgate.reason": record.get("reason"),
        }
        if tool_event:
            attrs["gen_ai.operation.name"] = "execute_tool"
            attrs["gen_ai.tool.name"] = tool
        attrs["gen_ai.tool.call.id"] = record.get("tool_use_id")
        attrs["gen_ai.conversation.id"] = record.get("session_id")
        name = f"execute_tool {tool}" if tool_event else f"hookgate {record.get('event')}"
        parent = self.tracer.start_span(name, attributes=_clean(attrs), start_time=started_ns)
        failed = False
        context = trace.set_span_in_context(parent)
        for handler in handlers:
            status = handler.get("status")
            h_attrs = {
                "hookgate.handler.id": handler.get("id"),
                "hookgate.handler.type": handler.get("type"),
                "hookgate.handler.status": status,
                "hookgate.handler.verdict": handler.get("verdict"),
                "hookgate.reason": handler.get("reason"),
                "gen_ai.tool.name": tool,
            }
            if status in ("error", "timeout"):
                h_attrs["error.type"] = status
            duration_ns = int(float(handler.get("duration_ms") or 0) * 1e6)
            child = self.tracer.start_span(
                f"hookgate.handler {handler.get('id')}",
                context=context,
                attributes=_clean(h_attrs),
                start_time=started_ns,
            )
            if status in ("error", "timeout"):
                failed = True
                child.set_status(Status(StatusCode.ERROR, str(handler.get("reason") or status)))
            child.end(end_time=min(started_ns + duration_ns, end_ns))
        if failed:
            parent.set_attribute("error.type", "handler_failure")
        parent.end(end_time=end_ns)

    def close(self) -> None:
        """Export what is pending, waiting for the collector at most ``RUN_CLOSE_SECONDS`` (run) or
        ``CLOSE_SECONDS`` (serve); one line on stderr when the spans did not go out. Never raises."""
        import sys
        import threading

        wait = CLOSE_SECONDS if self.batch else RUN_CLOSE_SECONDS
        outcome: list[bool] = []

        def flush() -> None:
            try:
                outcome.append(bool(self.provider.force_flush()))
            except Exception as exc:  # an exporter bug: the spans are lost, the caller goes on
                self.exporter.failure = f"{type(exc).__name__}: {exc}"
                outcome.append(False)

        # The SDK's force_flush exports in the calling thread for as long as the exporter's own timeout
        # (its timeout argument is not used): it runs in a daemon thread, waited for `wait` seconds.
        flusher = threading.Thread(target=flush, name="hookgate-otel-flush", daemon=True)
        flusher.start()
        flusher.join(wait)
        flushed = bool(outcome and outcome[0])
        if flushed and self.exporter.failure is None:
            self.provider.shutdown()  # nothing left to wait for: quick
            return
        why = self.exporter.failure if outcome else None
        why = why or f"the collector did not answer within {wait:g} s"
        sys.stderr.write(f"hookgate: audit: spans not exported to {self.where} ({why}); the records are kept\n")
        sys.stderr.flush()


class _Outcome:
    """The exporter, remembering whether an export failed (``failure``: why, or None): the SDK says so
    only in log lines, which hookgate keeps off stderr (see module docstring). where: a long-lived
    process's collector URL (``hookgate serve``): its log then says when exports start failing (one
    line, ``hookgate.audit`` logger) and when they go out again, not only at shutdown."""

    def __init__(self, exporter: Any, where: str | None = None) -> None:
        self._exporter = exporter
        self._where = where
        self._failing = False
        self.failure: str | None = None

    def export(self, spans: Any) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self._exporter.export(spans)
        except Exception as exc:
            self._failed(f"{type(exc).__name__}: {exc}")
            return SpanExportResult.FAILURE
        if result is not SpanExportResult.SUCCESS:
            self._failed("the collector refused or could not be reached")
        elif self._failing:
            self._failing = False
            if self._where is not None:
                import logging

                logging.getLogger("hookgate.audit").warning("audit: spans are exported to %s again", self._where)
        return result

    def _failed(self, why: str) -> None:
        self.failure = why
        if self._where is not None and not self._failing:  # once per outage, not once per batch
            import logging

            logging.getLogger("hookgate.audit").error(
                "audit: spans not exported to %s (%s); the records are kept; the log says when spans go out again",
                self._where,
                why,
            )
        self._failing = True

    def shutdown(self) -> None:
        self._exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self._exporter.force_flush(timeout_millis))


def _clean(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: v if isinstance(v, (str, bool, int, float)) else str(v) for k, v in attrs.items() if v is not None}
