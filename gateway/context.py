"""``RunContext``: what handlers share during one dispatch (or, under ``hookgate serve``, for the
server's lifetime): the loaded config, the mode, and lazily created shared resources such as the
pooled HTTP client, warm MCP sessions, LLM clients and the state store.

Resources are created on first use through ``get_resource(name, factory)`` and closed by
``aclose()`` in reverse order of creation.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable, Callable
    from typing import Any, Literal

    from gateway.audit.oneshot import OneShotRecorder
    from gateway.audit.recorder import Recorder
    from gateway.config.specs import RuntimeConfig
    from gateway.store.base import Store

    Mode = Literal["run", "serve", "api"]


class RunContext:
    """Shared state for handlers. ``mode``: ``run`` (one event, then exit), ``serve``, or ``api``."""

    def __init__(self, config: RuntimeConfig, *, mode: Mode = "api") -> None:
        self.config = config
        self.mode: Mode = mode
        self._resources: dict[str, Any] = {}
        self._closers: list[tuple[str, Callable[[], Awaitable[None]]]] = []
        self._background: set[asyncio.Task[Any]] = set()

    @property
    def project_dir(self) -> str:
        return os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()

    def get_resource(
        self, name: str, factory: Callable[[], Any], closer: Callable[[Any], Awaitable[None]] | None = None
    ) -> Any:
        """Return the shared resource ``name``, creating it with ``factory()`` on first use."""
        if name not in self._resources:
            value = factory()
            self._resources[name] = value
            if closer is not None:
                self._closers.append((name, lambda: closer(value)))
        return self._resources[name]

    @property
    def state(self) -> Store:
        """The state store ``config`` names (``gateway.store.open_store``), opened on first use."""
        from gateway.store import RUN_OP_TIMEOUT, open_store

        bound = RUN_OP_TIMEOUT if self.mode == "run" else None  # a hook call never waits on a lock for long
        store: Store = self.get_resource(
            "state", lambda: open_store(self.config, self.mode, op_timeout=bound), _close_store
        )
        return store

    def recorder(self) -> Recorder | OneShotRecorder | None:
        """The audit recorder for the current config, created on first use and replaced when a reload
        changed the config: ``serve``/``api`` contexts get a ``gateway.audit.recorder.Recorder`` that writes
        from a background thread; a ``run`` context the lean ``gateway.audit.oneshot.OneShotRecorder`` when
        the ``audit`` section fits it (store sink only, no spans), else a one-shot ``Recorder``. The one a
        reload replaces is closed in a thread of its own (``serve``/``api``: the caller is an event's
        path) or at once (``run``). None, after one line on stderr or in the log, when it cannot be set
        up (``audit.otel`` without the SDK)."""
        config = self.config
        holder: dict[str, Recorder | OneShotRecorder] | None = self._resources.get("audit")
        current = holder.get("recorder") if holder is not None else None
        if current is not None and current.matches(config.audit, config.config_hash):
            return current  # the request path of `serve`: nothing else to look up
        from gateway.wire import VERSION as __version__
        from gateway.wire import default_state_dir  # not gateway.store's: the hook path opens no store

        holder = self.get_resource("audit", dict, _close_recorder)
        assert holder is not None
        if current is not None:
            if self.mode == "run":
                current.close()
            else:  # serve's request path after a reload: the old one's last batch is written off the loop
                _close_aside(current)
        state_dir = os.path.expanduser(config.settings.get("state_dir") or default_state_dir())

        def full() -> Recorder:
            from gateway.audit.recorder import Recorder
            from gateway.audit.spool import DRAIN_BUSY_SECONDS
            from gateway.store import open_store

            waits = DRAIN_BUSY_SECONDS if self.mode == "run" else None  # the hook path never waits on a lock
            return Recorder(
                config.audit,
                state_dir=state_dir,
                store_factory=lambda: open_store(config, busy_timeout=waits),
                config_hash=config.config_hash,
                version=__version__,
                background=self.mode != "run",
                process=dict(config.settings) if self.mode == "serve" else None,
            )

        recorder: Recorder | OneShotRecorder
        try:
            from gateway.audit.oneshot import OneShotRecorder, fits

            if self.mode == "run" and fits(config.audit or {}):  # the hook path: no sinks, spans or thread
                recorder = OneShotRecorder(
                    config.audit or {},
                    state_dir=state_dir,
                    config_hash=config.config_hash,
                    version=__version__,
                    drain=lambda: _drain(full()),
                )
            else:
                recorder = full()
        except Exception as exc:
            from gateway.audit.recorder import say

            holder.pop("recorder", None)
            say(self.mode != "run", f"audit: cannot record: {exc}")
            return None
        holder["recorder"] = recorder
        return recorder

    def close_recorder(self) -> None:
        """Close the recorder, if one was made (a one-shot process: spans are flushed, the store closed)."""
        holder = self._resources.get("audit")
        recorder = holder.pop("recorder", None) if holder else None
        if recorder is not None:
            recorder.close()

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run ``coro`` in the background (serve/api mode); exceptions are swallowed and logged."""
        import asyncio

        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain(self, timeout: float | None = None) -> None:
        """Wait for background tasks (graceful shutdown)."""
        if self._background:
            import asyncio

            try:  # noqa: SIM105 (contextlib costs ~0.4 ms of imports on the hook path)
                await asyncio.wait_for(asyncio.gather(*self._background, return_exceptions=True), timeout)
            except TimeoutError:
                pass

    async def aclose(self) -> None:
        """Close every resource created through ``get_resource``. A ``run`` context keeps its state
        store open (one sync connection, bound to no event loop): the loop that ``hookgate run`` starts
        for one event's async handlers closes the context when it ends, and the Stop-loop guard still
        settles on the store afterwards; the process's exit closes it."""
        keep = ("state",) if self.mode == "run" else ()
        for name, closer in reversed(self._closers):
            if name in keep:
                continue
            try:  # noqa: SIM105 (as above)
                await closer()
            except Exception:  # one failing closer must not keep the others open
                pass
        self._closers = [(name, closer) for name, closer in self._closers if name in keep]
        self._resources = {name: value for name, value in self._resources.items() if name in keep}


async def _close_store(store: Store) -> None:
    await store.aclose()


def _drain(recorder: Recorder) -> None:
    """Move the spool into the store (and apply retention) with a full recorder, then close it."""
    try:
        recorder.drain()
    finally:
        recorder.close()


def _close_aside(recorder: Recorder | OneShotRecorder) -> None:
    """Close ``recorder`` (write what it has queued, stop its writer process: up to seconds under load)
    in a thread of its own, so the caller (``hookgate serve``'s event loop, on the first event after a
    reload) does not wait for it. Not a daemon thread: the interpreter waits for it at exit, so the
    records are written."""
    import threading

    threading.Thread(target=recorder.close, name="hookgate-audit-close", daemon=False).start()


async def _close_recorder(holder: dict[str, Recorder | OneShotRecorder]) -> None:
    import asyncio

    recorder = holder.pop("recorder", None)
    if recorder is not None:
        await asyncio.to_thread(recorder.close)
