"""``python -m gateway.background``: the detached process that runs one ``async: true`` handler for
``hookgate run`` (whose answer must not wait for it; it outlives hookgate in its own session).

The job on stdin (written by ``gateway.dispatcher``): ``{"spec": HandlerSpec fields, "payload", "raw",
"dialect", "host_tool_name", "sources": the config files}``. The handler runs through
``Dispatcher.attempt`` like any other (its deadline, failures as values); its result is unused, since a
background handler cannot decide. Under ``hookgate serve`` and the Python API an ``async`` handler is a
task of the running loop instead (``Dispatcher.attempt`` spawns it).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def _main() -> int:
    import asyncio

    from gateway.config import load_config
    from gateway.config.specs import HandlerSpec
    from gateway.context import RunContext
    from gateway.dispatcher import ASYNCIO, Dispatcher, Selected
    from gateway.events import HookEvent

    job: dict[str, Any] = json.loads(sys.stdin.buffer.read())
    spec = HandlerSpec.from_dict(job["spec"])
    event = HookEvent(job["payload"], dialect=job["dialect"], raw=job["raw"], host_tool_name=job["host_tool_name"])
    config = load_config(job["sources"])
    ctx = RunContext(config, mode="api")

    async def go() -> None:
        try:
            await Dispatcher(config).attempt(
                event, Selected(spec=spec, order=0, group=0), ctx, ASYNCIO.call, in_background=True
            )
        finally:
            await ctx.aclose()

    asyncio.run(go())
    return 0


if __name__ == "__main__":
    os.umask(0o077)
    raise SystemExit(_main())
