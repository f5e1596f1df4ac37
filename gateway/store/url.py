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
        try:
            parts = urlsplit(text)
            _ = parts.port  # raises ValueError on a non-numeric port
        except ValueError as exc:
            raise ValueError(f"store URL {redact(text)} is not a valid PostgreSQL URL ({exc})") from None
        if (
            parts.path in ("", "/")
            and "dbname" not in dict(parse_qsl(parts.query))
            and not parts.hostname
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


_USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:@/?#]*):(?P<pw>[^@/?#]*)@")


_KV_SECRET = re.compile(r"(?i)\b(password|sslpassword|sslkey)(\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)")


def redact(url: str) -> str:
    """``url`` with the password of its userinfo, any secret query parameter and any secret of a libpq
    ``key=value`` string (``host=db password=...``) shown as ``***``."""
    out = _KV_SECRET.sub(lambda m: f"{m[1]}{m[2]}***", url) if "://" not in url else url
    out = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:***@", out)
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
    m = _USERINFO.match(url)
    if m and m["pw"]:
        from urllib.parse import unquote

        return unquote(m["pw"])
    if "?" in url:
        for name, val in parse_qsl(url.partition("?")[2]):
            if name.lower() == "password" and val:
                return val
    return None
