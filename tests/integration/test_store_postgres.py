"""PostgresStore against a real PostgreSQL server: schema, migrations, atomicity, errors, the async pool."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from gateway.errors import StoreError, StoreSchemaError, StoreUnavailable
from gateway.store import pg_schema
from gateway.store.postgres import PostgresStore
from tests.pg_server import PASSWORD, free_port


@pytest.fixture
def pg(pg_url: str) -> Any:
    store = PostgresStore(pg_url)
    store.migrate()
    yield store
    store.close()


def test_migrate_is_versioned_and_idempotent(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    assert store.schema_version() == 0
    assert store.migrate() == [m.version for m in pg_schema.MIGRATIONS]
    assert store.schema_version() == pg_schema.SCHEMA_VERSION
    assert store.migrate() == []
    counts = store.table_counts()
    assert set(counts) >= {"cache", "counters", "flags"} and all(n == 0 for n in counts.values())
    store.close()


def test_concurrent_migrations_apply_once(pg_url: str) -> None:
    def one(_: int) -> list[int]:
        s = PostgresStore(pg_url)
        try:
            return s.migrate()
        finally:
            s.close()

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, range(4)))
    assert sorted(len(r) for r in results) == [0, 0, 0, len(pg_schema.MIGRATIONS)]


def test_unmigrated_schema_is_a_one_line_error_naming_the_command(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    with pytest.raises(StoreSchemaError) as err:
        store.counter_add("s", "k")
    msg = str(err.value)
    assert "hookgate store migrate" in msg and "\n" not in msg and PASSWORD not in msg
    store.close()


def test_cache_expiry_and_overwrite(pg: PostgresStore) -> None:
    assert pg.cache_get("k") is None
    pg.cache_put("k", {"a": [1, 2.5, "x"], "b": None}, 60)
    assert pg.cache_get("k") == {"a": [1, 2.5, "x"], "b": None}
    pg.cache_put("k", "new", 60)
    assert pg.cache_get("k") == "new"
    pg.cache_put("short", 1, 0.2)
    assert pg.cache_get("short") == 1
    time.sleep(0.35)
    assert pg.cache_get("short") is None


def test_counters_and_flags(pg: PostgresStore) -> None:
    assert pg.counter_get("s", "k") == 0
    assert pg.counter_add("s", "k") == 1
    assert pg.counter_add("s", "k", 4) == 5
    assert pg.counter_get("s", "k") == 5
    assert pg.counter_get("other", "k") == 0
    pg.counter_reset("s", "k")
    assert pg.counter_get("s", "k") == 0
    assert [pg.counter_add_capped("r", "b", 2) for _ in range(4)] == [1, 2, None, None]
    assert pg.counter_add_capped("r", "zero", 0) is None
    assert pg.flag_get("readOnly") is None
    pg.flag_set("readOnly", {"on": True, "by": "ops"})
    assert pg.flag_get("readOnly") == {"on": True, "by": "ops"}
    pg.flag_set("readOnly", None)
    assert pg.flag_get("readOnly") is None
    assert pg.table_counts()["counters"] == 1


def test_single_statement_per_call(pg: PostgresStore) -> None:
    before = pg.round_trips
    pg.counter_add_capped("r", "k", 10)
    pg.cache_get("x")
    pg.flag_get("f")
    assert pg.round_trips - before == 3


def test_capped_counter_is_exact_across_many_writers(pg_url: str, pg: PostgresStore) -> None:
    limit, writers, attempts = 57, 6, 20

    def writer(_: int) -> int:
        s = PostgresStore(pg_url)
        try:
            return sum(s.counter_add_capped("rate", "bucket", limit) is not None for _ in range(attempts))
        finally:
            s.close()

    with ThreadPoolExecutor(writers) as pool:
        granted = sum(pool.map(writer, range(writers)))
    assert granted == limit
    assert pg.counter_get("rate", "bucket") == limit

    def adder(_: int) -> None:
        s = PostgresStore(pg_url)
        try:
            for _ in range(attempts):
                s.counter_add("stop", "sess")
        finally:
            s.close()

    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(adder, range(writers)))
    assert pg.counter_get("stop", "sess") == writers * attempts


def test_unreachable_store_is_one_line_without_the_password() -> None:
    url = f"postgresql://hookgate:{PASSWORD}@127.0.0.1:{free_port()}/nowhere"
    store = PostgresStore(url)
    with pytest.raises(StoreUnavailable) as err:
        store.counter_get("s", "k")
    msg = str(err.value)
    assert "unreachable" in msg and "\n" not in msg
    assert PASSWORD not in msg and "hookgate:***@127.0.0.1" in msg


def test_wrong_password_error_hides_both_passwords(pg_server: Any) -> None:
    url = pg_server.url("postgres").replace(PASSWORD, "wrong-" + PASSWORD)
    with pytest.raises(StoreError) as err:
        PostgresStore(url).counter_get("s", "k")
    msg = str(err.value)
    assert "password authentication failed" in msg
    assert PASSWORD not in msg and "\n" not in msg


def test_password_from_libpq_environment(pg_server: Any, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    store = PostgresStore(pg_url.replace(f":{PASSWORD}@", "@"))
    store.migrate()
    assert store.counter_add("s", "k") == 1
    store.close()


def test_password_from_passfile(pg_server: Any, pg_url: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{pg_server.port}:*:hookgate:{PASSWORD}\n")
    passfile.chmod(0o600)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    store = PostgresStore(pg_url.replace(f":{PASSWORD}@", "@"))
    store.migrate()
    assert store.flag_get("x") is None
    store.close()


def test_password_from_service_file(
    pg_server: Any, pg_url: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    dbname = pg_url.rsplit("/", 1)[1]
    service = tmp_path / "pg_service.conf"
    service.write_text(
        f"[hookgate]\nhost=127.0.0.1\nport={pg_server.port}\ndbname={dbname}\nuser=hookgate\npassword={PASSWORD}\n"
    )
    monkeypatch.setenv("PGSERVICEFILE", str(service))
    store = PostgresStore("postgresql:///?service=hookgate")
    store.migrate()
    assert store.counter_add("svc", "k") == 1
    store.close()


def test_async_pool_runs_the_same_operations(pg_url: str, pg: PostgresStore) -> None:
    async def main() -> tuple[list[int | None], Any, int]:
        store = PostgresStore(pg_url, mode="serve")
        try:
            granted = await asyncio.gather(*(store.acounter_add_capped("rate", "a", 5) for _ in range(12)))
            await store.acache_put("k", {"v": 1}, 30)
            await store.aflag_set("f", True)
            return list(granted), await store.acache_get("k"), await store.acounter_get("rate", "a")
        finally:
            await store.aclose()

    granted, cached, count = asyncio.run(main())
    assert sorted(g for g in granted if g is not None) == [1, 2, 3, 4, 5]
    assert granted.count(None) == 7
    assert cached == {"v": 1} and count == 5
    assert pg.flag_get("f") is True


def test_async_pool_unreachable_is_store_unavailable() -> None:
    url = f"postgresql://hookgate:{PASSWORD}@127.0.0.1:{free_port()}/nowhere"

    async def main() -> str:
        store = PostgresStore(url, mode="serve")
        try:
            await store.acounter_get("s", "k")
        except StoreUnavailable as exc:
            return str(exc)
        finally:
            await store.aclose()
        return ""

    msg = asyncio.run(main())
    assert "unreachable" in msg and PASSWORD not in msg


def test_pool_survives_a_server_restart_and_logs_each_outage_once(caplog: pytest.LogCaptureFixture) -> None:
    from tests.pg_server import start_server

    server = start_server()
    try:
        url = server.url(server.new_database())
        PostgresStore(url).migrate()

        async def main() -> list[str]:
            store = PostgresStore(url, mode="serve")
            seen: list[str] = []
            try:
                assert await store.acounter_add("s", "k") == 1
                server.stop()
                for _ in range(3):
                    try:
                        await store.acounter_add("s", "k")
                        seen.append("ok")
                    except StoreUnavailable as exc:
                        assert PASSWORD not in str(exc)
                        seen.append("down")
                server.start()
                for _ in range(3):
                    await store.acounter_add("s", "k")
                    seen.append("ok")
                assert await store.acounter_get("s", "k") == 4  # nothing written before the outage was lost
            finally:
                await store.aclose()
            return seen

        with caplog.at_level("WARNING", logger="hookgate.store"):
            seen = asyncio.run(main())
        assert seen == ["down", "down", "down", "ok", "ok", "ok"]
        messages = [r.getMessage() for r in caplog.records if r.name == "hookgate.store"]
        assert sum("unreachable" in m for m in messages) == 1
        assert sum("reachable again" in m for m in messages) == 1
        assert all(PASSWORD not in m for m in messages)
    finally:
        server.destroy()
