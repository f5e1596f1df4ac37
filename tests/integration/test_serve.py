"""``hookgate serve`` as a real subprocess on 127.0.0.1, driven by an httpx2 client.

Also one in-process server (uvicorn in a thread) for what a subprocess cannot show: a handler whose
own code raises inside dispatch.
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

import httpx2
import pytest

from gateway import Verdict, register_handler
from handlers.base import Handler
from tests.conftest import CASES, ROOT, load_case
from tests.fakes.webhooks import Receiver, wait_for
from tests.integration.serve_helpers import ServeProcess, isolated_env

GUARDS = CASES / "configs" / "guards.json"
RM_RF = load_case("claude", "pretooluse-bash-rm-rf.json")
SAFE = load_case("claude", "pretooluse-bash-safe.json")


@pytest.fixture(scope="module")
def guards(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with ServeProcess(GUARDS, env=isolated_env(tmp_path_factory.mktemp("serve"))) as server:
        yield server


JSON = {"content-type": "application/json"}


def post(url: str, body: Any, headers: dict[str, str] | None = None) -> httpx2.Response:
    """POST as a hook client does: ``Content-Type: application/json``, no Origin (``headers`` override)."""
    content = json.dumps(body).encode() if isinstance(body, dict) else body
    return httpx2.post(url, content=content, headers={**JSON, **(headers or {})}, timeout=30)


# ---------------------------------------------------------------------------- routes


def test_hooks_answers_with_the_claude_code_json_body(guards: ServeProcess) -> None:
    response = post(f"{guards.url}/hooks", RM_RF)
    assert response.status_code == 200
    assert response.json()["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "Destructive command blocked by hook",
    }


def test_hooks_answers_an_empty_object_when_there_is_nothing_to_say(guards: ServeProcess) -> None:
    response = post(f"{guards.url}/hooks", load_case("claude", "sessionend.json"))
    assert (response.status_code, response.json()) == (200, {})


def test_dialect_route_renders_like_hookgate_run(guards: ServeProcess) -> None:
    answer = post(f"{guards.url}/hooks/claude", RM_RF).json()
    assert answer["exit_code"] == 2 and answer["stderr"] == "Destructive command blocked by hook\n"
    assert json.loads(answer["stdout"]) == answer["claude"]
    assert answer["event"] == "PreToolUse" and answer["dialect"] == "claude"
    assert answer["decision"]["permission"] == "deny" and len(answer["decision"]["results"]) == 2


def test_kiro_route(guards: ServeProcess) -> None:
    event = load_case("kiro", "pretooluse-execute-bash-rm.json")
    answer = post(f"{guards.url}/hooks/kiro", event).json()
    assert answer["dialect"] == "kiro" and answer["exit_code"] == 2 and answer["stdout"] == ""
    assert answer["stderr"] == "Destructive command blocked by hook\n"
    detected = post(f"{guards.url}/hooks/auto", event).json()
    assert (detected["dialect"], detected["exit_code"], detected["stderr"]) == ("kiro", 2, answer["stderr"])


def test_compact_answer_for_the_thin_client(guards: ServeProcess) -> None:
    response = post(f"{guards.url}/hooks/auto", RM_RF, {"accept": "application/vnd.hookgate.rendered"})
    length = int(response.headers["hookgate-stdout-length"])
    assert response.headers["hookgate-exit-code"] == "2"
    assert json.loads(response.content[:length])["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert response.content[length:] == b"Destructive command blocked by hook\n"


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        (b"{not json", 400, "event is not valid JSON: Expecting property name enclosed in double quotes"),
        (b"[1, 2]", 400, "event must be a JSON object, got list"),
        (b"", 400, "event is empty"),
        (b'{"hook_event_name": "NoSuchEvent"}', 400, "unknown event 'NoSuchEvent'"),
        (b"\xff\xfe", 400, "not valid UTF-8"),
        (b'{"hook_event_name": "PreToolUse", "cwd": "/\\u0000"}', 400, "event field 'cwd' must be a path, without NUL"),
    ],
)
def test_malformed_events_get_400_with_one_line(guards: ServeProcess, body: bytes, status: int, error: str) -> None:
    for path in ("/hooks", "/hooks/claude"):
        response = post(guards.url + path, body)
        assert response.status_code == status and error in response.json()["error"]
        assert "\n" not in response.json()["error"]


def test_unknown_dialect_is_404(guards: ServeProcess) -> None:
    response = post(f"{guards.url}/hooks/vim", RM_RF)
    assert response.status_code == 404 and "unknown dialect 'vim'" in response.json()["error"]


async def test_trailing_slashes_answer_like_the_plain_paths(app_client: Callable[..., httpx2.AsyncClient]) -> None:
    client = app_client()
    for path in ("/hooks", "/hooks/"):
        answer = await client.post(path, content=json.dumps(RM_RF))
        assert answer.status_code == 200 and answer.json()["hookSpecificOutput"]["permissionDecision"] == "deny"
    for path in ("/hooks/claude", "/hooks/claude/"):
        answer = await client.post(path, content=json.dumps(RM_RF))
        assert answer.status_code == 200 and answer.json()["exit_code"] == 2
    unknown = await client.post("/hooks/vim/", content=json.dumps(RM_RF))
    assert unknown.status_code == 404 and "unknown dialect 'vim'" in unknown.json()["error"]
    assert (await client.get("/healthz/")).json()["status"] == "ok"
    assert (await client.get("/metrics/")).status_code == 200


async def test_unknown_paths_and_methods_get_a_json_error(app_client: Callable[..., httpx2.AsyncClient]) -> None:
    client = app_client()
    missing = await client.post("/hooks/claude/extra", content=json.dumps(RM_RF))
    assert missing.status_code == 404 and missing.headers["content-type"] == "application/json"
    assert missing.json()["error"].startswith("no route POST /hooks/claude/extra (hookgate serve answers POST /hooks")
    wrong = await client.get("/hooks/")
    assert (wrong.status_code, wrong.headers["allow"], wrong.json()) == (
        405,
        "POST",
        {"error": "method GET not allowed on /hooks/"},
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--port", "99999"], "argument --port: '99999' is not a port (expected 0-65535)"),
        (["--port", "-1"], "argument --port: '-1' is not a port"),
        (["--port", "http"], "argument --port: 'http' is not an integer"),
        (["--max-body", "0"], "argument --max-body: '0': expected an integer greater than 0"),
        (["--reload-interval", "-1"], "argument --reload-interval: '-1': expected a number of seconds >= 0"),
        (["--reload-interval", "nan"], "argument --reload-interval: 'nan': expected a number of seconds >= 0"),
        (["--read-timeout", "0"], "argument --read-timeout: '0': expected a number of seconds > 0"),
        (["--read-timeout", "-2"], "argument --read-timeout: '-2': expected a number of seconds > 0"),
        (["--read-timeout", "inf"], "argument --read-timeout: 'inf': expected a number of seconds > 0"),
        (["--read-timeout", "soon"], "argument --read-timeout: 'soon' is not a number of seconds"),
    ],
)
def test_serve_numbers_are_checked_as_usage_errors(args: list[str], error: str) -> None:
    from tests.conftest import run_hookgate

    proc = run_hookgate(["serve", "--config", str(GUARDS), *args])
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"hookgate serve: {error}") and "internal error" not in proc.stderr


def test_healthz_and_metrics(guards: ServeProcess) -> None:
    health = httpx2.get(f"{guards.url}/healthz").json()
    assert health["status"] == "ok" and health["config"] == [str(GUARDS)] and health["handlers"] > 0
    post(f"{guards.url}/hooks", RM_RF)
    post(f"{guards.url}/hooks", b"{bad")
    text = httpx2.get(f"{guards.url}/metrics").text
    assert 'hookgate_events_total{decision="deny",event="PreToolUse"}' in text
    assert "hookgate_handler_duration_seconds_bucket{" in text and 'type="command"' in text
    assert 'hookgate_requests_rejected_total{reason="malformed"}' in text
    assert "# TYPE hookgate_handler_errors_total counter" in text


def test_an_event_over_the_limit_is_denied_not_refused(tmp_path: Path) -> None:
    with ServeProcess(GUARDS, args=["--max-body", "2000"]) as server:
        big = {**SAFE, "tool_input": {"command": "x" * 5000}}
        answer = post(f"{server.url}/hooks", big)
        assert answer.status_code == 200  # a 413 would be "go ahead" to Claude Code's http hook
        assert answer.json()["hookSpecificOutput"]["permissionDecision"] == "deny"
        # the reason names what set the limit (HOOKGATE_MAX_EVENT_BYTES was named when it was not set)
        assert (
            "over the limit of 2000 bytes (--max-body)"
            in answer.json()["hookSpecificOutput"]["permissionDecisionReason"]
        )
        chunked = post(f"{server.url}/hooks", iter([json.dumps(big).encode()]))  # no content-length
        assert (
            chunked.status_code == 200 and "limit" in chunked.json()["hookSpecificOutput"]["permissionDecisionReason"]
        )
        assert post(f"{server.url}/hooks", SAFE).status_code == 200
        assert 'hookgate_requests_rejected_total{reason="too_large"} 2.0' in httpx2.get(f"{server.url}/metrics").text


def test_bearer_token_is_required_on_every_request() -> None:
    with ServeProcess(GUARDS, env={"HOOKGATE_TOKEN": "s3cret"}) as server:
        for path in ("/healthz", "/metrics"):
            assert httpx2.get(server.url + path).status_code == 401
        assert post(f"{server.url}/hooks", RM_RF).status_code == 401
        assert post(f"{server.url}/hooks", RM_RF, {"authorization": "Bearer wrong"}).status_code == 401
        ok = post(f"{server.url}/hooks", RM_RF, {"authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and ok.json()["hookSpecificOutput"]["permissionDecision"] == "deny"
        for scheme in ("bearer s3cret", "BEARER  s3cret"):  # RFC 7235: the scheme is case-insensitive
            assert post(f"{server.url}/hooks", RM_RF, {"authorization": scheme}).status_code == 200, scheme
        for wrong in ("Basic s3cret", "bearer", "Bearers3cret", "bearer s3cret2", "s3cret"):
            assert post(f"{server.url}/hooks", RM_RF, {"authorization": wrong}).status_code == 401, wrong
        assert any("HOOKGATE_TOKEN is only 6 characters" in line for line in server.lines), server.lines


def test_listening_beyond_loopback_without_a_token_warns_about_the_console() -> None:
    """Off loopback there is no Host check: without a token, a page a browser opens could read the audit
    trail at /ui by DNS rebinding; the warning says so. (The server only listens; nothing is sent to it.)"""
    with ServeProcess(GUARDS, args=["--host", "0.0.0.0"], env={"HOOKGATE_TOKEN": ""}) as server:
        line = server.wait_log("without HOOKGATE_TOKEN")
        assert "/ui" in line and "DNS rebinding" in line and "set HOOKGATE_TOKEN" in line, line


async def test_wrong_token_guesses_are_paced_one_at_a_time(
    app_client: Callable[..., httpx2.AsyncClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each wrong bearer token waits its turn (``WrongTokens.PAUSE``) before its 401, so guesses sent at
    once on many connections still come back one pause apart; the right token never waits behind them;
    past ``MAX_WAITING`` waiting guesses the next one gets 429 at once; no credential at all is no guess."""
    import asyncio
    import time

    from gateway.serve.guard import WRONG_TOKENS, WrongTokens

    monkeypatch.setattr(WrongTokens, "PAUSE", 0.1)  # (0.5 s in service: the test needs only the order)
    client = app_client(token="s3cret")
    finished: list[str] = []

    async def guess(n: int) -> int:
        answer = await client.get("/healthz", headers={"authorization": f"Bearer guess-{n}"})
        finished.append(f"guess-{n}")
        return answer.status_code

    async def right() -> int:
        await asyncio.sleep(0.05)  # behind the guesses
        answer = await client.get("/healthz", headers={"authorization": "Bearer s3cret"})
        finished.append("right")
        return answer.status_code

    started = time.monotonic()
    codes = await asyncio.gather(*(guess(n) for n in range(4)), right())
    assert codes == [401, 401, 401, 401, 200]
    assert time.monotonic() - started >= 4 * WRONG_TOKENS.PAUSE  # one after another, not side by side
    assert finished.index("right") < 2  # answered while the guesses still waited
    assert (await client.get("/healthz")).status_code == 401  # no token presented: refused, not paced
    flood = await asyncio.gather(
        *(
            client.get("/healthz", headers={"authorization": f"Bearer x{n}"})
            for n in range(WRONG_TOKENS.MAX_WAITING + 3)
        )
    )
    statuses = [answer.status_code for answer in flood]
    assert statuses.count(429) == 3 and statuses.count(401) == WRONG_TOKENS.MAX_WAITING


