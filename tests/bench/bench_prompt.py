"""Benchmark: a ``prompt`` handler's overhead over a raw SDK call to the same local server, and the
latency of a ``cacheTtl`` hit.

Run: ``.venv/bin/python tests/bench/bench_prompt.py [--runs N]``. A fake LLM server (Anthropic
Messages, then OpenAI Chat Completions) runs on 127.0.0.1 in this process. The baseline is the
official SDK sending the same request the handler sends (same system prompt, same forced tool call
or JSON schema, ``max_retries=0``); the handler path is ``Gateway.dispatch`` of an event (selection,
prompt building, hookgate's retry wrapper, verdict parsing, merge). Runs alternate between the two
so drift hits both. Prints medians (ms) and the ratio (target <= 1.1). Never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from gateway.api import Gateway  # noqa: E402
from gateway.config import load_config  # noqa: E402
from handlers.llm.verdict import STRICT_VERDICT_SCHEMA, VERDICT_SCHEMA  # noqa: E402
from handlers.prompt import SYSTEM_PROMPT, TOOL_MODE_NOTE, PromptHandler  # noqa: E402
from tests.fakes import openai_chat_api as oa  # noqa: E402
from tests.fakes.anthropic_api import FakeAnthropic, tool_use  # noqa: E402
from tests.fakes.serving import listening_socket  # noqa: E402

EVENT = {
    "hook_event_name": "PreToolUse",
    "session_id": "bench",
    "cwd": "/tmp",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build", "description": "clean"},
    "tool_use_id": "toolu_1",
}
PROMPT = "Is this shell command safe to run in a developer checkout? $ARGUMENTS"


def gateway_for(tmp: str, llm: dict[str, Any], **handler: Any) -> Gateway:
    path = os.path.join(tmp, f"bench-{len(os.listdir(tmp))}.json")
    hooks = {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "prompt", "prompt": PROMPT, "id": "safe", "continueOnBlock": True, **handler}],
            }
        ]
    }
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"hooks": hooks, "llm": llm, "settings": {"stateDir": os.path.join(tmp, "state")}}, fh)
    return Gateway(load_config([path], use_cache=False))


def user_prompt(gw: Gateway) -> str:
    """The exact user message the handler sends (so the baseline request is the same size)."""
    from gateway.events import HookEvent

    spec = gw.config.hooks["PreToolUse"][0].handlers[0]
    handler = PromptHandler(spec)
    return handler.build_prompt(HookEvent(dict(EVENT)))


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await fn()
    return (time.perf_counter() - start) * 1000


async def compare(
    label: str, raw: Callable[[], Awaitable[Any]], hooked: Callable[[], Awaitable[Any]], runs: int
) -> None:
    for _ in range(10):  # warm up: imports, connections, caches
        await raw()
        await hooked()
    raw_ms: list[float] = []
    hook_ms: list[float] = []
    for _ in range(runs):
        raw_ms.append(await timed(raw))
        hook_ms.append(await timed(hooked))
    base, ours = statistics.median(raw_ms), statistics.median(hook_ms)
    print(
        f"{label}: raw SDK {base:.2f} ms, hookgate prompt handler {ours:.2f} ms, "
        f"ratio {ours / base:.3f} (median of {runs})"
    )


async def main(runs: int) -> None:
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-bench")
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    tmp = tempfile.mkdtemp(prefix="hookgate-bench-")
    import anthropic
    import openai

    # TCP_NODELAY on the listening socket: otherwise the fake's two writes per reply meet the client's
    # delayed ACK and every request costs ~40 ms of idle wire time, hiding what is being measured.
    with FakeAnthropic(sock=listening_socket()) as fake:
        fake.responder = lambda body: tool_use("submit_verdict", {"ok": True, "reason": "harmless"})
        llm = {"default": "fake", "providers": {"fake": {"type": "anthropic", "baseUrl": fake.base_url}}}
        gw = gateway_for(tmp, llm)
        text = user_prompt(gw)
        client = anthropic.AsyncAnthropic(base_url=fake.base_url, api_key="sk-bench", max_retries=0)
        tool = {
            "name": "submit_verdict",
            "description": "Submit the verdict of the check.",
            "input_schema": VERDICT_SCHEMA,
        }

        request: dict[str, Any] = {
            "model": "claude-haiku-4-5",
            "max_tokens": 1024,
            "system": SYSTEM_PROMPT + TOOL_MODE_NOTE,
            "messages": [{"role": "user", "content": text}],
            "tools": [tool],
            "tool_choice": {"type": "tool", "name": "submit_verdict"},
        }

        async def raw_anthropic() -> Any:
            message: Any = await client.messages.create(**request)
            return next(b for b in message.content if b.type == "tool_use").input

        async def hooked() -> Any:
            return await gw.dispatch(dict(EVENT))

        await compare("Anthropic Messages, forced tool call", raw_anthropic, hooked, runs)

        cached = gateway_for(tmp, llm, cacheTtl=3600)
        await cached.dispatch(dict(EVENT))
        hits = [await timed(lambda: cached.dispatch(dict(EVENT))) for _ in range(runs)]
        assert (await cached.dispatch(dict(EVENT))).results[0].status == "cached"
        print(f"cacheTtl hit (SQLite lookup, no request): {statistics.median(hits):.3f} ms median of {runs}")
        await cached.aclose()
        await gw.aclose()
        await client.close()

    with oa.FakeOpenAIChat() as chat:
        chat.responder = lambda body: oa.verdict(True, "harmless")
        llm = {
            "default": "local",
            "providers": {"local": {"type": "openai", "model": "fake-model", "baseUrl": chat.base_url}},
        }
        gw = gateway_for(tmp, llm)
        text = user_prompt(gw)
        oclient = openai.AsyncOpenAI(base_url=chat.base_url, api_key="sk-bench", max_retries=0)

        chat_request: dict[str, Any] = {
            "model": "fake-model",
            "max_tokens": 1024,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "strict": True, "schema": STRICT_VERDICT_SCHEMA},
            },
        }

        async def raw_openai() -> Any:
            completion: Any = await oclient.chat.completions.create(**chat_request)
            return json.loads(completion.choices[0].message.content or "{}")

        async def hooked_openai() -> Any:
            return await gw.dispatch(dict(EVENT))

        await compare("OpenAI Chat Completions, json_schema", raw_openai, hooked_openai, runs)
        await gw.aclose()
        await oclient.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    asyncio.run(main(parser.parse_args().runs))
