"""Drive the real Gemini CLI and Codex CLI offline against in-process fake model servers.

* ``ensure_cli(spec)`` installs a pinned CLI with npm into a cache folder once
  (``$HOOKGATE_E2E_CACHE`` or ``~/.cache/hookgate-e2e``, one ``<name>-<version>`` folder each).
  ``require_cli(spec)`` turns a missing npm / failed install into ``pytest.skip`` with a
  one-line reason (or ``pytest.fail`` when ``HOOKGATE_E2E_STRICT=1``).
* ``net_sandbox()`` is one loopback-only network namespace per test process (tests/e2e/netns.py):
  the fakes listen *inside* it (``bind_loopback()``) and the CLIs run inside it (``wrap(argv)``
  = ``nsenter --net=...``), so nothing a CLI or a hook does can reach another host. Where a
  namespace cannot be made (not root, no nsenter, or ``HOOKGATE_E2E_NETNS=0``) everything runs
  on the host loopback and ``HostRun.isolated`` is False. Any other server a hook must reach (a
  webhook, a fake LLM for hookgate's prompt handlers) must listen on
  ``net_sandbox().bind_loopback()`` too (or pass your own ``sandbox=`` to the runners).
* ``run_gemini(...)`` / ``run_codex(...)`` write the host's config and hooks into a fresh
  HOME / CODEX_HOME, start the fake with the script, run one headless prompt and return a
  ``HostRun`` (exit code, stdout/stderr, parsed JSONL events, the fake's request log).
* ``hook_script(...)`` writes a native command hook that appends its stdin to a JSONL log.

See HOSTS.md beside this file for the hook payloads and answers of each host.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn

import pytest

from tests.e2e.netns import Sandbox
from tests.fakes._scripted import FakeModelServer, RecordedRequest, Step
from tests.fakes.gemini_api import FakeGemini
from tests.fakes.openai_responses_api import FakeOpenAIResponses

JsonDict = dict[str, Any]

# --------------------------------------------------------------------------------------------
# Installing the pinned CLIs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CliSpec:
    name: str
    package: str
    version: str
    bin_name: str
    min_node: int

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


GEMINI = CliSpec("gemini-cli", "@google/gemini-cli", "0.61.0", "gemini", 20)
CODEX = CliSpec("codex", "@openai/codex", "0.171.0", "codex", 16)

INSTALL_TIMEOUT_S = 900.0


class HostUnavailable(Exception):
    """The CLI cannot be installed or run here; the message is a one-line reason."""


def cache_root() -> Path:
    env = os.environ.get("HOOKGATE_E2E_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "hookgate-e2e"


def cli_dir(spec: CliSpec) -> Path:
    return cache_root() / spec.key


def _one_line(text: str, limit: int = 200) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    errs = [ln for ln in lines if "ERR" in ln or "error" in ln.lower()]
    line = (errs or lines or ["no output"])[-1]
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _node_major() -> int:
    node = shutil.which("node")
    if node is None:
        raise HostUnavailable("node not found on PATH")
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    match = re.match(r"v(\d+)", out.strip())
    if not match:
        raise HostUnavailable(f"cannot read node version from {out.strip()!r}")
    return int(match.group(1))


_installed: dict[CliSpec, Path | HostUnavailable] = {}
_install_lock = threading.Lock()
install_seconds: dict[str, float] = {}


def ensure_cli(spec: CliSpec) -> Path:
    """Return the CLI's executable, installing ``package@version`` with npm when missing."""
    with _install_lock:
        known = _installed.get(spec)
        if isinstance(known, Path):
            return known
        if isinstance(known, HostUnavailable):
            raise known
        try:
            path = _ensure_cli(spec)
        except HostUnavailable as exc:
            _installed[spec] = exc
            raise
        _installed[spec] = path
        return path


