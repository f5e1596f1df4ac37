"""The ``http`` handler: POST the event JSON to a webhook and read its answer like a command's stdout.

Semantics follow Claude Code's hooks reference (§3.3); the extras are hookgate's:

- Request: ``POST url`` with ``Content-Type: application/json``; the body is the JSON a command hook of
  the same config dialect gets on stdin (``gateway.dialects.host_payload``), minified, sent as the
  exact bytes that were signed. Redirects are never followed (a 3xx is a failure).
- ``headers`` values and ``url`` interpolate ``$VAR`` / ``${VAR}`` for names listed in
  ``allowedEnvVars``; any other variable is a config error (``check``), and a listed one that is unset
  fails the delivery before it is made (never sent empty). Claude Code refuses variables in ``url``;
  hookgate allows them under the same allow-list.
- Answer: 2xx with an empty body = no decision; 2xx with a JSON object = parsed with
  ``gateway.answers.verdict_from_json`` (the same parser as a command's stdout); any other body, a
  non-2xx status, a connection failure, a body over ``webhook_client.MAX_BODY`` (1 MiB) = ``HandlerError``
  (a non-blocking error, or deny/block with ``failClosed: true``). A timeout is the dispatcher's.
- Retries (tenacity): only connect errors, connect timeouts, 429 and 5xx, at most ``retries`` times
  (default 1), with exponential backoff and jitter (``Retry-After`` honoured), and never past the
  handler's deadline (``stop_before_delay`` on the time left). The first attempt is made directly;
  tenacity is imported and takes over only after a retryable failure.
- Standard Webhooks headers on every delivery: ``webhook-id`` (the same on every retry),
  ``webhook-timestamp`` (unix seconds of this attempt) and, when ``signingSecretEnv`` names an
  environment variable holding a ``whsec_``/base64 secret, ``webhook-signature: v1,<base64 HMAC-SHA256
  of "id.timestamp.body">``.
- SSRF guard (``handlers.netguard``): non-loopback URLs may not reach private, link-local, CGNAT or
  metadata addresses unless ``allowPrivateNetworks: true``; the name is resolved once and the checked
  IP is dialed (``handlers.webhook_client``).
- One pooled ``handlers.webhook_client.WebhookClient`` (aiohttp) per ``RunContext``
  (``ctx.get_resource(CLIENT_RESOURCE)``), so ``hookgate serve`` keeps connections warm. aiohttp is
  imported only when a delivery is made.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import json
import os
import re
import time
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple
from urllib.parse import urlsplit

from gateway.answers import first_line, trim, verdict_from_json
from gateway.decision import Verdict
from gateway.dialects import host_payload
from gateway.errors import AddressBlocked, HandlerError, HookgateError
from gateway.events import dump_bytes
from handlers.base import Handler

if TYPE_CHECKING:
    import ssl
    from collections.abc import Awaitable, Callable

    from gateway.config.specs import HandlerSpec
    from gateway.context import RunContext
    from gateway.events import HookEvent
    from handlers.netguard import Resolver
    from handlers.webhook_client import WebhookClient

CLIENT_RESOURCE = "http.client"
"""Name of the shared ``handlers.webhook_client.WebhookClient`` in ``RunContext`` resources."""
CONNECT_TIMEOUT = 5.0
"""Seconds allowed to resolve and connect (capped by the time left before the deadline)."""
USER_AGENT = "hookgate/0.1.0"
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_RESERVED_HEADERS = frozenset(
    {
        "content-type",
        "content-length",
        "host",
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
        "transfer-encoding",
        "accept-encoding",
    }
)


def interpolate(text: str, allowed: list[str] | tuple[str, ...], environ: Any = None) -> str:
    """Replace ``$VAR``/``${VAR}``: allowed names by their value (empty when unset), others by ``""``."""
    if "$" not in text:  # the common case (a fixed URL, fixed headers): nothing to look up
        return text
    env = os.environ if environ is None else environ

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return str(env.get(name, "")) if name in allowed else ""

    return _VAR.sub(value, text)


def variables(text: str) -> list[str]:
    """The variable names ``text`` refers to, in order."""
    return [m.group(1) or m.group(2) for m in _VAR.finditer(text)]


_NOT_IN_HOSTS = frozenset('<>"{}|\\^`')
"""Characters a URL's host cannot hold (RFC 3986 reg-name), beside whitespace and control characters."""


