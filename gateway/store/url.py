"""Which store a config selects, and how to name a store URL without its secrets.

``settings.store`` (or ``$HOOKGATE_STORE_URL``, which wins) is either absent / ``"sqlite"`` (the
embedded SQLite file under ``settings.stateDir``, the default), ``"sqlite:///ABS/PATH/DIR"`` (SQLite
in that directory), or a libpq URL ``postgresql://[user[:password]@]host[:port]/dbname[?param=...]``
(``postgres://`` too). Credentials may be in the URL, in libpq's environment (``PGPASSWORD``,
``PGSERVICE``, ``PGPASSFILE``...), or in a service file / ``~/.pgpass``: libpq reads them itself, and
hookgate never prints a password: every message names the store with ``redact(url)``.

Standard library only (imported on the ``hookgate run`` path before anything knows the store kind).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qsl, urlsplit

ENV_VAR = "HOOKGATE_STORE_URL"
_PG_SCHEMES = ("postgresql", "postgres")
_SECRET_PARAMS = {"password", "sslpassword", "sslkey"}


@dataclass(frozen=True, slots=True)
class StoreUrl:
    """A parsed store selection. ``kind``: ``sqlite`` | ``postgresql``; ``url``: as given (secret)."""

    kind: Literal["sqlite", "postgresql"]
    url: str
    sqlite_dir: str | None = None

    @property
    def display(self) -> str:
        """The URL with any password replaced by ``***`` (safe for logs and errors)."""
        return redact(self.url)


def selected(configured: str | None) -> str | None:
    """The store URL in force: ``$HOOKGATE_STORE_URL`` when set and non-empty, else ``configured``."""
    env = os.environ.get(ENV_VAR, "").strip()
    return env or configured


def parse(value: str | None) -> StoreUrl:
    """Parse a store selection; raises ``ValueError`` (one line, secrets redacted) when it is not one."""
    if value is None or value.strip() in ("", "sqlite"):
        return StoreUrl("sqlite", "sqlite")
    text = value.strip()
    scheme = text.split(":", 1)[0].lower() if ":" in text else ""
    if scheme in _PG_SCHEMES:
        span = _password_span(text)
        if span is not None and any(ch in text[span[0] : span[1]] for ch in "@/?#"):
            raise ValueError(
                f"store URL {redact(text)}: its password holds '@', '/', '?' or '#' as is; "
                "percent-encode them (%40, %2F, %3F, %23) or leave the password out of the URL (PGPASSWORD, ~/.pgpass)"
            )
        try:
            parts = urlsplit(text)
            hosts = parts.netloc.rpartition("@")[2].split(",")  # libpq: host1:port1,host2:port2 (failover)
            for host in hosts:
                _ = urlsplit(f"//{host}").port  # raises ValueError on a non-numeric port
        except ValueError as exc:
            raise ValueError(f"store URL {redact(text)} is not a valid PostgreSQL URL ({exc})") from None
        if (
            parts.path in ("", "/")
            and "dbname" not in dict(parse_qsl(parts.query))
            and not any(hosts)
            and "service" not in dict(parse_qsl(parts.query))
        ):
            raise ValueError(f"store URL {redact(text)} names no host, database or service")
        return StoreUrl("postgresql", text)
    if scheme == "sqlite":
        path = text[len("sqlite:") :]
        if not path.startswith("///"):
            raise ValueError(f"store URL {redact(text)}: a SQLite store is written sqlite:///ABSOLUTE/DIR")
        return StoreUrl("sqlite", text, sqlite_dir=os.path.expanduser(path[2:]))
    raise ValueError(f"store URL {redact(text)}: expected 'sqlite', 'sqlite:///DIR' or 'postgresql://...'")


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_PORTS = re.compile(r"\d*(,[^@]*)?")


def _password_span(url: str) -> tuple[int, int] | None:
    """Where the password of ``url``'s userinfo lies (``user:PASSWORD@host``), or None when it has none.
    Greedy on purpose: a password written with ``@``, ``/``, ``?`` or ``#`` as is (not percent-encoded)
    runs up to the last ``@``, so all of it is hidden, not just what a URL parser would take for it;
    ``host:5432/db`` is a port, not a password, unless an ``@`` follows before the query."""
    m = _SCHEME.match(url)
    if m is None:
        return None
    start = m.end()
    rest = url[start:]
    first = re.search(r"[:@/?#]", rest)
    if first is None or first.group() != ":":
        return None
    at = rest.rfind("@")
    if at < first.start():
        return None
    after = rest[first.end() :]
    stop = re.search(r"[/?#]", after)
    segment = after[: stop.start()] if stop else after
    path = after[stop.start() :].partition("?")[0].partition("#")[0] if stop else ""
    if "@" not in segment and "@" not in path and _PORTS.fullmatch(segment):
        return None  # host:port (a multi-host list too), and the '@' is in the query
    return start + first.end(), start + at


_KV_SECRET = re.compile(r"(?i)\b(password|sslpassword|sslkey)(\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)")


def redact(url: str) -> str:
    """``url`` with the password of its userinfo, any secret query parameter and any secret of a libpq
    ``key=value`` string (``host=db password=...``) shown as ``***``."""
    out = _KV_SECRET.sub(lambda m: f"{m[1]}{m[2]}***", url) if "://" not in url else url
    span = _password_span(out)
    if span is not None:
        out = f"{out[: span[0]]}***{out[span[1] :]}"
    if "?" in out:
        head, _, query = out.partition("?")
        items = []
        for item in query.split("&"):
            name, eq, _val = item.partition("=")
            items.append(f"{name}=***" if eq and name.lower() in _SECRET_PARAMS else item)
        out = head + "?" + "&".join(items)
    return out


def password_of(url: str) -> str | None:
    """The password inside ``url`` (userinfo or ``?password=``), for scrubbing it out of driver messages."""
    span = _password_span(url)
    if span is not None and span[1] > span[0]:
        from urllib.parse import unquote

        return unquote(url[span[0] : span[1]])
    if "?" in url:
        for name, val in parse_qsl(url.partition("?")[2]):
            if name.lower() == "password" and val:
                return val
    return None
