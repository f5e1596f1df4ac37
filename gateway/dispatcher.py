"""The one path every event takes: select the handlers that fit, run them, merge.

``Dispatcher.dispatch`` is the only way from a ``HookEvent`` to a ``Decision`` (``hookgate run``,
``serve``, ``explain``, ``demo`` and the Python API all call it); ``Dispatcher.decide`` drives it from
synchronous code. Each step adds one concern::

    dispatch   select -> Stop-loop guard (gateway.stopguard) -> executor.run -> merge -> record (gateway.audit)
    select     hooks[event] in config order: a group fits when its matcher accepts the event's matcher
               field (Claude Code's algorithm, or Kiro's / Gemini's for groups from those configs); a
               handler fits when its ``if`` rule accepts the event; identical handlers run once
    run        one job per handler; a ``sequential`` group, and the event's chained handlers (class hooks,
               built-ins), are one job each, run through a ``Chain`` (in order, passing rewrites along,
               stopping at a deny, block or fail-closed failure); the executor awaits the jobs
    attempt    one handler -> one ``HandlerResult``: its load-time problem, background start, the
               verdict cache, timing, and any failure as a value (never an exception)

The executor is swapped, not the path: ``InlineExecutor`` when no event loop is running and every
selected handler answers synchronously in-process (``Handler.can_run_sync``): no asyncio is imported
(the default policy under ``hookgate run``); ``AsyncioExecutor`` otherwise: handlers run concurrently,
each under its own deadline, and with no loop running it starts one for this event (closing what was
opened on it before it ends).
"""

from __future__ import annotations

import json
import sys
import time
from abc import ABC, abstractmethod

from gateway.decision import Decision, HandlerResult, Verdict, merge
from gateway.errors import is_cancellation
from gateway.events import STOP_EVENTS
from gateway.policy_files import add as add_policy_files
from gateway.record_step import submit_record
from gateway.records import Record
from gateway.selection import NOTHING, PLANS, Plan, Prefilter, group_matches, if_matches

TYPE_CHECKING = False  # importing typing costs a hook process ~2 ms
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Hashable, Iterable
    from typing import Any, TypeVar

    from gateway.config.specs import HandlerSpec, RuntimeConfig
    from gateway.context import RunContext
    from gateway.events import HookEvent
    from gateway.stopguard import StopGuard
    from handlers.base import Handler, Outcome

    T = TypeVar("T")
    Call = Callable[[Handler, HookEvent, RunContext, float], Awaitable[Outcome]]
    """How an executor calls one handler: ``call(handler, event, ctx, timeout_s)`` -> its answer."""


class Selected(Record):
    """A handler chosen for an event, with its merge ``order`` and group."""

    __slots__ = ("spec", "order", "group")  # noqa: RUF023  (in field order)

    def __init__(self, spec: HandlerSpec, order: int, group: int) -> None:
        self.spec = spec
        self.order = order
        self.group = group


class Trace(Record):
    """Why each group and handler did or did not fit (``hookgate explain``)."""

    __slots__ = ("lines",)

    def __init__(self, lines: list[str] | None = None) -> None:
        self.lines: list[str] = [] if lines is None else lines


