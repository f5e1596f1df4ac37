"""``hookgate serve``: a warm gateway behind HTTP (Starlette under uvicorn).

Modules: ``app`` (``HookServer``, the ASGI app, ``serve``), ``routes`` (the endpoints), ``protocol`` (the
HTTP/1.1 protocol uvicorn runs: h11's with a read deadline), ``guard`` (the request checks), ``metrics``
(Prometheus), ``reload`` (config generations and reload), ``ui`` (the console at ``/ui``). May import the
core, ``gateway.config``, ``gateway.dialects``, ``gateway.api`` and ``gateway.audit``; never ``gateway.cli``.

Routes::

    POST /hooks            a Claude Code hook event -> 200 with the Claude Code JSON body ({} = no decision),
                           so Claude Code's own ``type: "http"`` hook can point straight at it
    POST /hooks/{dialect}  an event in ``dialect`` (claude, kiro, auto) -> 200 with the answer as
                           ``hookgate run`` would print it:
                           {"event": "PreToolUse", "dialect": "claude", "exit_code": 2,
                            "stdout": "...", "stderr": "...", "claude": {...Claude Code JSON...},
                            "decision": {...Decision.to_dict(), results included...}}
                           With ``Accept: application/vnd.hookgate.rendered`` (the thin client) the
                           same answer comes compact: headers ``hookgate-exit-code`` and
                           ``hookgate-stdout-length`` (bytes), body = stdout then stderr (UTF-8).
    GET  /healthz          {"status": "ok", "version", "config": [files], "handlers": n, "reloads": n}
    GET  /ui               the console: the audit trail in a browser (``gateway.serve.ui``: sign-in,
                           decisions with filters, the full record, per-handler chart)
    GET  /metrics          Prometheus text: hookgate_events_total{event,decision},
                           hookgate_handler_duration_seconds{handler,type} (histogram),
                           hookgate_handler_errors_total{handler,type,status}, hookgate_event_duration_seconds,
                           hookgate_inflight_events, hookgate_config_reloads_total{result},
                           hookgate_requests_rejected_total{reason}

Each route also answers with a trailing slash (``/hooks/``, ``/hooks/claude/``): no redirects.

A host event hookgate passes through untouched (Gemini's BeforeModel, AfterModel, BeforeToolSelection:
``gateway.events.PassedThrough``) gets 200 with the host's "no objection" answer, as ``hookgate run``
prints it: ``{}`` on ``/hooks``; on ``/hooks/{dialect}`` the envelope with ``"decision": null`` and
``"passed_through": "<why>"`` (metric label ``decision="passthrough"``).

Request checks (``RequestGuard``, on every route, before anything else), against cross-site requests
from a browser (CSRF) and DNS rebinding:

- ``Host``: when the server is bound to a loopback address (or ``allow_hosts`` is given), the Host
  header's name must be a loopback address, ``localhost``, the bound host, or one of ``allow_hosts``:
  421 otherwise. A page on ``http://evil.example`` whose name was rebound to 127.0.0.1 still sends
  ``Host: evil.example``.
- ``Origin``: a request that carries one gets 403 (browsers send it on every cross-origin POST; hook
  clients, Claude Code's ``http`` hook and the thin client do not).
- ``Authorization: Bearer <token>`` when ``HOOKGATE_TOKEN`` is set (the scheme in any case, RFC 7235): 401
  otherwise.
- ``POST`` bodies must be ``Content-Type: application/json`` (or ``application/vnd.hookgate.*``): 415
  otherwise, so no "simple" cross-site request (``text/plain``, a form) reaches a handler. This holds
  for every POST route (the approval answers and the console's too), checked after the token; the one
  exception is Slack's form-encoded callback, ``POST /approvals/slack`` (its signature is checked).

``X-Hookgate-Project-Dir`` (percent-encoded UTF-8 absolute path, sent by the thin client from its
``CLAUDE_PROJECT_DIR``) becomes ``HookEvent.project_dir`` for that event, which ``command`` handlers
use instead of the server's own ``CLAUDE_PROJECT_DIR``. It is honoured only when ``HOOKGATE_TOKEN`` is
set (and the caller's token matched): without a token any local user could point command handlers at
a folder of their choosing, so the header is then ignored (one warning in the log) and handlers use the
server's ``CLAUDE_PROJECT_DIR``. A value that is not the absolute path of an existing directory is a
400 (with a token set). Commands get it only as the ``CLAUDE_PROJECT_DIR`` variable: never parsed as
shell code (``handlers.inline_code``).

Errors are JSON ``{"error": "<one line>"}``: 400 malformed event (bad JSON, not an object, unknown
or non-string event name, a field of the wrong type: on every route, for every dialect), 401
missing/wrong bearer token (when ``HOOKGATE_TOKEN`` is set, on every request), 403 a request with an
``Origin``, 404 unknown dialect or path, 405 wrong method for the path, 408 a body not in within the read
timeout (``gateway.serve.protocol``: the connection is then closed; so is one whose head is not in
within it), 415 a POST that is not JSON, 421 a
Host that is not this server's, 500 an internal error while dispatching (logged with its traceback;
the server goes on), unless a handler for that event is ``failClosed``: then the answer is the
deny/block ``hookgate run`` gives in that case. Handler failures are not HTTP errors: they are inside
the decision, exactly as with ``hookgate run``. An event over ``max_body`` bytes (default 64 MiB,
``HOOKGATE_MAX_EVENT_BYTES``) is not an error either: 200 with the deny/block ``hookgate run`` gives
for it (``gateway.oversize``), since Claude Code's ``http`` hook reads any non-2xx as "go ahead".

Warm state: one ``Gateway`` (mode ``serve``): loaded config, handler instances, the shared HTTP pool,
MCP sessions and SDK clients live across events. Reload on SIGHUP and when a config file or an ``mcpConfig`` file
it reads changes (polled every ``reload_interval`` seconds): the new config is compiled off the event loop and swapped
in atomically; a bad config is rejected with one log line and the old one keeps serving. Events already
running finish on the config they started with. When only ``hooks`` changed, warm resources are kept;
otherwise the old gateway is closed once its last event finishes. Shutdown (SIGTERM/SIGINT) stops
accepting connections, lets in-flight events finish, then drains background (``async``) handlers.
"""

from __future__ import annotations

from gateway.serve.app import HookServer, bind, create_app, serve

__all__ = ["HookServer", "bind", "create_app", "serve"]