@functools.lru_cache(maxsize=1024)  # a pure function of its arguments, checked on every delivery
def url_problem(url: str, *, allow_private: bool = False) -> str | None:
    """What is wrong with an (interpolated) webhook URL, or None: the one check ``hookgate validate``
    and the handler at delivery time both apply (``handlers.netguard.host_problem`` for the host)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a bad port)
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if parts.scheme not in ("http", "https"):
        return f"scheme must be http or https, got {parts.scheme or 'none'!r}"
    if not parts.hostname:
        return "has no host"
    if parts.username is not None or parts.password is not None:
        return "must not carry credentials (user:password@); send them in headers"
    bad = next((c for c in parts.hostname if c.isspace() or not c.isprintable() or c in _NOT_IN_HOSTS), None)
    if bad is not None:  # no resolver finds such a name, so a delivery could only ever fail
        return f"has {bad!r} in its host {parts.hostname!r}, which no host name holds"
    from handlers.netguard import host_problem

    return host_problem(parts.hostname, allow_private=allow_private)


def secret_problem(name: str | None) -> str | None:
    """What is wrong with the signing secret in ``$name`` (unset, malformed), or None (also for no name)."""
    if not name:
        return None
    value = os.environ.get(name)
    if not value:
        return f"signingSecretEnv names ${name}, which is not set"
    try:
        decode_secret(value)
    except ValueError as exc:
        return f"the signing secret in ${name} {exc}"
    return None


def decode_secret(value: str) -> bytes:
    """A Standard Webhooks symmetric secret: optional ``whsec_`` prefix, then base64. Raises ValueError."""
    raw = value.strip().removeprefix("whsec_")
    try:
        secret = base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)  # unpadded is accepted too
    except (binascii.Error, ValueError):
        raise ValueError("is not base64 (expected whsec_<base64>)") from None
    if not secret:
        raise ValueError("is empty")
    return secret


def sign(secret: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value: ``v1,`` + base64 HMAC-SHA256 of ``id.timestamp.body``."""
    digest = hmac.new(secret, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def make_client(resolver: Resolver | None = None, ssl_context: ssl.SSLContext | None = None) -> WebhookClient:
    """The shared, pooled client (``handlers.webhook_client``): SSRF-guarded, no redirects, no proxies.

    ``resolver`` and ``ssl_context`` replace the system resolver and trust store (tests, private CAs).
    """
    from handlers.webhook_client import WebhookClient

    return WebhookClient(resolver=resolver, ssl_context=ssl_context, user_agent=USER_AGENT)


async def close_client(client: WebhookClient) -> None:
    await client.aclose()


class _RetryableStatus(HookgateError):
    """A 429 or 5xx answer (retried while the budget lasts)."""

    def __init__(self, status: int, detail: str, retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}" + (f": {detail}" if detail else ""))
        self.status = status
        self.retry_after = retry_after


@functools.cache
def _retry_wait() -> Any:
    """Tenacity wait: the answer's ``Retry-After`` seconds when given, else exponential backoff with
    jitter (0.25 s, 0.5 s, 1 s, ... capped at 2 s, plus up to 0.25 s)."""
    import tenacity

    backoff = tenacity.wait_exponential_jitter(multiplier=0.25, max=2.0, jitter=0.25)

    class RetryAfterOrBackoff(tenacity.wait.wait_base):
        def __call__(self, retry_state: tenacity.RetryCallState) -> float:
            outcome = retry_state.outcome
            exc = outcome.exception() if outcome is not None else None
            if isinstance(exc, _RetryableStatus) and exc.retry_after is not None:
                return exc.retry_after
            return float(backoff(retry_state))

    return RetryAfterOrBackoff()


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: fall back to the backoff schedule


class HttpHandler(Handler):
    """POSTs the event to a webhook (see module docstring)."""

    type: ClassVar[str] = "http"

    @classmethod
    def options_model(cls) -> Any:
        return _options_model()

    def describe(self) -> str:
        return f"POST {self.spec.options['url']}"

    @classmethod
    def check(cls, spec: HandlerSpec, base_dir: str) -> list[str]:
        options = spec.options
        template: str = options["url"]
        allowed = options.get("allowed_env_vars") or []
        problems = [
            f"url: ${name} is not listed in allowedEnvVars, so it would become an empty string"
            for name in dict.fromkeys(variables(template))
            if name not in allowed
        ]
        for header, value in (options.get("headers") or {}).items():
            if not _HEADER_NAME.match(header):
                problems.append(f"headers: {header!r} is not a valid header name")
            elif header.lower() in _RESERVED_HEADERS:
                problems.append(f"headers.{header}: set by hookgate itself; remove it")
            problems.extend(
                f"headers.{header}: ${name} is not listed in allowedEnvVars, so it would become an empty string"
                for name in dict.fromkeys(variables(value))
                if name not in allowed
            )
        if problems:
            return problems
        if any(name not in os.environ for name in variables(template)):
            return []  # checked at delivery time, when the variables are set
        url = interpolate(template, allowed)
        problem = url_problem(url, allow_private=bool(options.get("allow_private_networks")))
        if problem:
            return [f"url: {url!r} {problem}"]
        return []

    @classmethod
    def environment(cls, spec: HandlerSpec) -> list[str]:
        options = spec.options
        problems = []
        secret = secret_problem(options.get("signing_secret_env"))
        if secret:
            problems.append(f"signingSecretEnv: {secret}: every delivery would fail")
        allowed = options.get("allowed_env_vars") or []
        texts = [options["url"], *(options.get("headers") or {}).values()]
        names = dict.fromkeys(v for t in texts for v in variables(t))
        unset = [n for n in names if n in allowed and n not in os.environ]
        problems.extend(
            f"allowedEnvVars: ${name} is not set, so it would become an empty string in the request" for name in unset
        )
        return problems

    async def run(self, event: HookEvent, ctx: RunContext) -> tuple[Verdict, dict[str, Any]]:
        started = time.monotonic()
        target = self._fixed or self._target()
        secret = self._secret()
        body = dump_bytes(host_payload(event, self.spec.dialect))
        msg_id = f"msg_{os.urandom(16).hex()}"  # 128 random bits (uuid4 costs 5x as much per delivery)
        meta: dict[str, Any] = {"webhook_id": msg_id, "attempts": 0}
        status, answer = await self._deliver(ctx, target, body, msg_id, secret, started, meta)
        meta["status"] = status
        if not 200 <= status < 300:
            where = self.spec.options["url"]
            raise HandlerError(
                f"HTTP {status} from {where}" + (f": {first_line(answer)}" if answer.strip() else ""), meta
            )
        text = trim(answer)  # (a leading byte order mark too, as JavaScript's trim)
        if not text:
            return Verdict(), meta
        if not text.startswith("{"):
            raise HandlerError(f"HTTP {status} answer is not a JSON object: {first_line(text)[:200]}", meta)
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise HandlerError(
                f"HTTP {status} answer is not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})", meta
            ) from None
        try:
            return verdict_from_json(obj, event), meta
        except HandlerError as exc:
            raise HandlerError(str(exc), meta) from None

    _fixed: _Target | None = None
    """The target of a handler whose url and headers name no variable: built on the first delivery."""

    def _target(self) -> _Target:
        """The interpolated url (checked by ``url_problem``, the rule ``hookgate validate`` applies) and
        the headers every attempt sends. Raises HandlerError. Kept for later deliveries (``_fixed``) when
        nothing in it comes from the environment; else built again on every delivery, from the
        environment as it is then."""
        options = self.spec.options
        allowed = options.get("allowed_env_vars") or []
        allow_private = bool(options.get("allow_private_networks"))
        template = options["url"]
        own = options.get("headers") or {}
        if "$" in template or any("$" in value for value in own.values()):
            texts = [template, *own.values()]
            unset = [
                n for n in dict.fromkeys(v for t in texts for v in variables(t)) if n in allowed and n not in os.environ
            ]
            if unset:  # a webhook's url or header never goes out half-filled (validate says the same)
                raise HandlerError(
                    f"allowedEnvVars: ${unset[0]} is not set, so the request would go out with it empty; not sent"
                )
        url = interpolate(template, allowed)
        problem = url_problem(url, allow_private=allow_private)
        if problem:
            raise HandlerError(f"url {template!r} {problem} after interpolation")
        headers = {name: interpolate(value, allowed) for name, value in own.items()}
        for name, value in headers.items():
            if "\r" in value or "\n" in value:
                raise HandlerError(f"header {name} contains a line break after interpolation")
        headers["Content-Type"] = "application/json"
        headers["Accept-Encoding"] = "identity"
        target = _Target(url, headers, allow_private, int(options.get("retries", 1)))
        if "$" not in template and not any("$" in value for value in own.values()):
            self._fixed = target
        return target

    def _secret(self) -> bytes | None:
        """The signing secret, read from the environment on every delivery. Raises HandlerError."""
        name = self.spec.options.get("signing_secret_env")
        if not name:
            return None
        try:
            return _decoded(os.environ.get(name), name)
        except ValueError as exc:
            raise HandlerError(str(exc)) from None

    async def _deliver(
        self,
        ctx: RunContext,
        target: _Target,
        body: bytes,
        msg_id: str,
        secret: bytes | None,
        started: float,
        meta: dict[str, Any],
    ) -> tuple[int, str]:
        """POST with retries; return ``(status, body text)`` of the last answer. Raises HandlerError.

        The first attempt runs without any retry machinery (the common case: one answer); only when it
        fails in a retryable way does tenacity take over, starting from that failure, for the rest of the
        ``retries`` and the time left. The deadline itself (``started`` + the handler's ``timeout``) is
        enforced around the whole delivery by the dispatcher (``asyncio.timeout``); here it caps the
        connect timeout and ends the retries.
        """
        client: WebhookClient = ctx.get_resource(CLIENT_RESOURCE, make_client, close_client)
        deadline = started + self.spec.timeout
        url, fixed, allow_private = target.url, target.headers, target.allow_private

        async def attempt() -> tuple[int, str]:
            meta["attempts"] += 1
            left = deadline - time.monotonic()
            timestamp = int(time.time())
            headers = fixed.copy()
            headers["webhook-id"] = msg_id
            headers["webhook-timestamp"] = str(timestamp)
            if secret is not None:
                headers["webhook-signature"] = sign(secret, msg_id, timestamp, body)
            answer = await client.post(
                url,
                body,
                headers,
                connect_timeout=CONNECT_TIMEOUT if left >= CONNECT_TIMEOUT else max(left, 0.001),
                allow_private=allow_private,
            )
            status = answer.status
            if status == 429 or 500 <= status <= 599:
                raise _RetryableStatus(status, first_line(answer.text)[:200], _retry_after(answer.retry_after))
            return status, answer.text

        try:
            return await attempt()
        except Exception as first:  # the failure's handling imports what it needs (aiohttp is loaded by now)
            from handlers.webhook_client import DeliveryError

            where = self.spec.options["url"]
            try:
                if isinstance(first, (_RetryableStatus, DeliveryError)) and target.retries and _retryable(first):
                    return await _retry(attempt, first, target.retries, deadline)
                raise
            except _RetryableStatus as exc:
                meta["status"] = exc.status
                raise HandlerError(f"{exc} from {where} ({_attempts(meta['attempts'])})", meta) from None
            except AddressBlocked as exc:
                raise HandlerError(str(exc), meta) from None
            except DeliveryError as exc:
                if exc.status is not None:
                    meta["status"] = exc.status
                raise HandlerError(f"{where}: {exc} ({_attempts(meta['attempts'])})", meta) from None


class _Target(NamedTuple):
    """Where and how one handler delivers: the interpolated url, the headers every attempt sends (the
    configured ones, interpolated, plus ``Content-Type`` and ``Accept-Encoding``), the SSRF policy, the
    retry count."""

    url: str
    headers: dict[str, str]
    allow_private: bool
    retries: int


@functools.lru_cache(maxsize=64)
def _decoded(value: str | None, name: str) -> bytes:
    """``decode_secret`` of the value of ``$name`` (cached by value, so a changed variable is read anew).
    Raises ValueError with the message ``secret_problem`` gives."""
    if not value:
        raise ValueError(f"signingSecretEnv names ${name}, which is not set")
    try:
        return decode_secret(value)
    except ValueError as exc:
        raise ValueError(f"the signing secret in ${name} {exc}") from None


async def _retry(
    attempt: Callable[[], Awaitable[tuple[int, str]]], failure: Exception, retries: int, deadline: float
) -> tuple[int, str]:
    """Retry ``attempt`` with tenacity after its first ``failure``: at most ``retries`` more attempts, waits
    of ``_retry_wait``, never past ``deadline`` (``stop_before_delay``). Reraises the last failure."""
    import tenacity

    pending = [failure]

    async def again() -> tuple[int, str]:
        if pending:  # tenacity's first attempt is the one already made: replay its failure
            raise pending.pop()
        return await attempt()

    retrying = tenacity.AsyncRetrying(
        stop=tenacity.stop_after_attempt(retries + 1)
        | tenacity.stop_before_delay(max(deadline - time.monotonic() - 0.05, 0.0)),
        wait=_retry_wait(),
        retry=tenacity.retry_if_exception(_retryable),
        reraise=True,
    )
    result: tuple[int, str] = await retrying(again)
    return result


def _retryable(exc: BaseException) -> bool:
    """429/5xx answers, connect failures and connect timeouts (nothing that may have reached the receiver's
    handler and failed there, apart from the statuses that say so)."""
    from handlers.webhook_client import DeliveryError

    return isinstance(exc, _RetryableStatus) or (isinstance(exc, DeliveryError) and exc.retryable)


def _options_model() -> Any:
    from pydantic import BaseModel, ConfigDict, Field

    class HttpOptions(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True)
        url: str = Field(min_length=1)
        headers: dict[str, str] = Field(default_factory=dict)
        allowed_env_vars: list[str] = Field(default_factory=list, alias="allowedEnvVars")
        retries: int = Field(1, ge=0, le=10)
        signing_secret_env: str | None = Field(None, alias="signingSecretEnv", min_length=1)
        allow_private_networks: bool = Field(False, alias="allowPrivateNetworks")

    return HttpOptions


def _attempts(n: int) -> str:
    """``"1 attempt"``, ``"2 attempts"``: how many deliveries an error message's answer took."""
    return f"{n} attempt" if n == 1 else f"{n} attempts"
