"""``settings.stateDir`` written as a relative path: resolved against the config file that sets it, so
every process using that config shares one store whatever directory it starts in (real ``hookgate``
subprocesses; see README "Config reference")."""

from __future__ import annotations

import json
from pathlib import Path

from gateway.config import load_config
from tests.conftest import run_hookgate

WRITE = {
    "hook_event_name": "PreToolUse",
    "session_id": "s1",
    "cwd": "/tmp",
    "tool_name": "Write",
    "tool_input": {"file_path": "/tmp/x.txt", "content": "hi"},
    "tool_use_id": "toolu_1",
}


def _read_only_config(folder: Path, state_dir: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "ro.yaml"
    path.write_text(
        f"settings: {{stateDir: {state_dir}}}\nhooks:\n  PreToolUse:\n    - hooks:\n"
        "        - {type: builtin, name: readOnly}\n"
    )
    return path


def test_relative_state_dir_is_one_store_from_any_working_directory(tmp_path: Path) -> None:
    cfg = _read_only_config(tmp_path / "a", "./mystate")
    elsewhere = tmp_path / "b"
    elsewhere.mkdir()
    switched = run_hookgate(["mode", "read-only", "on", "--config", "ro.yaml"], cwd=cfg.parent)
    assert switched.returncode == 0, switched.stderr
    store = tmp_path / "a" / "mystate" / "state.sqlite3"
    assert f"store: {store} (sqlite)" in switched.stdout.splitlines()  # the absolute path, not ./mystate
    here = run_hookgate(["run", "--config", "ro.yaml"], WRITE, cwd=cfg.parent)
    there = run_hookgate(["run", "--config", str(cfg)], WRITE, cwd=elsewhere)
    assert (here.returncode, there.returncode) == (2, 2), there.stderr
    assert "read-only mode is on" in there.stderr
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("state.sqlite3")) == [Path("a/mystate/state.sqlite3")]


def test_mode_status_from_another_directory_names_the_same_absolute_store(tmp_path: Path) -> None:
    cfg = _read_only_config(tmp_path / "conf", "state")
    status = run_hookgate(["mode", "read-only", "status", "--config", str(cfg)], cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    assert f"store: {tmp_path / 'conf' / 'state' / 'state.sqlite3'} (sqlite)" in status.stdout.splitlines()


def test_each_file_anchors_its_own_relative_state_dir(tmp_path: Path) -> None:
    first = tmp_path / "one" / "hookgate.json"
    second = tmp_path / "two" / "later.json"
    for path, state in ((first, "s1"), (second, "../shared/s2")):
        path.parent.mkdir()
        path.write_text(json.dumps({"settings": {"stateDir": state}, "hooks": {}}))
    assert load_config([str(first)], use_cache=False).settings["state_dir"] == str(tmp_path / "one" / "s1")
    both = load_config([str(first), str(second)], use_cache=False)
    assert both.settings["state_dir"] == str(tmp_path / "shared" / "s2")  # the later file wins, from its folder


def test_home_absolute_and_field_name_forms(tmp_path: Path) -> None:
    cases = {"~/hg-state": "~/hg-state", str(tmp_path / "abs"): str(tmp_path / "abs")}
    for written, expected in cases.items():
        path = tmp_path / "hookgate.json"
        path.write_text(json.dumps({"settings": {"stateDir": written}, "hooks": {}}))
        assert load_config([str(path)], use_cache=False).settings["state_dir"] == expected
    path.write_text(json.dumps({"settings": {"state_dir": "rel"}, "hooks": {}}))
    assert load_config([str(path)], use_cache=False).settings["state_dir"] == str(tmp_path / "rel")
