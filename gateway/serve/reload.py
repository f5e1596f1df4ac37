"""Config generations of ``hookgate serve``: the gateway each loaded config runs on, and reloading.

A reload compiles the config files off the event loop and swaps the new generation in atomically; a bad
config is rejected (one log line) and the old one keeps serving. So is a config that holds nothing (an
empty, ``null`` or comment-only file, only ``hooks:``, no recognised key: ``gateway.config.compiler``
makes those errors), so a file caught half-written never drops the policy; zero handlers take an
explicit ``hooks: {}``. The file watcher also waits until the files stopped changing (``settled``). It
watches the ``--config`` files and every other file the current config was compiled from
(``RuntimeConfig.depends``: the ``mcpConfig`` files), so an edited ``.mcp.json`` is served too.
Events already running finish on the generation they started on. When only ``hooks`` changed, warm
resources (the ``RunContext``) carry over; otherwise the old generation is closed once its last event
finishes.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gateway.api import Gateway
from gateway.config import load_config
from gateway.errors import ConfigError

if TYPE_CHECKING:
    from gateway.config.specs import RuntimeConfig
    from gateway.decision import Decision
    from gateway.events import HookEvent
    from gateway.serve.metrics import Metrics

log = logging.getLogger("hookgate.server")
SETTLE_SECONDS = 1.0
"""The file watcher reloads a changed config only after it has stayed unchanged this long (seconds)."""


@dataclass
class Generation:
    """One loaded config's gateway, with the number of events still running on it."""

    gateway: Gateway
    inflight: int = 0
    retired: bool = False


Stamp = tuple[tuple[str, int, int, int], ...]
"""Per file: (path, mtime_ns, size, inode)."""


def file_stamp(paths: list[str]) -> Stamp:
    """What identifies the config files' content on disk: (path, mtime_ns, size, inode), -1 when missing."""
    out = []
    for path in paths:
        try:
            st = os.stat(path)
            out.append((path, st.st_mtime_ns, st.st_size, st.st_ino))
        except OSError:
            out.append((path, -1, -1, -1))
    return tuple(out)


def one_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (its type name when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class Generations:
    """The current generation of ``paths`` and the reload machinery. Raises ConfigError when the first
    load fails. ``count``: successful reloads so far."""

    def __init__(self, paths: list[str], metrics: Metrics) -> None:
        self.paths = list(paths)
        self.metrics = metrics
        before = file_stamp(self.paths)  # taken before the files are read: a change meanwhile is seen later
        config = load_config(self.paths)
        self.current = Generation(Gateway(config, mode="serve"))
        self.stamp = self._restamp(before, config)
        self.count = 0
        self._retired: set[asyncio.Task[None]] = set()
        self._lock: asyncio.Lock | None = None

    def watched(self, config: RuntimeConfig | None = None) -> list[str]:
        """The files a change to which reloads: the config files, then the other files ``config`` (default:
        the current one) was compiled from (its ``mcpConfig`` files)."""
        config = config or self.current.gateway.config
        return list(dict.fromkeys([*self.paths, *config.depends]))

    def _restamp(self, before: Stamp, config: RuntimeConfig) -> Stamp:
        """The stamp of ``config``'s watched files: as in ``before`` (taken before it was compiled) where
        that has them, else as now (a file this config reads for the first time)."""
        known = {entry[0]: entry for entry in before}
        return tuple(known.get(path) or file_stamp([path])[0] for path in self.watched(config))

    def changed_on_disk(self) -> bool:
        return file_stamp(self.watched()) != self.stamp

    def changed_files(self) -> list[str]:
        """The watched files that changed since the current config was loaded (or a reload was rejected)."""
        old = {entry[0]: entry for entry in self.stamp}
        return [entry[0] for entry in file_stamp(self.watched()) if old.get(entry[0]) != entry]

    async def settled(self, quiet: float = SETTLE_SECONDS) -> None:
        """Return once the config files have not changed for ``quiet`` seconds (an editor that writes a
        file in several steps is done), so the watcher never reads a half-written file."""
        loop = asyncio.get_running_loop()
        last, since = file_stamp(self.watched()), loop.time()
        while loop.time() - since < quiet:
            await asyncio.sleep(min(0.1, quiet / 5))
            now = file_stamp(self.watched())
            if now != last:
                last, since = now, loop.time()

    async def dispatch(self, event: HookEvent) -> Decision:
        """Dispatch on the current generation (which stays alive until this event finishes)."""
        generation = self.current
        generation.inflight += 1
        try:
            return await generation.gateway.dispatch(event)
        finally:
            generation.inflight -= 1
            if generation.retired and generation.inflight == 0:
                self._close(generation)

    async def reload(self, why: str) -> bool:
        """Compile the config files again and swap them in; False (old config kept) when invalid."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            stamp = file_stamp(self.watched())
            try:
                config = await asyncio.to_thread(load_config, self.paths, use_cache=False)
            except ConfigError as exc:
                more = f" (and {len(exc.issues) - 1} more)" if len(exc.issues) > 1 else ""
                log.error(
                    "config reload (%s) rejected: %s%s; still serving the previous config", why, exc.issues[0], more
                )
                self.stamp = stamp
                self.metrics.reloads.labels("rejected").inc()
                return False
            except Exception as exc:  # never let a reload take the server down
                log.error(
                    "config reload (%s) failed: %s: %s; still serving the previous config",
                    why,
                    type(exc).__name__,
                    one_line(exc),
                )
                self.stamp = stamp
                self.metrics.reloads.labels("rejected").inc()
                return False
            old = self.current
            new = Gateway(config, mode="serve")
            old_config = old.gateway.config
            keep_resources = (config.mcp_servers, config.llm, config.settings) == (
                old_config.mcp_servers,
                old_config.llm,
                old_config.settings,
            )
            if keep_resources:
                new.context = old.gateway.context
                new.context.config = config
            self.current = Generation(new)
            self.stamp = self._restamp(stamp, config)
            self.count += 1
            self.metrics.reloads.labels("ok").inc()
            if not keep_resources:
                old.retired = True
                if old.inflight == 0:
                    self._close(old)
            log.info(
                "config reloaded (%s): %d handler(s) from %s", why, config.handler_count(), ", ".join(config.sources)
            )
            modules = config.python_modules()
            if modules:
                log.info(
                    "python handler modules are not re-imported on reload (%s): restart to run edited code",
                    ", ".join(modules[:5]) + (", ..." if len(modules) > 5 else ""),
                )
            for warning in config.warnings:
                log.warning("config: %s", warning)
            return True

    def _close(self, generation: Generation) -> None:
        task = asyncio.ensure_future(generation.gateway.aclose())
        self._retired.add(task)
        task.add_done_callback(self._retired.discard)

    async def aclose(self) -> None:
        """Drain background handlers and close every generation's resources."""
        await self.current.gateway.aclose()
        if self._retired:
            await asyncio.gather(*self._retired, return_exceptions=True)
