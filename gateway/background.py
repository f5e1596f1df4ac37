"""``async: true`` handlers: started in the background; they cannot decide.

Under ``hookgate serve`` (and the Python API) the handler runs as a task of the running loop. Under
``hookgate run`` the answer must not wait for it, so it runs in a detached process
(``python -m gateway.background``, its own session, stdin = a JSON job) that outlives hookgate.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.config.specs import HandlerSpec
    from gateway.context import RunContext
    from gateway.events import HookEvent


def start_background(spec: HandlerSpec, event: HookEvent, ctx: RunContext) -> None:
    """Start ``spec`` for ``event`` without waiting for it (see module docstring)."""
    if ctx.mode != "run":
        ctx.spawn(_run(spec, event, ctx))
        return
    job = {"spec": asdict(spec), "payload": event.payload, "raw": event.raw, "dialect": event.dialect,
           "host_tool_name": event.host_tool_name, "sources": ctx.config.sources}
    proc = subprocess.Popen([sys.executable, "-m", "gateway.background"], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            close_fds=True)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(job).encode())
    proc.stdin.close()


async def _run(spec: HandlerSpec, event: HookEvent, ctx: RunContext) -> None:
    import asyncio
    import contextlib

    from handlers.base import handler_class

    with contextlib.suppress(Exception):
        async with asyncio.timeout(spec.timeout):
            await handler_class(spec.type)(spec).run(event, ctx)


def _main() -> int:
    import asyncio

    from gateway.config import load_config
    from gateway.config.specs import HandlerSpec
    from gateway.context import RunContext
    from gateway.events import HookEvent

    job: dict[str, Any] = json.loads(sys.stdin.buffer.read())
    spec = HandlerSpec.from_dict(job["spec"])
    event = HookEvent(job["payload"], dialect=job["dialect"], raw=job["raw"], host_tool_name=job["host_tool_name"])
    ctx = RunContext(load_config(job["sources"]), mode="api")

    async def go() -> None:
        try:
            await _run(spec, event, ctx)
        finally:
            await ctx.aclose()

    asyncio.run(go())
    return 0


if __name__ == "__main__":
    os.umask(0o077)
    raise SystemExit(_main())
