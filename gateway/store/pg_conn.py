"""Talking to PostgreSQL: store operations written once, run on a sync connection or an async pool.

A store operation is a generator (``Op``): it yields ``Q(sql, params)`` statements one at a time and
receives each statement's rows (``list[tuple]``) back; its return value is the operation's result.
``SyncDB.run(op)`` drives it on one psycopg ``Connection`` (``hookgate run``, the CLI: one process, one
event); ``AsyncDB.run(op)`` drives the same generator on a connection borrowed from a
``psycopg_pool.AsyncConnectionPool`` (``hookgate serve``: the event loop never blocks on the database).
Connections are in autocommit mode and never prepare statements (``prepare_threshold=None``: psycopg
would otherwise spend an extra round trip preparing a statement on its fifth use), so a
single-statement operation is exactly one round trip; an operation run with ``tx=True`` is wrapped in
``BEGIN``/``COMMIT`` (two more). ``round_trips`` counts
what was sent (the figure README's cost section reports).

Errors are mapped into hookgate's tree at this boundary (``psycopg`` never escapes):

- the server cannot be reached, the connection broke, the pool timed out -> ``StoreUnavailable``;
  the connection is dropped and the next call connects again (the pool reconnects by itself);
- a table or column the code needs is missing -> ``StoreSchemaError`` naming ``hookgate store migrate``;
- anything else from the driver -> ``StoreError``.

Every message is one line and names the store by its redacted URL; the password is scrubbed out of the
driver's text too. ``psycopg`` is imported only here and in the store modules, and only when a
PostgreSQL store is configured (never on the ``hookgate run`` path of an SQLite setup).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from gateway.errors import StoreError, StoreSchemaError, StoreUnavailable
from gateway.store.url import password_of, redact

if TYPE_CHECKING:
    import asyncio
    import threading

    import psycopg
    import psycopg_pool

T = TypeVar("T")
Rows = list[tuple[Any, ...]]


@dataclass(frozen=True, slots=True)
class Q:
    """One SQL statement with ``%s`` placeholders and its parameters (or ``%(name)s`` and a mapping)."""

    sql: str
    params: Sequence[Any] | Mapping[str, Any] = ()


Op = Generator[Q, Rows, T]

#: libpq parameters hookgate sets when the URL does not (seconds for the timeout).
CONNECT_DEFAULTS = {"connect_timeout": "3"}


def conninfo(url: str, application_name: str) -> str:
    """``url`` with hookgate's defaults for libpq parameters it does not set itself."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        given = conninfo_to_dict(url)
    except Exception as exc:  # psycopg.ProgrammingError on a malformed URL
        raise StoreError(f"store {redact(url)}: invalid connection URL ({_scrub(str(exc), url)})") from None
    extra = {k: v for k, v in {**CONNECT_DEFAULTS, "application_name": application_name}.items() if k not in given}
    return make_conninfo(url, **extra)


def _scrub(text: str, url: str) -> str:
    import re

    text = re.split(r"\n\s*(?:LINE \d+:|QUERY:|CONTEXT:)", text, maxsplit=1)[0]  # not the SQL quoted back
    line = " ".join(text.strip().split()) or "no details"
    secret = password_of(url)
    if secret:
        line = line.replace(secret, "***")
    return line[:300]


def map_error(exc: BaseException, url: str) -> StoreError:
    """The hookgate error for a driver exception (see module docstring)."""
    import psycopg
    from psycopg import errors as pe

    where = f"store {redact(url)}"
    if isinstance(exc, pe.UndefinedTable | pe.UndefinedColumn | pe.UndefinedFunction | pe.UndefinedObject):
        return StoreSchemaError(
            f"{where}: the schema is older than this hookgate ({_scrub(str(exc), url)}): run 'hookgate store migrate'"
        )
    if _is_pool_timeout(exc):
        return StoreUnavailable(f"{where} is unreachable: {_scrub(str(exc), url)}")
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return StoreUnavailable(f"{where} is unreachable: {_scrub(str(exc), url)}", broken_connection=True)
    if isinstance(exc, pe.InsufficientPrivilege):
        return StoreError(
            f"{where}: {_scrub(str(exc), url)}: the role may not do this; run 'hookgate store migrate' as the "
            "database's owner, and grant the role SELECT, INSERT, UPDATE, DELETE on hookgate's tables and USAGE "
            "on their sequences"
        )
    return StoreError(f"{where}: {type(exc).__name__}: {_scrub(str(exc), url)}")


