"""The chained JSON-lines sink: writers of one file share a chain per writer chain; verify walks it."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from gateway.audit import jsonl
from gateway.audit.recorder import Recorder
from gateway.store.audit_link import GENESIS
from tests.unit.test_audit_recorder import KEY, decision, event


def sink_recorder(tmp_path: Path, sink: Path, *, background: bool, chain: str = "m1") -> Recorder:
    return Recorder(
        {"record": "handled", "sinks": [f"jsonl:{sink}"], "chain": chain, "keep_days": None, "max_mb": None},
        state_dir=str(tmp_path),
        store_factory=lambda: None,
        config_hash="c0ffee",
        version="9.9",
        background=background,
    )


def test_the_background_writer_and_one_shot_writers_extend_one_chain(tmp_path: Path) -> None:
    sink = tmp_path / "logs" / "audit.jsonl"
    loud = sink_recorder(tmp_path, sink, background=True)
    for i in range(250):
        loud.submit(event(i), decision(i))  # type: ignore[arg-type]
    loud.flush()
    once = sink_recorder(tmp_path, sink, background=False)
    once.submit(event(250), decision(250))  # type: ignore[arg-type]
    for i in range(251, 300):
        loud.submit(event(i), decision(i))  # type: ignore[arg-type]
    loud.close()
    text = sink.read_text()
    assert KEY not in text and "[REDACTED:" in text
    seqs = [json.loads(line)["_chain"]["seq"] for line in text.splitlines()]
    assert seqs == list(range(1, 301))
    report = jsonl.verify_file(str(sink))
    assert report.problem is None and report.lines == 300 and report.chains["m1"][:2] == [1, 300]
    assert (sink.stat().st_mode & 0o777) == 0o600


def test_threads_appending_at_once_never_fork_the_chain(tmp_path: Path) -> None:
    path = str(tmp_path / "a.jsonl")

    def write(n: int) -> None:
        for i in range(40):
            jsonl.append(path, "m1", [(f"{n}-{i}", json.dumps({"i": i, "n": n}, separators=(",", ":")))])

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report = jsonl.verify_file(path)
    assert report.problem is None, str(report.problem)
    assert report.chains["m1"][1] == 160


def test_each_chain_finds_its_own_last_line_far_back(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.jsonl")
    jsonl.append(path, "quiet", [("q1", '{"x":1}')])
    big = json.dumps({"pad": "z" * 1000}, separators=(",", ":"))
    for i in range(3 * jsonl.BLOCK // 1000):  # more than three read blocks of another chain's lines
        jsonl.append(path, "busy", [(f"b{i}", big)])
    assert jsonl.append(path, "quiet", [("q2", '{"x":2}')]) == 2
    report = jsonl.verify_file(path)
    assert report.problem is None and report.chains["quiet"][:2] == [1, 2]
    with open(path, "rb") as fh:
        import os

        assert jsonl.last_link(fh.fileno(), "nobody") == (0, GENESIS, True)
        assert os.path.getsize(path) > 3 * jsonl.BLOCK


def test_a_line_that_is_not_a_record_is_named(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    jsonl.append(str(path), "m1", [("r1", '{"x":1}')])
    with path.open("a") as fh:
        fh.write('{"x": 2}\n')
    report = jsonl.verify_file(str(path))
    assert report.problem is not None and report.problem.line == 2 and "no valid _chain" in str(report.problem)


def test_a_chain_id_edited_into_terminal_controls_is_named_escaped(tmp_path: Path) -> None:
    sink = tmp_path / "audit.jsonl"
    jsonl.append(str(sink), "m1", [("r1", '{"id":"r1","n":1}')])
    line = json.loads(sink.read_text())
    line["_chain"]["id"] = "x\x1b[2J\u202e"
    sink.write_text(json.dumps(line) + "\n")
    said = str(jsonl.verify_file(str(sink)).problem)
    assert said.startswith("line 1 (chain 'm1' seq 1, record x\\x1b[2J\\u202e): its _chain id") and said.isprintable()
