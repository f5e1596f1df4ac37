"""What `hookgate audit verify` makes of a trail someone tampered with, or that is not there at all
(real subprocesses on a real SQLite state dir)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HOOKGATE
from tests.integration.test_audit_jsonl import recorded, verify
from tests.integration.test_audit_run import audit, bash, run, write_config


def test_deleting_the_oldest_records_and_moving_the_base_is_reported(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    for i in range(8):
        run(config, bash(f"echo {i}"))
    assert audit(config, "verify").returncode == 0
    db = tmp_path / "state" / "state.sqlite3"
    with sqlite3.connect(db) as conn:
        [(fifth,)] = conn.execute("SELECT hash FROM audit_records WHERE seq = 5").fetchall()
        conn.execute("DELETE FROM audit_records WHERE seq <= 5")
        conn.execute("UPDATE audit_heads SET base_seq = 5, base_hash = ?", (fifth,))
    conn.close()
    verified = audit(config, "verify")
    assert verified.returncode == 1, verified.stdout
    assert "records 1-5 are gone but no retention record in the chain vouches for" in verified.stderr
    assert "pruned by retention" not in verified.stdout


def test_verify_without_any_record_says_so_and_exits_4(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    missing = audit(config, "verify")  # the state dir does not exist
    assert missing.returncode == 4, missing.stderr
    assert "no audit records" in missing.stderr and "does not exist" in missing.stderr
    assert not (tmp_path / "state").exists()  # verify created nothing
    run(config, bash("echo 1"))
    assert audit(config, "verify").returncode == 0
    with sqlite3.connect(tmp_path / "state" / "state.sqlite3") as conn:  # the trail emptied, head and all
        conn.execute("DELETE FROM audit_records")
        conn.execute("DELETE FROM audit_heads")
    conn.close()
    emptied = audit(config, "verify")
    assert emptied.returncode == 4 and "no audit records in the store" in emptied.stderr, emptied.stderr
    assert "nothing was verified" in emptied.stderr


def test_verify_jsonl_accepts_trailing_whitespace_but_not_a_blank_line_between_records(tmp_path: Path) -> None:
    _config, sink = recorded(tmp_path, 2)
    text = sink.read_text()
    sink.write_text(text + "\n  \n")
    done = verify(sink)
    assert done.returncode == 0 and "seq 1-2 ok" in done.stdout, done.stderr
    first, second = text.splitlines(keepends=True)
    sink.write_text(first + "\n" + second)
    bad = verify(sink)
    assert bad.returncode == 1 and "line 2" in bad.stderr and "blank line between records" in bad.stderr, bad.stderr


def test_a_row_whose_body_was_broken_cannot_stop_reading_the_trail(tmp_path: Path) -> None:
    """A record edited into something that is not a JSON object (or whose handlers are not objects) once
    made `query --json`, `export` and `stats` fail with an internal error, just when an investigation
    needs them; they now show the row's own columns with `unreadable`, and `verify` reports it."""
    config = write_config(tmp_path)
    for i in range(3):
        run(config, bash(f"echo {i}"))
    assert audit(config, "verify").returncode == 0  # drains the spool into the store
    with sqlite3.connect(tmp_path / "state" / "state.sqlite3") as conn:
        conn.execute("UPDATE audit_records SET body = '{not json' WHERE seq = 1")
        conn.execute("""UPDATE audit_records SET body = '{"handlers": "x", "event": "PreToolUse"}' WHERE seq = 2""")
    conn.close()
    for args in (("query", "--json"), ("tail",), ("export",), ("export", "--format", "csv"), ("stats",)):
        shown = audit(config, *args)
        assert shown.returncode == 0 and "internal error" not in shown.stderr, (args, shown.stderr)
    queried = audit(config, "query", "--json")
    assert "its stored body is not JSON" in queried.stdout and "run hookgate audit verify" in queried.stdout
    verified = audit(config, "verify")
    assert verified.returncode == 1 and "seq 1" in verified.stderr, verified.stderr


def test_verify_jsonl_of_an_emptied_file_exits_4_like_the_store(tmp_path: Path) -> None:
    _config, sink = recorded(tmp_path, 2)
    assert verify(sink).returncode == 0
    for emptied in ("", "\n", "  \n\n"):  # truncated (`: > audit.jsonl`), or left with only whitespace
        sink.write_text(emptied)
        done = verify(sink)
        assert done.returncode == 4, (emptied, done.stdout, done.stderr)
        assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
        assert f"{sink}: no audit records: nothing was verified" in done.stderr
    missing = verify(tmp_path / "gone.jsonl")  # a file that is not there stays an error
    assert missing.returncode == 1 and "gone.jsonl" in missing.stderr