def _is_pool_timeout(exc: BaseException) -> bool:
    try:
        from psycopg_pool import PoolTimeout
    except ImportError:  # pragma: no cover - psycopg_pool ships with the postgres extra
        return False
    return isinstance(exc, PoolTimeout)


_IDLE = 0
"""``psycopg.pq.TransactionStatus.IDLE``: a connection outside any transaction (not inside a snapshot)."""


class SyncDB:
    """One lazily opened connection (``hookgate run``, CLI commands, sync callers under ``serve``).
    Calls from several threads take turns (a lock around each operation)."""

    def __init__(self, url: str, application_name: str = "hookgate", *, op_timeout: float | None = None) -> None:
        import threading

        self.url = url
        self.application_name = application_name
        self.op_timeout = op_timeout
        self.round_trips = 0
        self._conn: psycopg.Connection[tuple[Any, ...]] | None = None
        self._lock = threading.RLock()  # reentrant: ``run`` inside this thread's ``snapshot``

    def connection(self) -> psycopg.Connection[tuple[Any, ...]]:
        import psycopg

        conn = self._conn
        if conn is not None and not conn.closed and conn.info.transaction_status == _IDLE and _closed_by_server(conn):
            self.close()  # the server ended it while idle (a restart): nothing was sent on it yet
        if self._conn is None or self._conn.closed:
            try:
                self._conn = psycopg.connect(
                    conninfo(self.url, self.application_name), autocommit=True, prepare_threshold=None
                )
            except psycopg.Error as exc:
                raise map_error(exc, self.url) from None
        return self._conn

    def run(self, op: Op[T], *, tx: bool = False) -> T:
        """Drive ``op`` to its result on the connection (in one transaction when ``tx``)."""
        with self._lock:
            return self._run_locked(op, tx)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Operations run inside see one snapshot: a ``REPEATABLE READ READ ONLY`` transaction on the
        connection, held (with the lock: other threads wait) until the block ends. No ``tx=True``
        operation may run inside."""
        import psycopg

        with self._lock:
            conn = self.connection()
            try:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                self.round_trips += 1
            except psycopg.Error as exc:
                raise self._mapped(exc) from None
            try:
                yield
            except BaseException:
                with contextlib.suppress(Exception):  # a broken connection: the error inside is the one to see
                    conn.execute("ROLLBACK")
                raise
            try:
                conn.execute("ROLLBACK")  # read only: nothing to keep
                self.round_trips += 1
            except psycopg.Error as exc:
                raise self._mapped(exc) from None

    def _mapped(self, exc: BaseException) -> StoreError:
        err = map_error(exc, self.url)
        if isinstance(err, StoreUnavailable):
            self.close()
        return err

    def _run_locked(self, op: Op[T], tx: bool) -> T:
        import psycopg

        conn = self.connection()
        fired, timer = self._deadline(conn)
        try:
            if tx:
                with conn.transaction():
                    self.round_trips += 2
                    return self._drive(conn, op)
            return self._drive(conn, op)
        except psycopg.Error as exc:
            if fired.is_set() and isinstance(exc, psycopg.errors.QueryCanceled):
                raise StoreUnavailable(
                    f"store {redact(self.url)} did not answer within {self.op_timeout:g} s (a lock held, or "
                    "the server overloaded); the statement was cancelled"
                ) from None
            raise self._mapped(exc) from None
        finally:
            if timer is not None:
                timer.cancel()
            if fired.is_set():  # a cancel request may still be on its way, and must not reach the next
                self.close()  # statement: that one gets a new connection

    def _deadline(self, conn: psycopg.Connection[tuple[Any, ...]]) -> tuple[threading.Event, Any]:
        """``(fired, timer)``: with ``op_timeout``, a started timer that cancels what ``conn`` runs once
        the operation takes longer (a table or row locked by another session, an overloaded server: a
        hook call must not wait on that without bound), and the event it sets when it does."""
        import threading

        fired = threading.Event()
        limit = self.op_timeout
        if not limit:
            return fired, None

        def cancel() -> None:
            fired.set()
            with contextlib.suppress(Exception):
                conn.cancel_safe(timeout=limit)

        timer = threading.Timer(limit, cancel)
        timer.daemon = True
        timer.start()
        return fired, timer

    def _drive(self, conn: psycopg.Connection[tuple[Any, ...]], op: Op[T]) -> T:
        try:
            q = next(op)
            while True:
                cur = conn.execute(q.sql, q.params)  # SQL built from constants
                self.round_trips += 1
                q = op.send(cur.fetchall() if cur.description is not None else [])
        except StopIteration as stop:
            result: T = stop.value
            return result

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):  # closing a broken connection must not raise
                self._conn.close()
            self._conn = None


def _closed_by_server(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> bool:
    """True when the server ended this idle connection (a restart or ``pg_terminate_backend``
    sends a FATAL and hangs up): its socket is readable though no statement is in flight, and what is
    there reads as a closed connection. One ``select`` with no wait, no round trip."""
    import select

    from psycopg.pq import ConnStatus

    pgconn = conn.pgconn
    try:
        for _ in range(4):  # the FATAL message first, then the end of the stream
            if not select.select([pgconn.socket], [], [], 0)[0]:
                break
            pgconn.consume_input()  # a notice is consumed and the connection kept; a hang-up raises
            if pgconn.status != ConnStatus.OK:
                return True
    except Exception:
        return True
    return pgconn.status != ConnStatus.OK


class AsyncDB:
    """An ``AsyncConnectionPool`` opened on first use inside the running event loop (``hookgate serve``).

    ``pool_timeout``: seconds to wait for a connection before ``StoreUnavailable`` (a down database must
    not hold requests for long); ``down_timeout``: the shorter wait while the store is known to be down
    and no connection is idle. The error of a call that waited in vain names the last connection
    attempt's failure (a wrong password, a database that does not exist). The pool replaces broken
    connections and reconnects on demand. A connection the server ended while idle is replaced before
    use (``_closed_by_server``). After a failure it checks its idle connections in the background (a
    restarted server leaves them all broken) and a read (``retry=True``) is tried once more on another
    connection; writes are never retried (a lost reply may hide a commit). State changes are logged
    once, on the ``hookgate.store`` logger: "unreachable" when the first call fails, "reachable again"
    on the first call that succeeds.
    """

    def __init__(
        self,
        url: str,
        application_name: str = "hookgate-serve",
        *,
        min_size: int = 1,
        max_size: int = 8,
        pool_timeout: float = 2.0,
        down_timeout: float = 0.25,
    ) -> None:
        self.url = url
        self.application_name = application_name
        self.min_size = min_size
        self.max_size = max_size
        self.pool_timeout = pool_timeout
        self.down_timeout = down_timeout
        self.last_connect_error: str | None = None
        self.round_trips = 0
        self.down: str | None = None
        self._pool: psycopg_pool.AsyncConnectionPool[Any] | None = None
        self._checking: asyncio.Task[None] | None = None

    async def pool(self) -> psycopg_pool.AsyncConnectionPool[Any]:
        if self._pool is None:
            import logging

            from psycopg_pool import AsyncConnectionPool

            # the pool's own warnings repeat on every attempt; hookgate logs each outage once instead
            logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)
            import psycopg

            db = self

            class Connection(psycopg.AsyncConnection[Any]):
                """Keeps why the last connection attempt failed, for the message of a call that timed out
                waiting (the pool's own error only says it waited)."""

                @classmethod
                async def connect(cls, *args: Any, **kwargs: Any) -> Any:
                    try:
                        conn = await super().connect(*args, **kwargs)
                    except Exception as exc:
                        db.last_connect_error = _scrub(str(exc), db.url)
                        raise
                    db.last_connect_error = None
                    return conn

            pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
                conninfo(self.url, self.application_name),
                connection_class=Connection,
                min_size=self.min_size,
                max_size=self.max_size,
                kwargs={"autocommit": True, "prepare_threshold": None},
                open=False,
                timeout=self.pool_timeout,
                reconnect_timeout=0,
                name="hookgate-store",
            )
            await pool.open(wait=False)
            self._pool = pool
        return self._pool

    async def run(self, make: Callable[[], Op[T]], *, tx: bool = False, read: bool = False) -> T:
        """Drive ``make()`` on a pooled connection (in one transaction when ``tx``). ``read``: the
        operation only reads, so when the connection it got was broken it runs once more on another."""
        try:
            try:
                result = await self._run_once(make(), tx)
            except StoreUnavailable as exc:
                if not (read and exc.broken_connection):
                    raise
                result = await self._run_once(make(), tx)
        except StoreUnavailable as exc:
            self._went_down(exc)
            raise
        if self.down is not None:
            self._came_back()
        return result

    async def _run_once(self, op: Op[T], tx: bool) -> T:
        import psycopg

        pool = await self.pool()
        # while the store is known to be down and no connection is idle, a call waits only briefly: an
        # outage must not hold every stateful hook call for the whole pool timeout
        wait = self.down_timeout if self.down is not None and not pool.get_stats().get("pool_available") else None
        try:
            for attempt in range(self.max_size + 1):
                async with pool.connection(timeout=wait) as conn:
                    if attempt < self.max_size and _closed_by_server(conn):
                        await conn.close()  # the pool replaces it; nothing was sent on it, so even a
                        continue  # write may go out on the next one
                    if tx:
                        async with conn.transaction():
                            self.round_trips += 2
                            return await self._drive(conn, op)
                    return await self._drive(conn, op)
            raise AssertionError("unreachable: the last attempt runs the operation")
        except Exception as exc:
            if _is_pool_timeout(exc):  # (a psycopg.OperationalError too) the reason is the last attempt's
                err = map_error(exc, self.url)
                why = self.last_connect_error
                raise StoreUnavailable(f"{err} (last attempt: {why})" if why else str(err)) from None
            if isinstance(exc, psycopg.Error | OSError):
                raise map_error(exc, self.url) from None
            raise

    def _went_down(self, exc: StoreUnavailable) -> None:
        import asyncio
        import logging

        if self.down is None:
            logging.getLogger("hookgate.store").warning("%s", exc)
        self.down = str(exc)
        if self._pool is not None and (self._checking is None or self._checking.done()):
            self._checking = asyncio.ensure_future(self._check())

    async def _check(self) -> None:
        with contextlib.suppress(Exception):
            if self._pool is not None:
                await self._pool.check()

    def _came_back(self) -> None:
        import logging

        self.down = None
        logging.getLogger("hookgate.store").warning("store %s is reachable again", redact(self.url))

    async def _drive(self, conn: psycopg.AsyncConnection[tuple[Any, ...]], op: Op[T]) -> T:
        try:
            q = next(op)
            while True:
                cur = await conn.execute(q.sql, q.params)
                self.round_trips += 1
                q = op.send(await cur.fetchall() if cur.description is not None else [])
        except StopIteration as stop:
            result: T = stop.value
            return result

    async def close(self) -> None:
        if self._checking is not None:
            self._checking.cancel()
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close(timeout=2.0)