def _ensure_cli(spec: CliSpec) -> Path:
    major = _node_major()
    if major < spec.min_node:
        raise HostUnavailable(f"{spec.package}@{spec.version} needs node >= {spec.min_node}, found {major}")
    target = cli_dir(spec)
    exe = target / "node_modules" / ".bin" / spec.bin_name
    marker = target / ".hookgate-installed"
    if marker.exists() and exe.exists():
        return exe
    npm = shutil.which("npm")
    if npm is None:
        raise HostUnavailable(f"npm not found on PATH; cannot install {spec.package}@{spec.version}")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{spec.key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test process may be installing it
        if marker.exists() and exe.exists():
            return exe
        staging = Path(tempfile.mkdtemp(prefix=f".{spec.key}-", dir=target.parent))
        try:
            (staging / "package.json").write_text('{"name": "hookgate-e2e-host", "private": true}\n')
            env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"}
            started = time.monotonic()
            try:
                proc = subprocess.run(
                    [
                        npm,
                        "install",
                        "--no-audit",
                        "--no-fund",
                        "--loglevel=error",
                        "--include=optional",  # Codex's native binary is an optional dependency
                        f"{spec.package}@{spec.version}",
                    ],
                    cwd=staging,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=INSTALL_TIMEOUT_S,
                    stdin=subprocess.DEVNULL,
                )
            except subprocess.TimeoutExpired as exc:
                raise HostUnavailable(f"npm install {spec.package}@{spec.version} timed out") from exc
            if proc.returncode != 0:
                why = _one_line(proc.stderr + proc.stdout)
                raise HostUnavailable(f"npm install {spec.package}@{spec.version} failed: {why}")
            install_seconds[spec.key] = time.monotonic() - started
            staged_exe = staging / "node_modules" / ".bin" / spec.bin_name
            if not staged_exe.exists():
                raise HostUnavailable(f"npm install {spec.package}@{spec.version} produced no {spec.bin_name}")
            _check_runs(spec, staged_exe)
            (staging / ".hookgate-installed").write_text(f"{spec.package}@{spec.version}\n")
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    return exe


def _check_runs(spec: CliSpec, exe: Path) -> None:
    """``<cli> --version`` must work (e.g. Codex without its optional native package does not)."""
    try:
        proc = subprocess.run(
            [str(exe), "--version"],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "GEMINI_CLI_NO_RELAUNCH": "true"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise HostUnavailable(f"{exe.name} --version failed: {exc}") from exc
    if proc.returncode != 0 or spec.version not in proc.stdout:
        why = _one_line(proc.stderr + proc.stdout)
        raise HostUnavailable(f"{exe.name} --version did not report {spec.version}: {why}")


def require_cli(spec: CliSpec) -> Path:
    """``ensure_cli`` for tests: skip (or fail with HOOKGATE_E2E_STRICT=1) with a one-line reason."""
    try:
        return ensure_cli(spec)
    except HostUnavailable as exc:
        _unavailable(f"{spec.package}@{spec.version} unavailable: {exc}")


def _unavailable(reason: str) -> NoReturn:
    if os.environ.get("HOOKGATE_E2E_STRICT") == "1":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


# --------------------------------------------------------------------------------------------
# Network namespace
# --------------------------------------------------------------------------------------------

_sandbox: Sandbox | None = None


def net_sandbox() -> Sandbox:
    """The test process's network sandbox (see tests/e2e/netns.py), made on first use.

    ``HOOKGATE_E2E_NETNS=0`` runs on the host loopback instead (``isolated`` is then False).
    """
    global _sandbox
    with _install_lock:
        if _sandbox is None:
            if os.environ.get("HOOKGATE_E2E_NETNS", "1") == "0":
                _sandbox = Sandbox(None, "HOOKGATE_E2E_NETNS=0")
            else:
                _sandbox = Sandbox.create()
            atexit.register(_sandbox.close)
        return _sandbox


# --------------------------------------------------------------------------------------------
# Native hook scripts
# --------------------------------------------------------------------------------------------


def hook_script(
    path: Path,
    *,
    log: Path,
    stdout: str | Mapping[str, Any] | None = None,
    stderr: str | None = None,
    exit_code: int = 0,
    body: str | None = None,
) -> str:
    """Write a ``/bin/sh`` command hook and return the hook ``command`` string for it.

    The hook appends its stdin (one JSON payload) as a line to ``log``. Then it runs ``body``
    (shell code; the payload is in ``$payload``) if given, else prints ``stdout`` (a dict is
    JSON-encoded), prints ``stderr`` to stderr and exits with ``exit_code``. ``body`` also sees
    ``$log``, so ``calls=$(wc -l < "$log")`` counts the calls so far (this one included).
    """
    if body is None:
        lines = []
        if stdout is not None:
            text = stdout if isinstance(stdout, str) else json.dumps(stdout)
            lines.append(f"printf '%s\\n' {shlex.quote(text)}")
        if stderr is not None:
            lines.append(f"printf '%s\\n' {shlex.quote(stderr)} >&2")
        lines.append(f"exit {exit_code}")
        body = "\n".join(lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    script = [
        "#!/bin/sh",
        f"log={shlex.quote(str(log))}",
        "payload=$(cat)",
        'printf \'%s\\n\' "$payload" >> "$log"',
        body,
    ]
    path.write_text("\n".join(script) + "\n")
    path.chmod(0o755)
    return shlex.quote(str(path))


def read_jsonl(path: Path) -> list[JsonDict]:
    if not path.exists():
        return []
    out: list[JsonDict] = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line:
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    out.append(value)
    return out


# --------------------------------------------------------------------------------------------
# Running a CLI
# --------------------------------------------------------------------------------------------


class HostTimeout(AssertionError):
    pass


@dataclass
class HostRun:
    host: str
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    events: list[JsonDict]  # stdout JSONL (Gemini -o stream-json, Codex exec --json)
    requests: list[RecordedRequest]  # everything the fake model server saw
    seconds: float
    isolated: bool
    home: Path  # HOME (Gemini) / CODEX_HOME (Codex) used for the run
    exhausted: int = 0  # main requests answered after the script ran dry
    extra: JsonDict = field(default_factory=dict)

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.kind == "main"]

    def events_of(self, kind: str) -> list[JsonDict]:
        return [e for e in self.events if e.get("type") == kind]

    def describe(self) -> str:
        """A short dump for assertion messages."""
        return (
            f"{self.host} rc={self.returncode} in {self.seconds:.2f}s isolated={self.isolated} "
            f"requests={[(r.kind, r.path, r.status) for r in self.requests]}\n"
            f"--- stdout (tail)\n{self.stdout[-3000:]}\n--- stderr (tail)\n{self.stderr[-3000:]}"
        )


def _base_env(home: Path, extra: Mapping[str, str] | None) -> dict[str, str]:
    """A clean environment: nothing from the developer's agent setup, CI or GitHub leaks in."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TERM": "dumb",
        "NO_COLOR": "1",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }
    if extra:
        env.update(extra)
    return env


def _run(
    host: str,
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    fake: FakeModelServer,
    home: Path,
    sandbox: Sandbox,
) -> HostRun:
    full = sandbox.wrap(argv)
    started = time.monotonic()
    proc = subprocess.Popen(
        full,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise HostTimeout(
            f"{host} did not finish in {timeout:.0f}s; requests="
            f"{[(r.kind, r.path) for r in fake.requests]}\nstderr tail:\n{stderr[-2000:]}"
        ) from None
    seconds = time.monotonic() - started
    events: list[JsonDict] = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict):
                    events.append(value)
    return HostRun(
        host=host,
        argv=full,
        returncode=proc.returncode,
        stdout=stdout,
        stderr=stderr,
        events=events,
        requests=fake.requests,
        seconds=seconds,
        isolated=sandbox.isolated,
        home=home,
        exhausted=fake.exhausted,
    )


def _fresh_dir(project_dir: Path, prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix, dir=project_dir.parent))


def _as_steps(script: Step | Iterable[Step] | None) -> list[Step]:
    if script is None:
        return []
    if isinstance(script, list | tuple):
        return list(script)
    return [script]  # type: ignore[list-item]


def _deep_merge(base: JsonDict, extra: Mapping[str, Any]) -> JsonDict:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


# ---- Gemini ----------------------------------------------------------------------------------

GEMINI_MODEL = "gemini-2.5-flash"

# Only the first two matter (auth type; no Clearcut DNS); the rest keep the run quiet.
GEMINI_USER_SETTINGS: JsonDict = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "telemetry": {"enabled": False},
}


def _settings_fragment(hooks_settings: Mapping[str, Any]) -> JsonDict:
    """Accept either a settings fragment (``{"hooks": {...}, "hooksConfig": ...}``) or the
    ``hooks`` mapping itself (``{"BeforeTool": [...]}``)."""
    if "hooks" in hooks_settings or "hooksConfig" in hooks_settings:
        return dict(hooks_settings)
    return {"hooks": dict(hooks_settings)}


def run_gemini(
    project_dir: Path,
    hooks_settings: Mapping[str, Any] | None,
    script: Step | Iterable[Step] | None,
    prompt: str,
    *,
    scope: Literal["project", "user"] = "project",
    home: Path | None = None,
    model: str = GEMINI_MODEL,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 90.0,
    fake: FakeGemini | None = None,
    sandbox: Sandbox | None = None,
    prepare: Callable[[Path], None] | None = None,
) -> HostRun:
    """Run ``gemini -p PROMPT --yolo -m MODEL -o stream-json`` in ``project_dir``.

    ``hooks_settings`` go to ``<project>/.gemini/settings.json`` (``scope="project"``, the
    workspace is trusted with GEMINI_CLI_TRUST_WORKSPACE) or into the user settings
    ``$HOME/.gemini/settings.json`` (``scope="user"``). ``None`` leaves the project alone.
    ``script`` is the fake model's steps (see tests/fakes/_scripted.py). HOME is a fresh folder
    beside ``project_dir`` unless given. Pass ``fake`` to use a server you made with
    ``FakeGemini(sock=sandbox.bind_loopback())`` (same ``sandbox`` as the run's).
    ``prepare(home)`` runs once the settings files are written and before the CLI starts (e.g. a
    ``hookgate install gemini`` at user level with ``HOME=home``).
    """
    exe = require_cli(GEMINI)
    project_dir = project_dir.resolve()
    home = (home or _fresh_dir(project_dir, "gemini-home-")).resolve()
    user_settings = dict(GEMINI_USER_SETTINGS)
    if hooks_settings is not None:
        fragment = _settings_fragment(hooks_settings)
        if scope == "user":
            user_settings = _deep_merge(user_settings, fragment)
        else:
            target = project_dir / ".gemini" / "settings.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            current = json.loads(target.read_text()) if target.exists() else {}
            target.write_text(json.dumps(_deep_merge(current, fragment), indent=2))
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(user_settings, indent=2))
    if prepare is not None:
        prepare(home)

    own_fake = fake is None
    sandbox = sandbox or net_sandbox()
    server = fake or FakeGemini(sock=sandbox.bind_loopback(), model_version=model)
    server.script(*_as_steps(script))
    try:
        server.start()
        run_env = _base_env(
            home,
            {
                "GOOGLE_GEMINI_BASE_URL": server.base_url,
                "GEMINI_API_KEY": "fake-gemini-key",
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
                "GEMINI_CLI_NO_RELAUNCH": "true",
                **(env or {}),
            },
        )
        argv = [str(exe), "-p", prompt, "--yolo", "-m", model, "-o", "stream-json", *extra_args]
        return _run(
            "gemini",
            argv,
            cwd=project_dir,
            env=run_env,
            timeout=timeout,
            fake=server,
            home=home,
            sandbox=sandbox,
        )
    finally:
        if own_fake:
            server.close()


# ---- Codex -----------------------------------------------------------------------------------

CODEX_MODEL = "gpt-5.5"  # a slug with bundled metadata: no warning, apply_patch offered
CODEX_API_KEY_ENV = "FAKE_OPENAI_API_KEY"

# Events whose matcher Codex drops (and so leaves out of the trust hash).
_CODEX_NO_MATCHER = frozenset({"UserPromptSubmit", "Stop"})
# Events with a short default timeout (1 s), explicit values clamped to 3 s.
_CODEX_SHORT_TIMEOUT = frozenset({"SessionEnd", "Interrupt"})


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def codex_config_toml(base_url: str, *, model: str = CODEX_MODEL, trusted_projects: Iterable[Path] = ()) -> str:
    """``$CODEX_HOME/config.toml`` for an offline run against the fake provider."""
    lines = [
        f"model = {_toml_str(model)}",
        'model_provider = "fake"',
        "check_for_update_on_startup = false",
        "",
        "[model_providers.fake]",
        'name = "Fake OpenAI"',
        f"base_url = {_toml_str(base_url)}",
        'wire_api = "responses"',
        f"env_key = {_toml_str(CODEX_API_KEY_ENV)}",
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "",
        "[analytics]",
        "enabled = false",  # else ~5 s at exit and DNS for chatgpt.com
        "",
        "[feedback]",
        "enabled = false",
        "",
        "[features]",
        "plugins = false",  # else a marketplace sync (DNS for api.github.com)
        "apps = false",
        "shell_snapshot = false",
        "unbounded_connection_retries = false",  # else it retries forever when the fake is down
        "",
    ]
    for project in trusted_projects:
        lines += [f"[projects.{_toml_str(str(project))}]", 'trust_level = "trusted"', ""]
    return "\n".join(lines)


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def codex_trust_hashes(hooks_file: Path, hooks: Mapping[str, Any]) -> dict[str, str]:
    """Trust keys and hashes Codex expects in ``[hooks.state]`` for the hooks in ``hooks_file``.

    Key ``<abs hooks file>:<snake_event>:<group>:<handler>``; value ``sha256:<hex>`` of the
    sorted-key compact JSON of ``{event_name, matcher?, hooks: [normalised handler]}``.
    """
    out: dict[str, str] = {}
    for event, groups in hooks.items():
        label = _snake(event)
        for gi, group in enumerate(groups):
            for hi, handler in enumerate(group.get("hooks") or []):
                if event in _CODEX_SHORT_TIMEOUT:
                    timeout = min(max(1, int(handler["timeout"])), 3) if "timeout" in handler else 1
                else:
                    timeout = max(1, int(handler.get("timeout", 600)))
                norm: JsonDict = {
                    "type": handler.get("type", "command"),
                    "command": handler["command"],
                    "timeout": timeout,
                    "async": bool(handler.get("async", False)),
                }
                if handler.get("statusMessage") is not None:
                    norm["statusMessage"] = handler["statusMessage"]
                ident: JsonDict = {"event_name": label, "hooks": [norm]}
                if group.get("matcher") is not None and event not in _CODEX_NO_MATCHER:
                    ident["matcher"] = group["matcher"]
                blob = json.dumps(ident, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                out[f"{hooks_file}:{label}:{gi}:{hi}"] = "sha256:" + hashlib.sha256(blob.encode()).hexdigest()
    return out


def codex_trust_toml(hashes: Mapping[str, str]) -> str:
    return "".join(
        f"\n[hooks.state.{_toml_str(key)}]\ntrusted_hash = {_toml_str(value)}\n" for key, value in hashes.items()
    )


def _hooks_document(hooks_config: Mapping[str, Any]) -> JsonDict:
    """Accept the hooks.json document (``{"hooks": {...}}``) or its ``hooks`` mapping."""
    if "hooks" in hooks_config:
        return dict(hooks_config)
    return {"hooks": dict(hooks_config)}


def run_codex(
    project_dir: Path,
    hooks_config: Mapping[str, Any] | None,
    script: Step | Iterable[Step] | None,
    prompt: str,
    *,
    scope: Literal["user", "project"] = "user",
    trust: Literal["hash", "bypass", "none"] = "hash",
    codex_home: Path | None = None,
    model: str = CODEX_MODEL,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 90.0,
    fake: FakeOpenAIResponses | None = None,
    sandbox: Sandbox | None = None,
    prepare: Callable[[Path], None] | None = None,
) -> HostRun:
    """Run ``codex exec --json PROMPT`` in ``project_dir`` with a fresh CODEX_HOME.

    ``hooks_config`` is written as ``$CODEX_HOME/hooks.json`` (``scope="user"``) or
    ``<project>/.codex/hooks.json`` (``scope="project"``; the project is marked trusted in
    config.toml). ``trust``: ``"hash"`` writes the ``[hooks.state]`` trust entries Codex's
    ``/hooks`` review would write, ``"bypass"`` passes ``--dangerously-bypass-hook-trust``,
    ``"none"`` leaves the hooks untrusted (Codex then skips them silently). The sandbox is
    bypassed (``--dangerously-bypass-approvals-and-sandbox``); the network namespace is the
    sandbox. Remember Codex refuses ``rm -f``/``rm -rf`` by itself: use ``rm -r``.
    ``prepare(codex_home)`` runs once config.toml (and hooks.json) are written and before the CLI
    starts: ``hookgate install codex`` with ``CODEX_HOME=codex_home`` adds its hooks and trust there.
    """
    exe = require_cli(CODEX)
    project_dir = project_dir.resolve()
    home = (codex_home or _fresh_dir(project_dir, "codex-home-")).resolve()
    home.mkdir(parents=True, exist_ok=True)
    user_home = home / "home"  # HOME for the login shell: keeps the developer's profile out
    user_home.mkdir(exist_ok=True)

    own_fake = fake is None
    sandbox = sandbox or net_sandbox()
    server = fake or FakeOpenAIResponses(sock=sandbox.bind_loopback())
    server.script(*_as_steps(script))
    try:
        server.start()
        config = codex_config_toml(server.base_url, model=model, trusted_projects=[project_dir])
        trust_args: list[str] = []
        if hooks_config is not None:
            document = _hooks_document(hooks_config)
            hooks_file = (project_dir / ".codex" / "hooks.json") if scope == "project" else home / "hooks.json"
            hooks_file.parent.mkdir(parents=True, exist_ok=True)
            hooks_file.write_text(json.dumps(document, indent=2))
            if trust == "hash":
                config += codex_trust_toml(codex_trust_hashes(hooks_file, document["hooks"]))
            elif trust == "bypass":
                trust_args = ["--dangerously-bypass-hook-trust"]
        (home / "config.toml").write_text(config)
        if prepare is not None:
            prepare(home)
        run_env = _base_env(
            user_home,
            {
                "CODEX_HOME": str(home),
                CODEX_API_KEY_ENV: "sk-fake-codex",
                **(env or {}),
            },
        )
        argv = [
            str(exe),
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--json",
            *trust_args,
            *extra_args,
            prompt,
        ]
        return _run(
            "codex",
            argv,
            cwd=project_dir,
            env=run_env,
            timeout=timeout,
            fake=server,
            home=home,
            sandbox=sandbox,
        )
    finally:
        if own_fake:
            server.close()


# ---- hookgate install -----------------------------------------------------------------------

POLICY = Path(__file__).parent / "policy" / "hookgate.yaml"
"""The one hookgate policy the e2e suite wires into every host (see policy/hookgate.yaml)."""


def hookgate_executable() -> Path:
    """The ``hookgate`` console script of the venv running the tests."""
    import sys

    return Path(sys.prefix) / "bin" / "hookgate"


def hookgate_install(
    host: str,
    *,
    project: Path | None = None,
    config: Path | None = POLICY,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    action: str = "install",
) -> subprocess.CompletedProcess[str]:
    """Run the real ``hookgate install|uninstall HOST`` (``--project`` when given, else user level,
    i.e. HOME / CODEX_HOME from ``env``); raise AssertionError with its output when it fails."""
    argv = [str(hookgate_executable()), action, host]
    if project is not None:
        argv += ["--project", str(project)]
    if config is not None and action == "install":
        argv += ["--config", str(config)]
    argv += list(args)
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(argv, capture_output=True, text=True, env=full_env, timeout=60, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise AssertionError(f"{shlex.join(argv)} failed rc={proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


@dataclass
class Workspace:
    """A scratch layout for one scenario: ``root/proj`` (the agent's cwd, with ``victim/``),
    ``root/hooks/*.sh`` (native hook scripts) and ``root/logs/*.jsonl`` (their stdin logs)."""

    root: Path

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self.project.mkdir(parents=True, exist_ok=True)

    @property
    def project(self) -> Path:
        return self.root / "proj"

    @property
    def victim(self) -> Path:
        return self.project / "victim"

    def make_victim(self) -> Path:
        return make_victim(self.project)

    @property
    def victim_alive(self) -> bool:
        return (self.victim / "file.txt").exists()

    def log_path(self, name: str) -> Path:
        return self.root / "logs" / f"{name}.jsonl"

    def hook(self, name: str, **kwargs: Any) -> str:
        """``hook_script`` at ``hooks/<name>.sh`` logging to ``logs/<name>.jsonl``; see there."""
        return hook_script(self.root / "hooks" / f"{name}.sh", log=self.log_path(name), **kwargs)

    def payloads(self, name: str) -> list[JsonDict]:
        return read_jsonl(self.log_path(name))


def make_victim(parent: Path, name: str = "victim") -> Path:
    """A folder holding ``file.txt`` ("precious") for delete/deny scenarios."""
    path = parent / name
    path.mkdir(parents=True, exist_ok=True)
    (path / "file.txt").write_text("precious\n")
    return path


__all__ = [
    "CODEX",
    "GEMINI",
    "POLICY",
    "CliSpec",
    "HostRun",
    "HostTimeout",
    "HostUnavailable",
    "Workspace",
    "cache_root",
    "codex_config_toml",
    "codex_trust_hashes",
    "ensure_cli",
    "hook_script",
    "hookgate_executable",
    "hookgate_install",
    "make_victim",
    "net_sandbox",
    "read_jsonl",
    "require_cli",
    "run_codex",
    "run_gemini",
]