def test_handler_failures_show_in_metrics_and_stderr(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text("hooks:\n  PreToolUse:\n    - hooks: [{type: command, command: 'exit 1', id: broken}]\n")
    with ServeProcess(config) as server:
        answer = post(f"{server.url}/hooks/claude", SAFE).json()
        assert answer["exit_code"] == 0 and answer["stderr"].startswith("hookgate: handler broken error:")
        text = httpx2.get(f"{server.url}/metrics").text
        assert 'hookgate_handler_errors_total{handler="broken",status="error",type="command"} 1.0' in text


# ---------------------------------------------------------------------------- reload and shutdown


DENY_RM = "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks: [{type: command, command: '%s'}]\n"


def _deny_script(tmp_path: Path, reason: str) -> str:
    script = tmp_path / f"deny-{reason}.sh"
    script.write_text(f"#!/bin/sh\necho '{reason}' >&2\nexit 2\n")
    script.chmod(0o755)
    return str(script)


def test_sighup_reload_rejects_a_bad_config_and_keeps_serving(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text(DENY_RM % _deny_script(tmp_path, "first"))
    with ServeProcess(config, args=["--reload-interval", "0"]) as server:
        assert post(f"{server.url}/hooks", SAFE).json()["hookSpecificOutput"]["permissionDecisionReason"] == "first"
        config.write_text("hooks:\n  PreToolUse: [{matcher: Bash, hooks: [{type: nope}]}]\n")
        mark = len(server.lines)
        server.signal(signal.SIGHUP)
        line = server.wait_log("config reload", after=mark)
        assert "rejected" in line and "unknown handler type 'nope'" in line and "previous config" in line
        assert post(f"{server.url}/hooks", SAFE).json()["hookSpecificOutput"]["permissionDecisionReason"] == "first"
        config.write_text(DENY_RM % _deny_script(tmp_path, "second"))
        mark = len(server.lines)
        server.signal(signal.SIGHUP)
        assert "reloaded (SIGHUP)" in server.wait_log("config reload", after=mark)
        assert post(f"{server.url}/hooks", SAFE).json()["hookSpecificOutput"]["permissionDecisionReason"] == "second"
        assert httpx2.get(f"{server.url}/healthz").json()["reloads"] == 1
        assert server.stop() == 0


def test_a_reload_says_python_modules_are_not_re_imported(tmp_path: Path) -> None:
    """SIGHUP reads the config again, not the Python code a ``python`` handler imported: the log says so,
    naming the module (hookgate's own guards are not named)."""
    (tmp_path / "pol_mod.py").write_text('def check(event):\n    return {"decision": "block", "reason": "v1"}\n')
    config = tmp_path / "hookgate.yaml"
    config.write_text(
        "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n"
        "        - {type: python, callable: 'pol_mod:check'}\n"
        "        - {type: python, callable: 'configs.guards.shell_guard:check_event'}\n"
    )
    with ServeProcess(config, args=["--reload-interval", "0"], env={"PYTHONPATH": f"{tmp_path}:{ROOT}"}) as server:
        mark = len(server.lines)
        server.signal(signal.SIGHUP)
        assert "reloaded (SIGHUP)" in server.wait_log("config reload", after=mark)
        line = server.wait_log("not re-imported", after=mark)
        assert "(pol_mod)" in line and "restart to run edited code" in line and "configs." not in line


def test_file_change_reloads_without_a_signal(tmp_path: Path) -> None:
    config = tmp_path / "hookgate.yaml"
    config.write_text(DENY_RM % _deny_script(tmp_path, "first"))
    with ServeProcess(config, args=["--reload-interval", "0.1"]) as server:
        mark = len(server.lines)
        config.write_text("{not: [valid")
        assert "rejected" in server.wait_log("config reload", after=mark)
        mark = len(server.lines)
        config.write_text(DENY_RM % _deny_script(tmp_path, "second"))
        assert "config file changed" in server.wait_log("config reloaded", after=mark)
        assert post(f"{server.url}/hooks", SAFE).json()["hookSpecificOutput"]["permissionDecisionReason"] == "second"


def test_graceful_shutdown_lets_in_flight_events_finish(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    script = tmp_path / "slow.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nsleep 1\necho 'slow but sure' >&2\nexit 2\n")
    script.chmod(0o755)
    config = tmp_path / "hookgate.yaml"
    config.write_text(DENY_RM % script)
    with ServeProcess(config) as server:
        answers: list[httpx2.Response] = []
        worker = threading.Thread(target=lambda: answers.append(post(f"{server.url}/hooks", SAFE)))
        worker.start()
        wait_for(marker.exists, what="the slow handler to start")
        server.signal(signal.SIGTERM)
        worker.join(timeout=30)
        assert answers[0].json()["hookSpecificOutput"]["permissionDecisionReason"] == "slow but sure"
        assert server.stop() == 0
        assert any("Application shutdown complete" in line for line in server.lines)


def test_async_http_handler_is_a_background_task_under_serve(tmp_path: Path) -> None:
    with Receiver() as receiver:
        config = tmp_path / "hookgate.json"
        config.write_text(
            json.dumps(
                {"hooks": {"PreToolUse": [{"hooks": [{"type": "http", "url": receiver.url("/hold"), "async": True}]}]}}
            )
        )
        with ServeProcess(config) as server:
            answer = post(f"{server.url}/hooks/claude", SAFE).json()
            assert answer["exit_code"] == 0 and answer["decision"]["results"][0]["status"] == "skipped"
            wait_for(lambda: len(receiver.calls) == 1, what="the background delivery")
            assert receiver.done == []
            receiver.release.set()
            wait_for(lambda: receiver.done == ["/hold"], what="the background delivery to finish")


def test_invalid_config_at_start_is_one_line_and_exit_1(tmp_path: Path) -> None:
    from tests.conftest import run_hookgate

    config = tmp_path / "hookgate.yaml"
    config.write_text("hooks:\n  PreToolUse: [{hooks: [{type: nope}]}]\n")
    proc = run_hookgate(["serve", "--config", str(config), "--port", "0"])
    assert proc.returncode == 1 and proc.stderr.startswith("hookgate: invalid config:")
    assert len(proc.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------- in-process: dispatch bugs


@register_handler
class Exploding(Handler):
    """A plugin handler with a bug outside ``run``: selecting it raises inside dispatch."""

    type: ClassVar[str] = "test_exploding"

    async def run(self, event: Any, ctx: Any) -> Verdict:
        return Verdict()

    def dedup_key(self) -> Any:
        raise RuntimeError("plugin bug\nwith a second line")


async def test_an_exception_inside_dispatch_is_a_500_and_the_server_goes_on(tmp_path: Path) -> None:
    from gateway.serve import HookServer, create_app

    config = tmp_path / "hookgate.yaml"
    config.write_text("hooks:\n  Stop:\n    - hooks: [{type: test_exploding}]\n")
    server = HookServer([str(config)], reload_interval=0)
    transport = httpx2.ASGITransport(app=create_app(server))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8787", headers=JSON) as client:
        broken = await client.post("/hooks", content=json.dumps(load_case("claude", "stop.json")))
        assert broken.status_code == 500
        assert broken.json()["error"] == "internal error while dispatching Stop: RuntimeError: plugin bug"
        fine = await client.post("/hooks", content=json.dumps(RM_RF))
        assert (fine.status_code, fine.json()) == (200, {})
        assert 'hookgate_requests_rejected_total{reason="internal_error"} 1.0' in (await client.get("/metrics")).text
    await server.aclose()


async def test_a_dispatch_bug_with_a_fail_closed_handler_blocks(tmp_path: Path) -> None:
    from gateway.serve import HookServer, create_app

    config = tmp_path / "hookgate.yaml"
    config.write_text("hooks:\n  Stop:\n    - hooks: [{type: test_exploding, failClosed: true}]\n")
    server = HookServer([str(config)], reload_interval=0)
    transport = httpx2.ASGITransport(app=create_app(server))
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8787", headers=JSON) as client:
        body = (await client.post("/hooks", content=json.dumps(load_case("claude", "stop.json")))).json()
        assert body["decision"] == "block" and "plugin bug" in body["reason"]
        answer = (await client.post("/hooks/claude", content=json.dumps(load_case("claude", "stop.json")))).json()
        assert answer["exit_code"] == 2
    await server.aclose()


# ---------------------------------------------------------------------------- request checks: CSRF, DNS rebinding


def test_the_cross_site_repro_is_refused(guards: ServeProcess) -> None:
    """The review's repro: a browser's "simple" POST from a rebound name gets no decision."""
    port = guards.url.rsplit(":", 1)[1]
    evil = {"content-type": "text/plain", "origin": "http://evil.example", "host": f"evil.example:{port}"}
    response = post(f"{guards.url}/hooks", RM_RF, evil)
    assert response.status_code == 421 and "evil.example" in response.json()["error"]
    same_host = post(f"{guards.url}/hooks", RM_RF, {**evil, "host": f"127.0.0.1:{port}"})
    assert same_host.status_code == 403 and "Origin: http://evil.example" in same_host.json()["error"]
    no_origin = post(f"{guards.url}/hooks", RM_RF, {"content-type": "text/plain"})
    assert no_origin.status_code == 415 and "application/json" in no_origin.json()["error"]
    for path in ("/healthz", "/metrics"):
        assert httpx2.get(guards.url + path, headers={"host": f"evil.example:{port}"}).status_code == 421
    text = httpx2.get(f"{guards.url}/metrics").text
    for reason in ("bad_host", "cross_origin", "unsupported_media_type"):
        assert f'hookgate_requests_rejected_total{{reason="{reason}"}}' in text


def test_what_claude_code_sends_is_accepted(guards: ServeProcess) -> None:
    """Claude Code's http hook (axios): Content-Type application/json, Host 127.0.0.1:PORT, no Origin."""
    port = guards.url.rsplit(":", 1)[1]
    headers = {
        "accept": "application/json, text/plain, */*",
        "user-agent": "axios/1.15.2",
        "host": f"127.0.0.1:{port}",
        "accept-encoding": "gzip, compress, deflate, br",
    }
    response = post(f"{guards.url}/hooks", RM_RF, headers)
    assert response.status_code == 200 and response.json()["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.fixture
async def app_client(tmp_path: Path) -> AsyncIterator[Callable[..., httpx2.AsyncClient]]:
    """``make(host=..., allow_hosts=..., token=..., peer=...)``: an httpx2 client on an in-process app."""
    from gateway.serve import HookServer, create_app

    servers: list[HookServer] = []
    clients: list[httpx2.AsyncClient] = []

    def make(
        *,
        host: str = "127.0.0.1",
        allow_hosts: tuple[str, ...] = (),
        token: str | None = None,
        peer: str = "127.0.0.1",
        config: Path = GUARDS,
    ) -> httpx2.AsyncClient:
        server = HookServer([str(config)], host=host, allow_hosts=allow_hosts, token=token, reload_interval=0)
        transport = httpx2.ASGITransport(app=create_app(server), client=(peer, 50000))
        client = httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8787", headers=JSON)
        servers.append(server)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()
    for server in servers:
        await server.aclose()


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:8787", 200),
        ("localhost:8787", 200),
        ("LOCALHOST.", 200),
        ("[::1]:8787", 200),
        ("127.0.0.2:8787", 200),
        ("evil.example:8787", 421),
        ("127.0.0.1.evil.example", 421),
        ("sub.localhost:8787", 421),
        ("[::ffff:127.0.0.1]:8787", 200),
        ("10.0.0.1:8787", 421),
    ],
)
async def test_host_check_on_a_loopback_bind(
    app_client: Callable[..., httpx2.AsyncClient], host: str, status: int
) -> None:
    client = app_client()
    assert (await client.get("/healthz", headers={"host": host})).status_code == status


@pytest.mark.parametrize(
    "host", ["::1", "::2", "::1:8787", "::ffff:127.0.0.1:80", "evil.example:8787", " evil.example "]
)
async def test_a_refused_host_is_quoted_as_sent(app_client: Callable[..., httpx2.AsyncClient], host: str) -> None:
    """An unbracketed IPv6 address was once quoted as ``':'`` (what was left of it after the port)."""
    refused = await app_client().get("/healthz", headers={"host": host})
    assert refused.status_code == 421
    assert refused.json()["error"].startswith(f"Host {host.strip()!r} is not this server's name")


async def test_allow_host_and_a_non_loopback_bind(app_client: Callable[..., httpx2.AsyncClient]) -> None:
    proxied = app_client(allow_hosts=("hookgate.internal",))
    assert (await proxied.get("/healthz", headers={"host": "hookgate.internal:443"})).status_code == 200
    assert (await proxied.get("/healthz", headers={"host": "other.internal"})).status_code == 421
    wide = app_client(host="0.0.0.0", token="t")  # beyond loopback: the token guards it, names are free
    auth = {"authorization": "Bearer t"}
    assert (await wide.get("/healthz", headers={"host": "gate.example", **auth})).status_code == 200
    assert (await wide.get("/healthz", headers={"host": "gate.example"})).status_code == 401
    assert (await wide.get("/healthz", headers={"origin": "https://gate.example", **auth})).status_code == 403


@pytest.mark.parametrize(
    ("content_type", "status"),
    [
        ("application/json", 200),
        ("application/json; charset=utf-8", 200),
        ("Application/JSON", 200),
        ("application/vnd.hookgate.event+json", 200),
        ("text/plain", 415),
        ("text/plain; charset=utf-8", 415),
        ("application/x-www-form-urlencoded", 415),
        ("multipart/form-data; boundary=x", 415),
        (None, 415),
    ],
)
async def test_posts_must_be_json(
    app_client: Callable[..., httpx2.AsyncClient], content_type: str | None, status: int
) -> None:
    client = app_client()
    headers = {"content-type": content_type} if content_type else {}
    request = client.build_request("POST", "/hooks", content=json.dumps(RM_RF), headers=headers)
    if content_type is None:
        del request.headers["content-type"]
    response = await client.send(request)
    assert response.status_code == status, response.text
    if status == 415:
        assert response.json()["error"].startswith("Content-Type must be application/json")


@pytest.mark.parametrize(
    "path",
    [
        "/hooks",
        "/hooks/kiro",
        "/approvals/apr-0123",
        "/approvals/feishu",
        "/ui/session",
        "/ui/api/approvals/apr-0123",
        "/nowhere",
    ],
)
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_every_post_route_must_be_json(guards: ServeProcess, path: str, content_type: str | None) -> None:
    """README "Request checks": *every* POST is application/json or 415, so no "simple" cross-site request
    reaches a route: the approval answers and the console's POSTs too (``POST /approvals/{id}`` once took a
    text/plain answer)."""
    headers = {"content-type": content_type} if content_type else {}
    response = httpx2.post(guards.url + path, content=b'{"decision": "approve"}', headers=headers, timeout=30)
    assert response.status_code == 415, (path, content_type, response.text)
    assert response.json()["error"].startswith("Content-Type must be application/json")


def test_slacks_form_callback_is_the_one_post_that_is_not_json(guards: ServeProcess) -> None:
    """Slack sends its interactivity callback as a form (its signature authenticates it): it reaches its
    route, which answers for itself (here: no slack channel is configured)."""
    form = {"content-type": "application/x-www-form-urlencoded"}
    for path in ("/approvals/slack", "/approvals/slack/"):
        response = httpx2.post(guards.url + path, content=b"payload=%7B%7D", headers=form, timeout=30)
        assert response.status_code == 404 and "no slack channel" in response.json()["error"], response.text


async def test_any_origin_is_refused_before_the_token(app_client: Callable[..., httpx2.AsyncClient]) -> None:
    client = app_client(token="s3cret")
    auth = {"authorization": "Bearer s3cret"}
    for origin in ("http://evil.example", "null", "http://127.0.0.1:8787"):
        response = await client.post("/hooks", content=json.dumps(RM_RF), headers={"origin": origin, **auth})
        assert response.status_code == 403 and response.json()["error"].startswith("cross-origin request refused")
    preflight = await client.options(
        "/hooks", headers={"origin": "http://evil.example", "access-control-request-method": "POST"}
    )
    assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers
    assert (await client.post("/hooks", content=json.dumps(RM_RF), headers=auth)).status_code == 200


# ---------------------------------------------------------------------------- passed-through host events


def gemini_event(name: str) -> dict[str, Any]:
    return {
        "session_id": "0e2d831a",
        "transcript_path": "/h/.gemini/tmp/p/chats/session-1.jsonl",
        "cwd": "/p",
        "timestamp": "2026-11-29T12:21:21.409Z",
        "hook_event_name": name,
        "llm_request": {"model": "gemini-2.5-flash", "messages": []},
    }


@pytest.mark.parametrize("route", ["/hooks/gemini", "/hooks/auto"])
def test_a_passed_through_event_gets_the_no_objection_answer(guards: ServeProcess, route: str) -> None:
    response = post(guards.url + route, gemini_event("BeforeModel"))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert (answer["event"], answer["dialect"], answer["exit_code"], answer["stdout"], answer["stderr"]) == (
        "BeforeModel",
        "gemini",
        0,
        "",
        "",
    )
    assert answer["decision"] is None and answer["claude"] == {} and "passes it through" in answer["passed_through"]
    compact = post(guards.url + route, gemini_event("AfterModel"), {"accept": "application/vnd.hookgate.rendered"})
    assert (compact.status_code, compact.headers["hookgate-exit-code"], compact.content) == (200, "0", b"")
    assert (
        'hookgate_events_total{decision="passthrough",event="BeforeModel"}' in httpx2.get(f"{guards.url}/metrics").text
    )


# ---------------------------------------------------------------------------- the caller's project folder


@register_handler
class ReportsProjectDir(Handler):
    """Denies with the event's ``project_dir`` as the reason (what the server set from the header)."""

    type: ClassVar[str] = "test_project_dir"

    async def run(self, event: Any, ctx: Any) -> Verdict:
        return Verdict(permission="deny", permission_reason=f"project_dir={event.project_dir}")


@pytest.fixture
def reports_project_dir(tmp_path: Path) -> Path:
    config = tmp_path / "hookgate.yaml"
    config.write_text("hooks:\n  PreToolUse:\n    - hooks: [{type: test_project_dir}]\n")
    return config


async def _reported(client: httpx2.AsyncClient, headers: dict[str, str]) -> httpx2.Response:
    return await client.post("/hooks", content=json.dumps(SAFE), headers=headers)


def _reason(response: httpx2.Response) -> str:
    assert response.status_code == 200, response.text
    return str(response.json()["hookSpecificOutput"]["permissionDecisionReason"])


async def test_project_dir_header_reaches_the_event(
    app_client: Callable[..., httpx2.AsyncClient], reports_project_dir: Path, tmp_path: Path
) -> None:
    client = app_client(token="t", config=reports_project_dir)
    header, auth = "X-Hookgate-Project-Dir", {"authorization": "Bearer t"}
    assert _reason(await _reported(client, auth)) == "project_dir=None"
    (tmp_path / "my proj" / "été").mkdir(parents=True)
    assert (
        _reason(await _reported(client, {**auth, header: quote(f"{tmp_path}/my proj/été")}))
        == f"project_dir={tmp_path}/my proj/été"
    )
    for value in ("relative/dir", "/no/such/dir", quote(str(reports_project_dir))):  # the last one: a file
        bad = await _reported(client, {**auth, header: value})
        assert bad.status_code == 400
        assert bad.json()["error"] == "X-Hookgate-Project-Dir must be the absolute path of an existing directory"


async def test_project_dir_header_only_with_a_token(
    app_client: Callable[..., httpx2.AsyncClient],
    reports_project_dir: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    header = {"X-Hookgate-Project-Dir": str(elsewhere)}
    # no token: ignored, from loopback too (another local user could send it), with one warning
    local = app_client(config=reports_project_dir)
    with caplog.at_level("WARNING", logger="hookgate.server"):
        assert _reason(await _reported(local, header)) == "project_dir=None"
        assert _reason(await _reported(local, {"X-Hookgate-Project-Dir": "relative"})) == "project_dir=None"
    assert [r.message for r in caplog.records if "X-Hookgate-Project-Dir" in r.message] == [
        "ignoring X-Hookgate-Project-Dir (the caller's project folder): it is accepted only with HOOKGATE_TOKEN "
        "set; command handlers use this server's CLAUDE_PROJECT_DIR"
    ]
    remote = app_client(host="0.0.0.0", peer="10.1.2.3", config=reports_project_dir)
    assert _reason(await _reported(remote, header)) == "project_dir=None"
    with_token = app_client(host="0.0.0.0", peer="10.1.2.3", token="t", config=reports_project_dir)
    assert _reason(await _reported(with_token, {**header, "authorization": "Bearer t"})) == f"project_dir={elsewhere}"
    assert (await _reported(with_token, header)).status_code == 401


def test_an_event_shaped_past_decoding_is_denied_not_refused(guards: ServeProcess) -> None:
    """Valid JSON nested past the recursion limit (the agent can pad a tool input so): a deny with HTTP 200,
    as `hookgate run` answers, never a 400 (which Claude Code's http hook reads as "go ahead")."""
    deep = (
        b'{"hook_event_name": "PreToolUse", "tool_name": "mcp__box__exec", "tool_input": {"command": "rm -rf ~",'
        b' "pad": ' + b"[" * 5000 + b"]" * 5000 + b"}}"
    )
    answer = post(f"{guards.url}/hooks", deep)
    assert answer.status_code == 200, answer.text
    output = answer.json()["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny" and "nested too deeply" in output["permissionDecisionReason"]
    stop = b'{"hook_event_name": "Stop", "n": ' + b"9" * 5000 + b"}"
    assert post(f"{guards.url}/hooks", stop).status_code == 200  # nothing to hold back: the non-blocking answer


def test_a_long_guard_check_does_not_stop_serve_answering_others(tmp_path: Path) -> None:
    """The default guards run a check of a large input in a worker thread (``hookgate_threadsafe``): while
    one slow check runs, serve still reads and answers other requests (it used to stop, and a request
    whose body it could not read meanwhile got a 408, which a host reads as "go ahead")."""
    import threading

    slow = {**RM_RF, "tool_input": {"command": "eval " * 150_000 + "rm -rf ~"}}
    quick = {**RM_RF, "tool_input": {"command": "git push --force origin main"}}
    done: list[str] = []
    answers: dict[str, httpx2.Response] = {}
    with ServeProcess("builtin:default", env=isolated_env(tmp_path)) as server:

        def send(name: str, event: dict[str, Any]) -> None:
            answers[name] = post(f"{server.url}/hooks", event)
            done.append(name)

        big = threading.Thread(target=send, args=("slow", slow))
        big.start()
        for _ in range(3):  # sent while the slow check runs; each answered before it ends
            send("quick", quick)
        big.join(60)
    assert done[-1] == "slow", done
    for name in ("slow", "quick"):
        assert answers[name].status_code == 200, answers[name].text
        assert answers[name].json()["hookSpecificOutput"]["permissionDecision"] == "deny", answers[name].text