@pytest.mark.usefixtures("store_backend")
def test_an_edited_record_id_is_reported(tmp_path: Path, store_backend: str) -> None:
    """The id `verify` and every message name a record by is in the hashed body: rewriting the id column
    (to make an id quoted in a ticket point at another record) is reported, on either store."""
    config = write_config(tmp_path)
    for command in ("rm -rf /", "ls"):
        run(config, bash(command))
    assert audit(config, "verify").returncode == 0  # drains the spool into the store
    [deny, _] = json.loads(audit(config, "query", "--json").stdout)
    assert isinstance(deny["id"], str) and deny["id"]
    sql = "UPDATE audit_records SET id = 'forged' WHERE seq = 1"
    if store_backend == "sqlite":
        with sqlite3.connect(tmp_path / "state" / "state.sqlite3") as conn:
            conn.execute(sql)
        conn.close()
    else:
        import psycopg

        with psycopg.connect(store_backend, autocommit=True) as pg:
            pg.execute(sql)
    verified = audit(config, "verify")
    assert verified.returncode == 1, verified.stdout
    assert f"column id ('forged') disagrees with the record ({deny['id']!r})" in verified.stderr


def test_verify_jsonl_reports_an_edited_chain_id_and_takes_a_line_from_before_ids_were_in_the_body(
    tmp_path: Path,
) -> None:
    _config, sink = recorded(tmp_path, 3)
    pristine = [json.loads(line) for line in sink.read_text().splitlines()]
    assert all(line["id"] == line["_chain"]["id"] for line in pristine)
    forged = [dict(line) for line in pristine]
    real = forged[1]["id"]
    forged[1]["_chain"] = {**forged[1]["_chain"], "id": "forged"}
    sink.write_text("".join(json.dumps(line) + "\n" for line in forged))
    bad = verify(sink)
    assert bad.returncode == 1 and "line 2 (chain 'box-1' seq 2, record forged)" in bad.stderr, bad.stderr
    assert f"its _chain id ('forged') disagrees with the record ({real!r})" in bad.stderr
    old = [{k: v for k, v in line.items() if k not in ("id", "_chain")} for line in pristine]  # no id in the body
    sink.write_text(_old_lines(old))
    done = verify(sink)
    assert done.returncode == 0 and "seq 1-3 ok" in done.stdout, done.stderr


def _old_lines(records: list[dict[str, Any]], chain: str = "box-1") -> str:
    """``records`` as chained lines the way a hookgate from before the id was in the body wrote them."""
    from gateway.audit.jsonl import line_for
    from gateway.audit.record import canonical
    from gateway.store.audit_link import GENESIS

    out, prev = [], GENESIS
    for seq, record in enumerate(records, 1):
        text, prev = line_for(chain, seq, prev, f"old-{seq}", canonical(record))
        out.append(text + "\n")
    return "".join(out)


def _closed_stdout_run(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`hookgate audit ARGS` writing into a pipe whose reader already left (`| head -c 0`)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [*HOOKGATE, "audit", *args, "--config", str(config)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", proc.stderr)


def test_a_reader_that_left_ends_the_output_quietly(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    for i in range(3):
        run(config, bash(f"echo {i}"))
    for args in (("tail",), ("query",), ("query", "--json"), ("export",), ("stats",), ("verify",)):
        done = _closed_stdout_run(config, *args)
        assert (done.returncode, done.stderr) == (0, ""), (args, done.stderr)


def test_verify_with_a_reader_that_left_still_fails_on_a_bad_chain(tmp_path: Path) -> None:
    """The first chain's `ok` line meets the closed pipe; the second chain's problem is still said."""
    state = {"stateDir": str(tmp_path / "state")}
    for chain in ("a-good", "b-bad"):
        path = tmp_path / f"{chain}.json"
        doc = json.loads(write_config(tmp_path).read_text())
        path.write_text(json.dumps({**doc, "settings": state, "audit": {"chain": chain}}))
        run(path, bash(f"echo {chain}"))
        assert audit(path, "verify").returncode == 0  # moves the spool into the store, on this chain
    config = tmp_path / "a-good.json"
    with sqlite3.connect(tmp_path / "state" / "state.sqlite3") as conn:
        conn.execute("UPDATE audit_records SET decision = 'deny' WHERE chain = 'b-bad'")
    conn.close()
    done = _closed_stdout_run(config, "verify")
    assert done.returncode == 1 and "chain 'b-bad' seq 1" in done.stderr, done.stderr
    assert "Broken pipe" not in done.stderr