class Dispatcher:
    """Selects, runs and merges handlers for events, against one ``RuntimeConfig``."""

    def __init__(self, config: RuntimeConfig) -> None:
        self.config = config
        add_policy_files(config.sources)  # the guards protect them, whatever they are called
        self._handlers: dict[int, Handler] = {}
        self._dedup_keys: dict[int, Hashable] = {}
        self._prefilters: dict[str, Prefilter] = {}
        self._plans: dict[tuple[Any, ...], Plan] = {}

    def forget(self, name: str) -> None:
        """Drop what was remembered about event ``name``'s groups (its selections, its if-rule table):
        call it after changing ``config.hooks[name]`` (``Gateway.register_hook`` does)."""
        self._prefilters.pop(name, None)
        for key in [key for key in self._plans if key[0] == name]:
            self._plans.pop(key, None)

    def _prefilter(self, name: str) -> Prefilter:
        """The ``if``-rule table of event ``name`` (``gateway.selection``), built on its first event."""
        prefilter = self._prefilters.get(name)
        if prefilter is None:
            prefilter = self._prefilters[name] = Prefilter(self.config.hooks.get(name, []))
        return prefilter

    def select(self, event: HookEvent, trace: Trace | None = None) -> list[Selected]:
        """The handlers that fit ``event``, in merge order (priority, then config order), deduplicated.

        Without a ``trace``, which groups fit is remembered per key (the event's name, matcher
        value, tool names, ``agent_id`` and dialect: all a matcher reads), and where none of those groups'
        handlers has an ``if`` rule, the whole selection is: an event like one seen before costs a
        dictionary lookup (``_plan``)."""
        if trace is None:
            plan = self._plan(event)
            if plan.static is not None:
                return [Selected(spec, order, group) for spec, order, group in plan.static]
            return self._choose(event, plan, None)
        return self._choose(event, None, trace)

    def _plan(self, event: HookEvent) -> Plan:
        """The remembered fit of ``event``'s groups (see ``select``), computed on the first such event."""
        payload = event.payload
        key = (event.name, event.matcher_value(), event.host_tool_name, payload.get("agent_id"), event.dialect)
        plan = self._plans.get(key)
        if plan is None:
            groups = self.config.hooks.get(event.name, [])
            fits = tuple(gi for gi, group in enumerate(groups) if group_matches(group, event, False)[0])
            plan = Plan(fits, None)
            if not any(spec.if_rule is not None for gi in fits for spec in groups[gi].handlers):
                plan.static = tuple((s.spec, s.order, s.group) for s in self._choose(event, plan, None))
            if len(self._plans) < PLANS:
                self._plans[key] = plan
        return plan

    def _choose(self, event: HookEvent, plan: Plan | None, trace: Trace | None) -> list[Selected]:
        """``select``'s walk: the groups that fit by ``plan`` (None: test each group's matcher) and are not
        pruned, their handlers' ``if`` rules, dedup, order."""
        chosen: list[Selected] = []
        seen: set[Hashable] = set()
        groups = self.config.hooks.get(event.name, [])
        prefilter = self._prefilter(event.name)
        pruned = prefilter.pruned(event) if trace is None else NOTHING  # explain walks everything
        walk: Iterable[int]
        if plan is None:
            walk = range(len(groups)) if pruned.survivors is None else pruned.survivors
        elif pruned.survivors is None:
            walk = plan.groups
        else:  # (the survivors are the few left by the if-rule table: walk those)
            walk = [gi for gi in pruned.survivors if gi in plan.fitting()]
        for gi in walk:
            group = groups[gi]
            index = prefilter.offsets[gi]  # handlers before this group, in config order
            if plan is None:
                ok, why = group_matches(group, event, trace is not None)
                if trace is not None:
                    trace.lines.append(f"group {group.where}: {'FITS' if ok else 'skipped'}: {why}")
                if not ok:
                    continue
            for spec in group.handlers:
                index += 1
                if id(spec) in pruned.handlers:
                    continue
                fits, why = if_matches(spec, event, trace is not None)
                key = self._dedup_key(spec) if fits else None
                if fits and key in seen:
                    fits, why = False, "identical to a handler already selected (runs once)"
                if fits and spec.problem:
                    why = f"{why + '; ' if why else ''}but it cannot run ({spec.problem}): fails closed"
                if trace is not None:
                    trace.lines.append(
                        f"  handler {spec.id} ({self.handler(spec).describe()}): "
                        f"{'runs' if fits else 'skipped'}{': ' + why if why else ''}"
                    )
                if fits:
                    seen.add(key)
                    chosen.append(Selected(spec=spec, order=index, group=gi))
        chosen.sort(key=lambda s: (-s.spec.priority, s.order))
        for position, selected in enumerate(chosen):
            selected.order = position
        return chosen

    def _dedup_key(self, spec: HandlerSpec) -> Hashable:
        """``Handler.dedup_key`` of ``spec`` with its ``async``, ``failClosed`` and timeout, computed once (it depends
        on the spec alone)."""
        key = self._dedup_keys.get(id(spec))
        if key is None:  # a background, fail-open or shorter-lived copy never stands in for another
            key = (self.handler(spec).dedup_key(), bool(spec.async_), bool(spec.fail_closed), spec.timeout)
            self._dedup_keys[id(spec)] = key
        return key

    def handler(self, spec: HandlerSpec) -> Handler:
        """The (cached) handler instance for ``spec``."""
        handler = self._handlers.get(id(spec))
        if handler is None:
            from handlers.base import handler_class

            handler = handler_class(spec.type)(spec)
            self._handlers[id(spec)] = handler
        return handler

    async def dispatch(
        self, event: HookEvent, ctx: RunContext, trace: Trace | None = None, *, record: bool = True
    ) -> Decision:
        """Run every fitting handler for ``event``, merge their results into one ``Decision`` and, with
        ``record`` (``explain`` and ``demo`` pass False), hand it to the audit record step.

        Handler failures are inside ``Decision.results``; nothing a handler does raises here."""
        started_ns = time.time_ns()
        selected = self.select(event, trace)
        guard = self._stop_guard(event, selected, ctx)
        skipped: list[HandlerResult] = []
        if guard is not None:
            selected, skipped = await guard.skip(selected)
        try:
            results = await self.executor_for(selected).run(self, event, selected, ctx) if selected else []
            if guard is not None:
                skipped += await guard.record(results)
        finally:
            if guard is not None:
                await guard.done()  # its reserved checks are over, also when they were cancelled
        decision = merge(event.name, results + skipped, tool_input=event.tool_input, blocks=event.spec.blocks)
        if decision.updated_input is not None:
            from gateway.recheck import recheck, wanted  # (a rewrite: what runs is judged too)

            if wanted(event, decision):
                checked = await recheck(self, event, decision, selected, results, ctx)
                if checked:
                    everything = results + skipped + checked
                    decision = merge(event.name, everything, tool_input=event.tool_input, blocks=event.spec.blocks)
        if record:
            self.record(event, decision, ctx, started_ns)
        return decision

    def record(self, event: HookEvent, decision: Decision, ctx: RunContext, started_ns: int | None = None) -> None:
        """The record step, after merge and before render: hand ``decision`` (the one the host gets) to
        the audit recorder (``RunContext.recorder``) when ``audit.record`` asks for it (``handled``, the
        default: a handler ran; ``all``; ``off``). Nothing of ``gateway.audit`` is imported when the
        event is not recorded. Never raises; under ``hookgate run`` bounded in time (``gateway.record_step``)."""
        mode = self.config.audit.get("record", "handled")
        if mode == "off" or (mode == "handled" and not decision.results):
            return
        recorder = ctx.recorder()
        if recorder is not None:  # serve and the Python API only queue it here: no bound needed
            submit_record(recorder, event, decision, started_ns, bounded=ctx.mode == "run")

    def decide(self, event: HookEvent, ctx: RunContext, trace: Trace | None = None, *, record: bool = True) -> Decision:
        """``dispatch`` from synchronous code with no event loop running (``hookgate run``, ``explain``,
        ``demo``): the same coroutine, driven here; the asyncio executor starts a loop if it needs one."""
        return run_inline(self.dispatch(event, ctx, trace, record=record))

    def executor_for(self, selected: list[Selected]) -> Executor:
        """``InlineExecutor`` when no loop is running and every handler answers synchronously (or cannot
        run at all), else ``AsyncioExecutor``."""
        if not loop_running() and all(
            s.spec.problem is not None or self.handler(s.spec).can_run_sync() for s in selected
        ):
            return INLINE
        return ASYNCIO

    def _stop_guard(self, event: HookEvent, selected: list[Selected], ctx: RunContext) -> StopGuard | None:
        if event.name not in STOP_EVENTS or not selected:
            return None
        from gateway.stopguard import StopGuard

        return StopGuard.for_event(event, ctx, selected, lambda s: self.handler(s.spec).judgment)

    async def attempt(
        self, event: HookEvent, item: Selected, ctx: RunContext, call: Call, *, in_background: bool = False
    ) -> HandlerResult:
        """Run one handler through ``call`` (the executor's way to call it): its ``HandlerResult``, with
        status ok, cached, skipped (``async``: started in the background), error or timeout.

        An ``async`` handler is started in the background and skipped here: under ``hookgate run`` in a
        detached process (``gateway.background``, which comes back here with ``in_background``), else
        as a task of the running loop; either way through this same function, its outcome unused."""
        spec = item.spec
        handler = self.handler(spec)
        result = HandlerResult(
            id=spec.id, type=spec.type, order=item.order, fail_closed=spec.fail_closed, judgment=handler.judgment
        )
        if _unrunnable(result, spec):
            return result
        if spec.async_ and not in_background:
            if ctx.mode == "run":
                _detach(spec, event, ctx)
            else:
                ctx.spawn(self.attempt(event, item, ctx, ASYNCIO.call, in_background=True))
            result.status, result.message = "skipped", "started in the background (async: cannot decide)"
            return result
        cache_key = None
        if spec.cache_ttl:
            from gateway.verdict_cache import get as cache_get  # (cacheTtl handlers only)
            from gateway.verdict_cache import key as cache_key_of

            cache_key = cache_key_of(handler.dedup_key(), event)
            cached = await cache_get(ctx, cache_key)
            if cached is not None:
                result.status, result.verdict = "cached", Verdict(**cached)
                return result
        started = time.perf_counter()
        tuning = None  # the default policy's tuning is this config's own (gateway.config.guards.scope)
        if self.config.guards:  # (without a section the guard's defaults apply: nothing to set)
            from gateway.config.guards import scope

            tuning = scope(self.config.guards)
        try:
            _store(result, await call(handler, event, ctx, spec.timeout))
        except TimeoutError:
            result.status, result.message = "timeout", f"no answer within {spec.timeout:g} s"
        except BaseException as exc:  # any failure is a value, never an exception to the agent (nor an exit)
            if is_cancellation(exc):  # the dispatch itself cancelled; SystemExit & co from a handler are failures
                raise
            _fail(result, exc, tuple(self.config.audit.get("redact") or ()))
        finally:
            if tuning is not None:
                from gateway.config.guards import unscope

                unscope(tuning)
        result.duration_ms = (time.perf_counter() - started) * 1000
        if cache_key is not None and result.status == "ok" and result.verdict is not None:
            from gateway.verdict_cache import put as cache_put

            redact = tuple(self.config.audit.get("redact") or ())
            await cache_put(ctx, cache_key, result.verdict, spec.cache_ttl or 0, redact)
        return result

    async def attempt_sequence(
        self, event: HookEvent, items: list[Selected], ctx: RunContext, call: Call
    ) -> list[HandlerResult]:
        """Run ``items`` one after another (a ``sequential`` group, or the event's chained handlers),
        through a ``Chain``: each sees the rewrites before it; a deny, block or fail-closed failure skips
        the rest."""
        results: list[HandlerResult] = []
        chain = Chain(event)
        for item in items:
            if chain.stopped_at is not None:
                results.append(
                    chain.skip(
                        HandlerResult(
                            id=item.spec.id,
                            type=item.spec.type,
                            order=item.order,
                            fail_closed=item.spec.fail_closed,
                            judgment=self.handler(item.spec).judgment,
                        )
                    )
                )
                continue
            result = await self.attempt(chain.event, item, ctx, call)
            results.append(result)
            chain.step(result, item.spec)
        return results


