"""The ``command`` handler: a subprocess that gets the event JSON on stdin.

Semantics follow Claude Code's hooks reference (§3.2, §5.1):

- shell form runs ``sh -c COMMAND`` (``bash -c`` for Kiro configs or ``shell: bash``); exec form
  (``args`` present) runs ``COMMAND ARGS...`` with no shell. ``${CLAUDE_PROJECT_DIR}``,
  ``${CLAUDE_PLUGIN_ROOT}``, ``${CLAUDE_PLUGIN_DATA}``, ``${HOOKGATE_CONFIG_DIR}`` (the config file's
  folder) and ``${HOOKGATE_PYTHON}`` (this interpreter) are exported; exec form substitutes them as
  plain strings, shell form lets the shell expand them (never pasted into the script text, so a value
  such as a ``cwd`` containing ``$(...)`` cannot inject code).
- cwd is the event's ``cwd`` (the current directory when that does not exist); the environment is
  hookgate's minus ``OTEL_*``, plus ``CLAUDE_PROJECT_DIR`` and ``CLAUDE_CODE_SESSION_ID``.
- exit 0: stdout is JSON only if it starts with ``{``, else plain text (context on SessionStart /
  UserPromptSubmit / UserPromptExpansion). exit 2: blocks (deny on PreToolUse) with the JSON's reason
  or stderr, even if the JSON says allow; on events that cannot block, stderr becomes a system
  message. Other codes: a valid JSON object on stdout decides; else a non-blocking error.
- the process runs in its own process group; at the deadline the whole group (grandchildren
  included) is killed, also when the hook never reads its stdin. At most ``MAX_STDOUT`` bytes of
  stdout (16 MiB) and ``MAX_STDERR`` of stderr (1 MiB) are kept, the rest is read and dropped; a
  stdout over ``MAX_STDOUT`` is a handler failure naming the cap (``failClosed`` denies), never a cut
  JSON read as "not JSON" (exit 2 still blocks). Text outputs are capped at 10,000 characters with a
  marker.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import signal
from typing import TYPE_CHECKING, Any, ClassVar

from gateway.answers import first_line, parse_text, trim, truncate
from gateway.decision import Verdict
from gateway.errors import HandlerError
from gateway.events import dump_bytes
from gateway.plain import utf8_text
from handlers.base import Handler
from handlers.placeholders import PLACEHOLDERS, infer_project_dir
from handlers.placeholders import values as placeholder_values

if TYPE_CHECKING:
    from gateway.config.specs import HandlerSpec
    from gateway.context import RunContext
    from gateway.events import HookEvent

MAX_STDOUT = 16 * 1024 * 1024
"""Bytes of stdout kept from a hook; the rest is read and dropped, and the answer is a failure."""
MAX_STDERR = 1024 * 1024
"""Bytes of stderr kept from a hook (only its first line or a reason is used); the rest is dropped."""
PIPE_GRACE = 2.0
"""Seconds to wait for stdout/stderr to close after the hook exits (a grandchild may hold them)."""
SHELL_WORDS = frozenset(
    {
        "!",
        "[",
        "[[",
        "{",
        "(",
        "if",
        "for",
        "while",
        "until",
        "case",
        "exec",
        "eval",
        "cd",
        "echo",
        "printf",
        "true",
        "false",
        "test",
        "export",
        "set",
        "source",
        ".",
        "read",
        "exit",
        "return",
        ":",
        "command",
        "builtin",
        "time",
        "env",
        "nohup",
        "nice",
        "timeout",
        "sudo",
        "cat",
        "trap",
        "ulimit",
        "umask",
        "wait",
    }
)
INTERPRETERS = frozenset(
    {
        "python",
        "python3",
        "bash",
        "sh",
        "zsh",
        "dash",
        "node",
        "ruby",
        "perl",
        "php",
        "deno",
        "bun",
        "tsx",
        "ts-node",
        "pwsh",
        "fish",
        "lua",
        "Rscript",
    }
)


def substitute(text: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        text = text.replace("${" + name + "}", value)
    return text


def _depth() -> int:
    try:
        return int(os.environ.get("HOOKGATE_DEPTH", "0"))
    except ValueError:
        return 0


class CommandHandler(Handler):
    """Runs a command hook as a subprocess (see module docstring)."""

    type: ClassVar[str] = "command"

    @classmethod
    def options_model(cls) -> Any:
        return _options_model()

    def describe(self) -> str:
        options = self.spec.options
        args = options.get("args")
        if args is not None:
            return "exec " + shlex.join([options["command"], *args])
        return f"{options.get('shell') or 'sh'} -c {options['command']!r}"

    def argv(self, values: dict[str, str]) -> list[str]:
        """Exec form: placeholders become their values, except inside an argument the program parses as
        code (a shell's ``-c`` script: ``handlers.inline_code``), where they are spelled as that shell's
        reference to the exported variable. Shell form: the command text is left as written and the values
        are exported, so the shell expands ``${NAME}`` itself. Either way a value (e.g. an event's ``cwd``
        holding ``$(...)``) is never parsed as shell code."""
        options = self.spec.options
        if options.get("args") is not None:
            from handlers.inline_code import code_arguments, is_shell, shell_reference

            raw = [options["command"], *options["args"]]
            code = code_arguments(raw)
            return [
                shell_reference(word, code[i])
                if i in code and is_shell(code[i])
                else word
                if i in code
                else substitute(word, values)
                for i, word in enumerate(raw)
            ]
        command = options["command"]
        shell = options.get("shell")
        if shell == "powershell":
            return [shutil.which("pwsh") or "powershell", "-NoProfile", "-Command", command]
        return [shell or "sh", "-c", command]

    async def run(self, event: HookEvent, ctx: RunContext) -> tuple[Verdict, dict[str, Any]]:
        from gateway.dialects import host_payload

        project_dir = event.project_dir or infer_project_dir(self.spec.base_dir, event.cwd or os.getcwd())
        values = placeholder_values(self.spec.base_dir, project_dir)
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env.update(values)
        if event.session_id:  # (an environment variable cannot hold a lone surrogate: its escape)
            env["CLAUDE_CODE_SESSION_ID"] = utf8_text(event.session_id)
        env["HOOKGATE_DEPTH"] = str(_depth() + 1)  # a hook that runs hookgate again is nested one deeper
        cwd = event.cwd if event.cwd and os.path.isdir(event.cwd) else None
        stdin = dump_bytes(host_payload(event, self.spec.dialect))
        code, out, err, over = await run_process(self.argv(values), stdin, env=env, cwd=cwd)
        limit = self.spec.options.get("max_output_size")
        if over and code != 2 and not (limit and limit <= MAX_STDOUT):  # a cut answer is no answer (exit 2
            raise HandlerError(  # blocks whatever stdout holds; a maxOutputSize cut is asked for)
                f"stdout over {MAX_STDOUT} bytes ({MAX_STDOUT >> 20} MiB): answer not read (exit code {code})",
                {"exit_code": code},
            )
        if limit and len(out) > limit:
            out = out[:limit]  # Kiro's max_output_size: stdout is cut, not rejected
        meta: dict[str, Any] = {"exit_code": code}
        if err.strip():
            meta["stderr"] = first_line(err)
        if self.spec.dialect != "claude":  # a hook from a Gemini settings file answers as Gemini reads it
            from gateway.dialects import answer_to_claude

            code, out, err = answer_to_claude(self.spec.dialect, event, code, out, err)
        return interpret(event, code, out, err, handler_id=self.spec.id), meta

    @classmethod
    def check(cls, spec: HandlerSpec, base_dir: str) -> list[str]:
        return inline_code_problems(spec) or check_command(spec, base_dir)

    @classmethod
    def advice(cls, spec: HandlerSpec) -> list[str]:
        return inline_code_advice(spec) + _nested_hookgate_advice(spec)


EVENT_DERIVED = ("CLAUDE_PROJECT_DIR",)
"""Placeholders whose value may come from the event or the request (the event's ``cwd`` when
``CLAUDE_PROJECT_DIR`` is unset; ``X-Hookgate-Project-Dir`` under ``hookgate serve``)."""


def _code_args(spec: HandlerSpec) -> list[tuple[int, str, str]]:
    """``(args index, language, text)`` of the exec-form arguments that are code."""
    from handlers.inline_code import code_arguments

    args = spec.options.get("args")
    if args is None:
        return []
    raw = [spec.options["command"], *args]
    return [(i - 1, language, raw[i]) for i, language in code_arguments(raw).items()]


def inline_code_problems(spec: HandlerSpec) -> list[str]:
    """A placeholder that may hold event data inside the inline code of a non-shell interpreter
    (``python -c``, ``node -e``, ...): pasting it would run that data as code, and such languages have
    no placeholder spelling that reads the environment, so the handler is refused."""
    from handlers.inline_code import is_shell, placeholders_in

    problems = []
    for index, language, text in _code_args(spec):
        if is_shell(language):
            continue
        for name in placeholders_in(text, EVENT_DERIVED):
            problems.append(
                f"args[{index}]: ${{{name}}} inside {language} code would paste a value that can "
                f"come from the event (its cwd) into the code; read the environment variable "
                f"instead (hookgate exports {name}), or pass it as an argument"
            )
    return problems


def _nested_hookgate_advice(spec: HandlerSpec) -> list[str]:
    """A command hook that runs ``hookgate run`` itself (a copy of an installed settings file used as
    the policy): it starts hookgate again on every event and, reading the same policy, again, until
    ``HOOKGATE_DEPTH`` stops it and every call is denied."""
    from gateway.config.hookcommand import hookgate_arguments

    rest = hookgate_arguments(spec.options)
    if rest is None or "run" not in rest:
        return []
    return [
        "command: runs `hookgate run` itself: as part of a policy that hook starts hookgate again on every "
        "event, in a loop if it reads this policy (every call then denied as nested too deep); give it its "
        "own --config, or remove it (a host settings file is not a policy file)"
    ]


def inline_code_advice(spec: HandlerSpec) -> list[str]:
    """Warnings for placeholders inside a shell's ``-c`` script (exec form): hookgate spells them as the
    shell's reference to the exported variable, so they are safe, but unquoted they are word-split."""
    from handlers.inline_code import is_shell, placeholders_in

    notes = []
    for index, language, text in _code_args(spec):
        if not is_shell(language):
            continue
        for name in dict.fromkeys(placeholders_in(text, PLACEHOLDERS)):
            notes.append(
                f"args[{index}]: ${{{name}}} sits inside the {language} -c script: hookgate never pastes "
                f"it there (its value can come from the event); the shell expands the exported "
                f'${name} instead. Quote it ("${{{name}}}"), or pass it as an argument: '
                f'args: ["-c", \'cd "$1" && ...\', "hook", "${{{name}}}"]'
            )
    return notes


def interpret(event: HookEvent, code: int, stdout: str, stderr: str, *, handler_id: str) -> Verdict:
    """Turn an exit code and the captured output into a Verdict (Claude Code's exit-code rules)."""
    if code == 0:
        if event.name == "WorktreeCreate":
            lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
            return Verdict(extra={"worktreePath": lines[-1]}) if lines else Verdict()
        return parse_text(stdout, event)
    if code == 2:
        try:
            verdict = parse_text(stdout, event)
        except HandlerError:
            verdict = Verdict()
        reason = (
            verdict.reason
            or verdict.permission_reason
            or truncate(stderr.strip())
            or f"blocked by hook {handler_id} (exit code 2)"
        )
        if event.name == "PreToolUse":
            verdict.permission, verdict.permission_reason = "deny", reason
        elif event.spec.blocks:
            verdict.block, verdict.reason = True, reason
        elif stderr.strip():
            verdict.system_message = truncate(stderr.strip())
        return verdict
    if trim(stdout).startswith("{"):
        with contextlib.suppress(HandlerError):
            return parse_text(stdout, event)
    detail = first_line(stderr) or first_line(stdout) or "no output"
    if code == 127:
        detail = f"command not found: {detail}"
    raise HandlerError(f"exit code {code}: {detail}", {"exit_code": code})


async def _read_capped(stream: asyncio.StreamReader | None, sink: bytearray, cap: int) -> None:
    """Read ``stream`` to its end (so the hook never blocks on a full pipe), keeping its first ``cap``
    bytes in ``sink``."""
    if stream is None:
        return
    while chunk := await stream.read(65536):
        room = cap - len(sink)
        if room > 0:
            sink.extend(chunk[:room])


FEED_GRACE = 0.2
"""Seconds ``run_process`` gives the stdin feeder to finish once the hook has exited (the pipe is closed or
broken by then, unless a backgrounded grandchild holds it open without reading: then it is cancelled)."""


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
        proc.stdin.close()
        # a hook that exits without reading its stdin breaks the pipe: waiting here takes that error, which
        # asyncio before Python 3.11.5 otherwise logs as "Future exception was never retrieved" with a
        # traceback on hookgate's stderr (run_process waits FEED_GRACE for this once the hook has exited)
        await proc.stdin.wait_closed()


def kill_group(pid: int) -> None:
    """SIGKILL the whole process group led by ``pid`` (the hook and every grandchild)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def run_process(
    argv: list[str], stdin: bytes, *, env: dict[str, str] | None = None, cwd: str | None = None
) -> tuple[int, str, str, bool]:
    """Run ``argv`` in a new process group; return ``(exit_code, stdout, stderr, stdout_over)``
    (decoded, replace; ``stdout_over``: stdout was longer than ``MAX_STDOUT`` and was cut).

    Cancellation (the dispatcher's deadline) kills the whole group. Raises HandlerError when the
    executable cannot be started.
    """
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    )
    try:
        # shielded: on Python 3.11 a cancellation that lands while asyncio is still connecting the new
        # process's pipes leaves the caller waiting for ever (the transport waits for pipes that never
        # connected); so a deadline that fires this early lets the start finish, then kills the group
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            started = await asyncio.wait_for(spawn, 5.0)
            kill_group(started.pid)
            await asyncio.wait_for(started.wait(), 2.0)
        raise
    except FileNotFoundError:
        raise HandlerError(f"executable not found: {argv[0]}", {"exit_code": 127}) from None
    except PermissionError:
        raise HandlerError(f"executable not permitted: {argv[0]}", {"exit_code": 126}) from None
    out, err = bytearray(), bytearray()
    readers = asyncio.ensure_future(
        asyncio.gather(_read_capped(proc.stdout, out, MAX_STDOUT + 1), _read_capped(proc.stderr, err, MAX_STDERR))
    )
    feeder = asyncio.ensure_future(_feed(proc, stdin))
    try:
        code = await _exit_code(proc, readers)
        if not readers.done():  # a backgrounded grandchild still holds stdout/stderr open
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(readers), PIPE_GRACE)
    except BaseException:
        kill_group(proc.pid)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(_exit_code(proc, readers), 2.0)
        raise
    finally:
        with contextlib.suppress(BaseException):  # its last step takes a broken pipe's error (see _feed):
            await asyncio.wait_for(feeder, FEED_GRACE)  # a hook gone has closed the pipe; else cancelled
        readers.cancel()
        with contextlib.suppress(BaseException):
            await readers
        transport = getattr(proc, "_transport", None)  # release pipes a grandchild may still hold
        if transport is not None:
            transport.close()
    over = len(out) > MAX_STDOUT  # (one byte more than the cap is kept to tell)
    return code, out[:MAX_STDOUT].decode("utf-8", "replace"), err.decode("utf-8", "replace"), over


async def _exit_code(proc: asyncio.subprocess.Process, readers: asyncio.Future[Any]) -> int:
    """The exit code as soon as the process has exited. On Python 3.11 ``Process.wait()`` also waits
    for the pipes to close, which a backgrounded grandchild can hold open for ever; so once the pipes
    are not closing, the return code is polled (every 50 ms) instead."""
    waiter = asyncio.ensure_future(proc.wait())
    try:
        while True:
            await asyncio.wait({waiter, readers}, timeout=0.05, return_when=asyncio.FIRST_COMPLETED)
            if waiter.done():
                return waiter.result()
            if proc.returncode is not None:
                return proc.returncode
            if readers.done():
                return await waiter
    finally:
        waiter.cancel()


# ------------------------------------------------------------------ load-time checks


def _resolve(word: str, project_dir: str) -> str:
    word = os.path.expanduser(word)
    return word if os.path.isabs(word) else os.path.normpath(os.path.join(project_dir, word))


def check_command(spec: HandlerSpec, base_dir: str) -> list[str]:
    """Find commands that would never run: a missing executable or script file, an unset variable."""
    options = spec.options
    project_dir = infer_project_dir(base_dir)
    values = placeholder_values(spec.base_dir, project_dir)
    command = substitute(options["command"], values)
    if options.get("args") is not None:
        words = [command, *(substitute(a, values) for a in options["args"])]
    else:
        try:
            words = shlex.split(command, comments=True)
        except ValueError as exc:
            return [f"command: cannot be parsed as a shell command ({exc})"]
        while words and "=" in words[0] and not words[0].startswith(("=", "/", ".")):
            words.pop(0)
        environ = {**os.environ, **values}  # `$CLAUDE_PROJECT_DIR` as well as `${CLAUDE_PROJECT_DIR}`
        words = [_VAR.sub(lambda m: environ.get(m.group(1) or m.group(2), m.group(0)), w) for w in words]
    if not words:
        return [] if options.get("args") is None else ["command: empty"]
    exe = words[0]
    unset = [v for v in _unexpanded(exe)]
    if unset:
        return [f"command: {exe!r} uses ${{{unset[0]}}}, which is not set"]
    if options.get("args") is None and (exe in SHELL_WORDS or any(c in exe for c in "$`|;&<>(")):
        return []
    if "/" in exe:
        path = _resolve(exe, project_dir)
        if not os.path.exists(path):
            return [
                f"command: {exe!r} does not exist (resolved to {path}); Claude Code would fail open "
                "with exit 127 and the policy would silently be off"
            ]
        if not os.access(path, os.X_OK):
            return [f"command: {exe!r} is not executable (chmod +x {path})"]
    elif shutil.which(exe) is None:
        return [f"command: executable {exe!r} is not on PATH"]
    base = os.path.basename(exe)
    if base.rstrip("0123456789.") in INTERPRETERS:
        from handlers.inline_code import code_arguments

        if code_arguments(words):  # `sh -ec 'script'`, `python -Ic 'code'`: inline code, no script file
            return []
        return _check_script(words[1:], project_dir)
    return []


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _unexpanded(word: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _VAR.finditer(word)]


def _check_script(args: list[str], project_dir: str) -> list[str]:
    for arg in args:
        if arg in ("-c", "-m", "-e", "--eval", "-Command", "-"):
            return []
        if arg.startswith("-"):
            continue
        unset = _unexpanded(arg)
        if unset:
            return [f"command: script {arg!r} uses ${{{unset[0]}}}, which is not set"]
        path = _resolve(arg, project_dir)
        if not os.path.exists(path):
            return [
                f"command: script file {arg!r} does not exist (resolved to {path}); the interpreter "
                "would exit 2 and Claude Code would block every call (#80697)"
            ]
        return []
    return []


def _options_model() -> Any:
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class CommandOptions(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True)
        command: str = Field(min_length=1)
        args: list[str] | None = None
        shell: Literal["bash", "sh", "powershell"] | None = None
        max_output_size: int | None = Field(None, alias="maxOutputSize", gt=0)

        @field_validator("command")
        @classmethod
        def _not_blank(cls, value: str) -> str:
            if not value.strip():  # a shell runs nothing and exits 0: every event would pass, failClosed or not
                raise ValueError(
                    f"only whitespace ({value!r}): the hook would run nothing and let every event through; "
                    "write the command to run"
                )
            return value

    return CommandOptions
