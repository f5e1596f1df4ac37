"""The JSON-lines sink is hash-chained: `hookgate run` writes it, `hookgate audit verify --jsonl` walks
it and exits 1 naming the first bad line (real subprocesses throughout)."""

from __future__ import annotations

import itertools
import json
import subprocess
from pathlib import Path
from typing import Any

from gateway.store.audit_link import GENESIS, link_hash
from tests.conftest import ROOT, run_hookgate
from tests.integration.test_audit_run import audit, bash, records, run, run_at_once, write_config


def verify(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_hookgate(["audit", "verify", "--jsonl", str(path), *extra], cwd=ROOT)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def recorded(tmp_path: Path, count: int) -> tuple[Path, Path]:
    sink = tmp_path / "audit.jsonl"
    config = write_config(tmp_path, audit={"sink": ["store", f"jsonl:{sink}"], "chain": "box-1"})
    for i in range(count):
        assert run(config, bash(f"echo {i}")).returncode == 0
    return config, sink


def test_lines_carry_the_chain_and_verify(tmp_path: Path) -> None:
    config, sink = recorded(tmp_path, 4)
    got = lines(sink)
    assert [line["_chain"]["seq"] for line in got] == [1, 2, 3, 4]
    assert got[0]["_chain"]["prev_hash"] == GENESIS
    for before, line in itertools.pairwise(got):
        assert line["_chain"]["prev_hash"] == before["_chain"]["hash"]
    for line in got:  # the link is the store's: over the record's canonical text, without _chain
        link = line.pop("_chain")
        body = json.dumps(line, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert link["chain"] == "box-1" and link["hash"] == link_hash(link["prev_hash"], "box-1", link["seq"], body)
    assert [line["tool_input"]["command"] for line in got] == [r["tool_input"]["command"] for r in records(config)]
    done = verify(sink)
    assert done.returncode == 0, done.stderr
    assert f"chain 'box-1': seq 1-4 ok; last hash {lines(sink)[-1]['_chain']['hash']}" in done.stdout


def test_verify_catches_an_edited_a_deleted_and_a_reordered_line(tmp_path: Path) -> None:
    _, sink = recorded(tmp_path, 5)
    pristine = sink.read_text().splitlines(keepends=True)

    def tampered(text: list[str]) -> subprocess.CompletedProcess[str]:
        sink.write_text("".join(text))
        return verify(sink)

    edited = tampered([*pristine[:2], pristine[2].replace("echo 2", "echo 9"), *pristine[3:]])
    assert edited.returncode == 1 and "line 3 (chain 'box-1' seq 3" in edited.stderr and "edited" in edited.stderr
    deleted = tampered([pristine[0], *pristine[2:]])
    assert deleted.returncode == 1 and "line 2" in deleted.stderr and "jumps from seq 1 to 3" in deleted.stderr
    reordered = tampered([*pristine[:3], pristine[4], pristine[3]])
    assert reordered.returncode == 1 and "line 4" in reordered.stderr and "out of order" in reordered.stderr
    # reordered and renumbered, so that seq counts up again: the links give it away
    fourth, fifth = json.loads(pristine[3]), json.loads(pristine[4])
    fourth["_chain"]["seq"], fifth["_chain"]["seq"] = 5, 4
    renumbered = tampered([*pristine[:3], json.dumps(fifth) + "\n", json.dumps(fourth) + "\n"])
    assert renumbered.returncode == 1 and "line 4" in renumbered.stderr, renumbered.stderr
    cut_start = tampered(pristine[2:])
    assert cut_start.returncode == 1 and "line 1" in cut_start.stderr and "starts at seq 3" in cut_start.stderr
    continued = verify(sink, "--continued")  # a rotated file: its first record anchors it
    assert continued.returncode == 0 and "seq 3-5 ok" in continued.stdout, continued.stderr
    assert tampered(pristine).returncode == 0


def test_a_torn_line_is_reported_and_the_chain_goes_on_after_it(tmp_path: Path) -> None:
    config, sink = recorded(tmp_path, 2)
    with sink.open("a") as fh:
        fh.write('{"_chain":{"chain":"box-1","ha')  # a crash in the middle of a write
    torn = verify(sink)
    assert torn.returncode == 1 and "line 3" in torn.stderr and "cut off" in torn.stderr
    assert run(config, bash("echo after")).returncode == 0
    got = sink.read_text().splitlines()
    assert len(got) == 4 and json.loads(got[3])["_chain"]["seq"] == 3
    still = verify(sink)
    assert still.returncode == 1 and "line 3" in still.stderr and "not a JSON record" in still.stderr


def test_concurrent_runs_extend_one_chain_in_the_file(tmp_path: Path) -> None:
    sink = tmp_path / "audit.jsonl"
    config = write_config(tmp_path, audit={"sink": f"jsonl:{sink}"})
    run_at_once(config, 8)
    got = lines(sink)
    assert sorted(line["tool_input"]["command"] for line in got) == sorted(f"echo {i}" for i in range(8))
    assert [line["_chain"]["seq"] for line in got] == list(range(1, 9))
    assert verify(sink).returncode == 0


def test_an_export_verifies_too_and_a_missing_file_is_one_line(tmp_path: Path) -> None:
    config, _ = recorded(tmp_path, 3)
    exported = tmp_path / "export.jsonl"
    assert audit(config, "export", "--format", "jsonl", "--output", str(exported)).returncode == 0
    done = verify(exported)
    assert done.returncode == 0 and "seq 1-3 ok" in done.stdout, done.stderr
    missing = verify(tmp_path / "nope.jsonl")
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1 and "nope.jsonl" in missing.stderr


def test_a_full_disk_is_one_line_naming_the_file_and_the_answer_stands(tmp_path: Path) -> None:
    """A write the disk refuses (``/dev/full``: ENOSPC, as on a full disk) was said as ``cannot record:
    [Errno 28] No space left on device``, naming neither the jsonl sink nor the spool; now the file is named."""
    (tmp_path / "full").mkdir()
    config = write_config(tmp_path, audit={"sink": ["store", "jsonl:/dev/full"]})
    proc = run(config, bash("rm -rf /"))
    assert proc.returncode == 2 and "no rm -rf here" in proc.stderr  # the answer is the policy's
    assert "hookgate: audit: cannot record: [Errno 28] No space left on device: '/dev/full'" in proc.stderr
    config = write_config(tmp_path / "full")  # the store's spool on a full disk
    spool = tmp_path / "full" / "state" / "audit" / "spool.jsonl"
    spool.parent.mkdir(parents=True)
    spool.symlink_to("/dev/full")
    proc = run(config, bash("echo hi"))
    assert proc.returncode == 0, proc.stderr
    assert f"cannot record: [Errno 28] No space left on device: '{spool}'" in proc.stderr


def test_the_audit_commands_say_when_the_sink_is_not_the_store(tmp_path: Path) -> None:
    """With ``sink: jsonl:PATH`` alone, ``hookgate audit tail`` printed nothing and exited 0, as if nothing had
    been recorded, and ``verify`` said only that the store holds no records; now each says where they went."""
    sink = tmp_path / "audit.jsonl"
    config = write_config(tmp_path, audit={"sink": f"jsonl:{sink}"})
    assert run(config, bash("ls")).returncode == 0
    note = f"audit.sink has no 'store' (it writes {sink}): only what the store holds is read"
    for action in ("tail", "verify", "stats"):
        proc = audit(config, action)
        assert f"hookgate: audit {action}: {note} (hookgate audit verify --jsonl {sink})" in proc.stderr, proc.stderr
    assert verify(sink).returncode == 0
    config = write_config(tmp_path, audit={"sink": ["store", f"jsonl:{sink}"]})
    assert "audit.sink" not in audit(config, "tail").stderr