def _detach(spec: HandlerSpec, event: HookEvent, ctx: RunContext) -> None:
    """Start ``python -m gateway.background`` (its own session, outliving this process) with the job on
    its stdin: the spec, the event and the config files to load."""
    import subprocess

    job = {
        "spec": spec.to_dict(),
        "payload": event.payload,
        "raw": event.raw,
        "dialect": event.dialect,
        "host_tool_name": event.host_tool_name,
        "sources": ctx.config.sources,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.background"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(job).encode())
    proc.stdin.close()


def internal_failure(config: RuntimeConfig, event: HookEvent, message: str) -> Decision | None:
    """When hookgate itself fails (a bug while dispatching): a deny/block if any handler for this event
    is ``failClosed`` (the gate must not open because its keeper crashed), else None (the frontend
    reports the error without blocking: exit 1, HTTP 500)."""
    if not any(h.fail_closed for g in config.hooks.get(event.name, []) for h in g.handlers):
        return None
    result = HandlerResult(id="hookgate", type="internal", status="error", message=message, fail_closed=True)
    return merge(event.name, [result], blocks=event.spec.blocks)


class Executor(ABC):
    """How the selected handlers' jobs are run: ``call`` one handler, ``gather`` the jobs (one per
    handler, one per ``sequential`` group) into their results in job order."""

    async def run(
        self, dispatcher: Dispatcher, event: HookEvent, selected: list[Selected], ctx: RunContext
    ) -> list[HandlerResult]:
        """The results of ``selected`` (in job order; ``merge`` sorts them by ``order``)."""
        groups = dispatcher.config.hooks[event.name]
        jobs: list[Coroutine[Any, Any, HandlerResult | list[HandlerResult]]] = []
        sequences: dict[int, list[Selected]] = {}
        for item in selected:
            if groups[item.group].sequential:
                sequences.setdefault(item.group, []).append(item)
            elif dispatcher.handler(item.spec).chained():
                sequences.setdefault(CHAIN, []).append(item)  # class hooks and built-ins: one chain per event
            else:
                jobs.append(dispatcher.attempt(event, item, ctx, self.call))
        jobs += [dispatcher.attempt_sequence(event, items, ctx, self.call) for items in sequences.values()]
        results: list[HandlerResult] = []
        for outcome in await self.gather(jobs):
            results.extend(outcome if isinstance(outcome, list) else [outcome])
        return results

    @abstractmethod
    async def call(self, handler: Handler, event: HookEvent, ctx: RunContext, timeout: float) -> Outcome:
        """Call ``handler`` for ``event`` within ``timeout`` seconds (TimeoutError past it); its answer."""

    @abstractmethod
    async def gather(self, jobs: list[Coroutine[Any, Any, T]]) -> list[T]:
        """Await every job; their values in job order."""


class InlineExecutor(Executor):
    """Handlers answer synchronously in this thread, one after another (no event loop; a handler's own
    ``timeout`` cannot interrupt a synchronous call)."""

    async def call(self, handler: Handler, event: HookEvent, ctx: RunContext, timeout: float) -> Outcome:
        return handler.run_sync(event, ctx)

    async def gather(self, jobs: list[Coroutine[Any, Any, T]]) -> list[T]:
        return [await job for job in jobs]


class AsyncioExecutor(Executor):
    """Handlers run concurrently on the running loop, each under ``asyncio.timeout`` (a plain in-process
    function, which cannot be interrupted, answers without one: ``Handler.start``). With no loop
    running (``hookgate run``), ``run`` starts one for this event and closes the context's resources
    before it ends (they belong to that loop), except the state store (a sync connection in ``run``)."""

    async def run(
        self, dispatcher: Dispatcher, event: HookEvent, selected: list[Selected], ctx: RunContext
    ) -> list[HandlerResult]:
        if loop_running():
            return await super().run(dispatcher, event, selected, ctx)
        import asyncio

        async def on_own_loop() -> list[HandlerResult]:
            try:
                return await super(AsyncioExecutor, self).run(dispatcher, event, selected, ctx)
            finally:
                await ctx.aclose()  # a "run" context keeps its state store (RunContext.aclose)

        return asyncio.run(on_own_loop())

    async def call(self, handler: Handler, event: HookEvent, ctx: RunContext, timeout: float) -> Outcome:
        started = handler.start(event, ctx)  # a plain function answers here, and needs no deadline
        if not hasattr(started, "__await__"):  # (nothing could have interrupted it)
            return started
        import asyncio

        pending: Awaitable[Outcome] = started  # type: ignore[assignment]
        async with asyncio.timeout(timeout):
            return await pending

    async def gather(self, jobs: list[Coroutine[Any, Any, T]]) -> list[T]:
        if len(jobs) == 1:  # the common case: no extra task to schedule
            return [await jobs[0]]
        import asyncio

        return list(await asyncio.gather(*jobs))


INLINE = InlineExecutor()
ASYNCIO = AsyncioExecutor()


def loop_running() -> bool:
    """True when this thread runs an asyncio event loop (asyncio is not imported to find out)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_inline(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion in this thread without an event loop. It must not wait on anything
    (``Dispatcher.dispatch`` does not: the asyncio executor runs its own loop when none is running).
    Raises RuntimeError if it does."""
    try:
        coro.send(None)
    except StopIteration as done:
        value: T = done.value
        return value
    coro.close()
    raise RuntimeError("dispatch waited on an event loop that is not running")


CHAIN = -1
"""The job key of the event's chained handlers in ``Executor.run`` (group indexes are >= 0)."""


class Chain:
    """Handlers run one after another: each sees the event as the ones before rewrote it (``tool_input``
    merged with their ``updated_input``; ``tool_response`` replaced by their ``updated_output``), and the
    first deny, block or fail-closed failure stops it (the rest are ``skipped``)."""

    __slots__ = ("event", "stopped_at")

    def __init__(self, event: HookEvent) -> None:
        self.event = event
        self.stopped_at: str | None = None

    def step(self, result: HandlerResult, spec: HandlerSpec) -> None:
        verdict = result.verdict
        if (result.failed and result.fail_closed) or (
            verdict is not None and (verdict.permission == "deny" or verdict.block)
        ):
            self.stopped_at = spec.id
            return
        if verdict is None or result.failed:
            return
        if verdict.updated_input is not None and self.event.tool_input is not None:
            self.event = self.event.with_fields(tool_input={**self.event.tool_input, **verdict.updated_input})
        if verdict.updated_output is not None and "tool_response" in self.event.payload:
            self.event = self.event.with_fields(tool_response=verdict.updated_output)

    def skip(self, result: HandlerResult) -> HandlerResult:
        result.status, result.message = "skipped", f"stopped at {self.stopped_at!r} (runs one after another)"
        return result


def _unrunnable(result: HandlerResult, spec: HandlerSpec) -> bool:
    """A handler whose load-time check failed (``spec.problem``) fails, closed, without running: its
    event is denied or blocked rather than silently unchecked (LLM checks still only add a message)."""
    if spec.problem is None:
        return False
    result.status, result.message, result.fail_closed = "error", f"cannot run: {spec.problem}", True
    return True


def _store(result: HandlerResult, answer: Verdict | tuple[Verdict, dict[str, Any]]) -> None:
    """Put a handler's answer (a Verdict, or ``(Verdict, meta)``) into its result."""
    if isinstance(answer, tuple):
        result.verdict, meta = answer
        result.meta.update(meta)
    else:
        result.verdict = answer
    if result.verdict is not None:
        result.side_effects = list(result.verdict.side_effects)


def _fail(result: HandlerResult, exc: BaseException, redact: tuple[str, ...] = ()) -> None:
    """``result`` failed with ``exc``: status error, the first line of its message with secrets redacted
    (``redact``: the config's ``audit.redact`` patterns, beside the defaults): a hook's stderr or an
    exception's text can hold a password, and this message reaches the model in a ``failClosed`` deny."""
    text = str(exc) if isinstance(exc, Exception) else f"{type(exc).__name__}: {exc}".removesuffix(": ")
    line = text.splitlines()[0] if text else type(exc).__name__
    if line:
        from gateway.audit.redactors import redactor_for  # (a failure only)

        line = redactor_for(redact).text(line)
    result.status, result.message = "error", line
    result.meta.update(getattr(exc, "meta", {}) or {})
    from gateway.errors import StoreError

    if isinstance(exc, StoreError) and not result.fail_closed:
        # a decision that needs state and could not have it: without failClosed the call goes on, and
        # says so (``merge`` keeps this message for a failed handler that is not failClosed)
        result.meta["store_error"] = True
        result.verdict = Verdict(
            system_message=f"hookgate: check {result.id!r} let this through without its state: {result.message}"
        )
