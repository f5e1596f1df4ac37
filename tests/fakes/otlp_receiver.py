"""A loopback OTLP/HTTP trace receiver: ``POST /v1/traces`` with an ``ExportTraceServiceRequest``
(protobuf, optionally gzip), decoded with ``opentelemetry-proto``; spans are kept as plain dicts.

    with OtlpReceiver() as otlp:
        ... export to otlp.endpoint ...
        spans = otlp.wait_spans(3)
        spans[0] == {"name": ..., "trace_id": "hex", "span_id": "hex", "parent_span_id": "hex" | "",
                     "start_ns": int, "end_ns": int, "status": "STATUS_CODE_UNSET" | ..., "attributes": {...},
                     "resource": {...}, "scope": "hookgate.audit"}
"""

from __future__ import annotations

import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.serving import ServerThread, listening_socket, server_on


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    value = getattr(any_value, kind)
    if kind == "array_value":
        return [_value(v) for v in value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.values}
    return value


def decode(body: bytes) -> list[dict[str, Any]]:
    """The spans of one export request body."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.trace.v1.trace_pb2 import Status

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        resource = {kv.key: _value(kv.value) for kv in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    {
                        "name": span.name,
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "start_ns": span.start_time_unix_nano,
                        "end_ns": span.end_time_unix_nano,
                        "status": Status.StatusCode.Name(span.status.code),
                        "attributes": {kv.key: _value(kv.value) for kv in span.attributes},
                        "resource": resource,
                        "scope": scope_spans.scope.name,
                    }
                )
    return spans


class OtlpReceiver:
    """Receives OTLP/HTTP trace exports on 127.0.0.1 (see module docstring)."""

    def __init__(self, port: int = 0) -> None:
        self.port = port  # 0: a free one
        self.spans: list[dict[str, Any]] = []
        self.requests: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._thread: ServerThread | None = None

    @property
    def endpoint(self) -> str:
        """The collector base URL (what ``OTEL_EXPORTER_OTLP_ENDPOINT`` takes)."""
        assert self._thread is not None
        return f"http://127.0.0.1:{self._thread.port}"

    def __enter__(self) -> OtlpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                spans = decode(body)
                with receiver._lock:
                    receiver.requests.append(dict(self.headers.items()))
                    receiver.spans.extend(spans)
                from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self._thread = ServerThread(server_on(listening_socket(port=self.port), Handler), "otlp-receiver")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._thread.stop()

    def wait_spans(self, count: int, timeout: float = 15.0) -> list[dict[str, Any]]:
        """At least ``count`` spans (all received so far); fails after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.spans) >= count:
                    return list(self.spans)
            time.sleep(0.05)
        raise AssertionError(f"expected {count} spans within {timeout} s, got {len(self.spans)}: {self.spans}")
