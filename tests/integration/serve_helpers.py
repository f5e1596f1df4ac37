"""Run ``hookgate serve`` as a real subprocess on 127.0.0.1 and read its log lines."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.conftest import CASES, HOOKGATE


class ServeProcess:
    """``with ServeProcess(config) as s: s.url, s.log_lines, s.wait_log("reloaded")``."""

    def __init__(
        self,
        *configs: str | Path,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | Path | None = None,
    ) -> None:
        self.configs = [str(c) for c in configs]
        self.args = args or []
        self.env = {**os.environ, "HOOKGATE_CASES": str(CASES), **(env or {})}
        self.cwd = cwd
        self.lines: list[str] = []
        self.url = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None

    def __enter__(self) -> ServeProcess:
        argv = [*HOOKGATE, "serve", "--port", "0", *self.args]
        for config in self.configs:
            argv += ["--config", config]
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        line = self.wait_log(r"serving .* on (http://\S+)", timeout=30)
        match = re.search(r"on (http://\S+)", line)
        assert match is not None
        self.url = match.group(1)
        self.wait_log("Application startup complete", timeout=30)
        return self

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def wait_log(self, pattern: str, timeout: float = 15.0, after: int = 0) -> str:
        """The first log line (from index ``after``) matching ``pattern``; fails after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            for line in self.lines[after:]:
                if regex.search(line):
                    return line
            assert self.proc is not None
            if self.proc.poll() is not None and (self._reader is None or not self._reader.is_alive()):
                raise AssertionError(
                    f"hookgate serve exited ({self.proc.returncode}) without logging "
                    f"{pattern!r}:\n" + "\n".join(self.lines)
                )
            if time.monotonic() > deadline:
                raise AssertionError(f"no log line matching {pattern!r}:\n" + "\n".join(self.lines))
            time.sleep(0.02)

    def signal(self, sig: int = signal.SIGHUP) -> None:
        assert self.proc is not None
        self.proc.send_signal(sig)

    def stop(self, timeout: float = 20.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=timeout)
        if self._reader is not None:
            self._reader.join(timeout=5)
        return code

    def __exit__(self, *exc: Any) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def isolated_env(base: Path) -> dict[str, str]:
    """Cache and state under ``base`` (for module-scoped servers, which start before the autouse fixture)."""
    return {"HOOKGATE_CACHE_DIR": str(base / "cache"), "XDG_STATE_HOME": str(base / "state")}
