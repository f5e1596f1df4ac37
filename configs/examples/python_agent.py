"""A home-grown Python agent loop guarded by hookgate, with a scripted model (no network).

Run it:  python -m configs.examples.python_agent [--config configs/examples/python-agent.yaml]

The loop is what any agent does (ask the model, run the tools it asks for, feed back the results,
stop when it answers), with the host calls of ``gateway.host`` around each step: ``session_start``
(context to inject), ``user_input``, ``model_call``, ``tool_call`` (arguments possibly rewritten, a
deny raised as ``ToolCallDenied``, the result possibly rewritten), ``stop`` (go on or not),
``output`` and ``session_end``. ``ScriptedModel`` replays a list of replies, so the example runs
anywhere; swap in a real model client and nothing else changes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gateway import Gateway, ToolCallDenied

EXAMPLE_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python-agent.yaml")


@dataclass
class ScriptedModel:
    """Replays ``replies`` in order: each ``{"content": str | None, "tool_calls": [{"id", "name", "args"}]}``."""

    replies: list[dict[str, Any]]
    seen: list[list[dict[str, Any]]] = field(default_factory=list)

    def __call__(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        self.seen.append([dict(m) for m in messages])
        if not self.replies:
            return {"content": "I have nothing more to do.", "tool_calls": [], "finish_reason": "stop"}
        reply = dict(self.replies.pop(0))
        reply.setdefault("tool_calls", [])
        reply.setdefault("finish_reason", "tool_calls" if reply["tool_calls"] else "stop")
        return reply


@dataclass
class Transcript:
    """What a run did: the final answer, the conversation, and every tool call that really ran."""

    final: Any = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    tool_runs: list[dict[str, Any]] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)


async def run_agent(
    gw: Gateway,
    model: Callable[[list[dict[str, Any]]], dict[str, Any]],
    tools: dict[str, Callable[..., Any]],
    prompt: str,
    *,
    session_id: str,
    user_id: str,
    agent_id: str,
    max_turns: int = 10,
) -> Transcript:
    """One session of the agent loop through the host API; returns its ``Transcript``."""
    out = Transcript()
    context = await gw.session_start(session_id=session_id, user_id=user_id, agent_id=agent_id, tools=sorted(tools))
    ids = {"session_id": session_id, "user_id": user_id, "agent_id": agent_id}
    if context:
        out.messages.append({"role": "system", "content": context})
    answer = await gw.user_input(prompt, **ids)
    out.messages.append({"role": "user", "content": answer.content})
    held = False
    for _ in range(max_turns):
        async with gw.model_call(out.messages, model_id="scripted", session_id=session_id, agent_id=agent_id) as turn:
            turn.response = model(turn.messages)
        reply = turn.response
        assert reply is not None
        if reply["tool_calls"]:
            out.messages.append(
                {"role": "assistant", "content": reply.get("content") or "", "tool_calls": reply["tool_calls"]}
            )
            for request in reply["tool_calls"]:
                out.messages.append(await _tool(gw, tools, request, ids, out))
            continue
        stop = await gw.stop(last_assistant_message=reply["content"], stop_hook_active=held, **ids)
        if stop:
            held = True
            out.messages.append({"role": "user", "content": stop.reason or "keep going"})
            continue
        out.final = await gw.output(reply["content"], session_id=session_id, agent_id=agent_id)
        break
    await gw.session_end(session_id=session_id, user_id=user_id, agent_id=agent_id)
    return out


async def _tool(
    gw: Gateway, tools: dict[str, Callable[..., Any]], request: dict[str, Any], ids: dict[str, str], out: Transcript
) -> dict[str, Any]:
    """Run one requested tool call through ``gw.tool_call``; the tool message for the model."""
    name = request["name"]
    try:
        async with gw.tool_call(name, request["args"], tool_use_id=request["id"], **ids) as call:
            out.tool_runs.append({"name": name, "args": dict(call.args)})
            call.result = tools[name](**call.args)
    except ToolCallDenied as denied:
        out.denied.append(denied.reason)
        return {"role": "tool", "tool_call_id": request["id"], "content": f"blocked: {denied.reason}"}
    except Exception as exc:  # the tool itself failed; hooks saw it as PostToolUseFailure
        return {"role": "tool", "tool_call_id": request["id"], "content": f"error: {exc}"}
    content = call.result
    if call.context:
        content = f"{content}\n\n" + "\n".join(call.context)
    return {"role": "tool", "tool_call_id": request["id"], "content": content}


# ---------------------------------------------------------------------------- the demo

PEOPLE = [{"name": f"person {i}", "email": f"p{i}@example.com"} for i in range(40)]


def run_sql(sql: str) -> str:
    """A stand-in database: returns the rows as JSON text (it would run ``sql``)."""
    return json.dumps(PEOPLE[:3] if "where" in sql.lower() else PEOPLE)


def demo_model() -> ScriptedModel:
    return ScriptedModel(
        [
            {
                "content": None,
                "tool_calls": [
                    {
                        "id": "call-1",
                        "name": "run_sql",
                        "args": {"sql": "SELECT name, email FROM people WHERE team = 'ops'"},
                    }
                ],
            },
            {
                "content": None,
                "tool_calls": [{"id": "call-2", "name": "run_sql", "args": {"sql": "DROP TABLE people"}}],
            },
            {
                "content": None,
                "tool_calls": [{"id": "call-3", "name": "run_sql", "args": {"sql": "SELECT * FROM people"}}],
            },
            {"content": "The ops team has three people; I was not allowed to drop the table."},
        ]
    )


async def main_async(config: str) -> Transcript:
    async with Gateway.from_file(config) as gw:
        return await run_agent(
            gw,
            demo_model(),
            {"run_sql": run_sql},
            "Who is on the ops team?",
            session_id=f"demo-{uuid.uuid4().hex[:8]}",
            user_id="ana",
            agent_id="researcher",
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=EXAMPLE_CONFIG)
    args = parser.parse_args(argv)
    transcript = asyncio.run(main_async(args.config))
    for message in transcript.messages:
        print(f"[{message['role']}] {message['content'] if message['content'] else message.get('tool_calls')}")
    print(f"[final] {transcript.final}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
