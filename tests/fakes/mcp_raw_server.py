"""A misbehaving MCP server over stdio, written without the SDK so it can break the protocol on purpose.

It answers ``initialize`` and ``tools/list`` (one tool, ``act``, no output schema) and reads the
``tools/call`` argument ``do``:

- ``ok``: a text answer ``{}`` (no objection);
- ``garbage``: a line that is not JSON-RPC, and no answer;
- ``bad_result``: a JSON-RPC answer whose result is not a ``CallToolResult``;
- ``huge``: an answer line of ``size`` bytes (argument ``size``);
- ``close_stdout``: closes its stdout and keeps running (until signalled);
- ``close_stdin``: closes its stdin, answers, and keeps running (until signalled);
- ``child``: starts a child process in its process group (its pid in the answer's text) and answers.
- ``pid``: answers with its pid as the text;
- ``rpc_error``: a JSON-RPC error answer with ``code`` (argument, default -32000) and ``message`` (argument),
  and keeps serving;
- ``bad_notification``: a ``notifications/message`` whose params are invalid (holding ``data``, argument),
  then the ``{}`` answer;
- ``hang``: stops reading and answering (a single-threaded server stuck in its tool) for ``seconds``
  (argument, default an hour), then answers.

On stdin's end it exits, unless ``FAKE_RAW_LINGER`` is set: then it keeps running until signalled (so the
client has to terminate its process group). ``FAKE_RAW_PID_FILE``: a file to write its pid to.
``FAKE_RAW_BANNER``: a line to print on stdout before serving (as servers' startup banners do).
``FAKE_RAW_LOG``: a file to append each received message's method (``start PID`` at start) to.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def linger() -> None:
    while True:
        time.sleep(3600)


def note(text: str) -> None:
    if os.environ.get("FAKE_RAW_LOG"):
        with open(os.environ["FAKE_RAW_LOG"], "a", encoding="utf-8") as fh:
            fh.write(text + "\n")


def main() -> None:
    if os.environ.get("FAKE_RAW_PID_FILE"):
        with open(os.environ["FAKE_RAW_PID_FILE"], "w", encoding="utf-8") as fh:
            fh.write(str(os.getpid()))
    note(f"start {os.getpid()}")
    if os.environ.get("FAKE_RAW_BANNER"):
        sys.stdout.write(os.environ["FAKE_RAW_BANNER"] + "\n")
        sys.stdout.flush()
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        note(str(method))
        if ident is None:
            continue  # notifications
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            info = {"name": "raw", "version": "1"}
            send(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info},
                }
            )
        elif method == "tools/list":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "result": {"tools": [{"name": "act", "inputSchema": {"type": "object"}}]},
                }
            )
        elif method == "tools/call":
            args = message["params"].get("arguments") or {}
            do = args.get("do")
            answer = {"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": "{}"}]}}
            if do == "garbage":
                sys.stdout.write("this is not JSON-RPC\n")
                sys.stdout.flush()
            elif do == "bad_result":
                send({"jsonrpc": "2.0", "id": ident, "result": {"content": "not a list"}})
            elif do == "huge":
                answer["result"] = {"content": [{"type": "text", "text": "x" * int(args.get("size", 100))}]}
                send(answer)
            elif do == "close_stdout":
                sys.stdout.flush()
                os.close(1)
                linger()
            elif do == "close_stdin":
                os.close(0)
                send(answer)
                linger()
            elif do == "pid":
                answer["result"] = {"content": [{"type": "text", "text": str(os.getpid())}]}
                send(answer)
            elif do == "rpc_error":
                error = {"code": int(args.get("code", -32000)), "message": str(args.get("message", "db down"))}
                send({"jsonrpc": "2.0", "id": ident, "error": error})
            elif do == "bad_notification":
                params = {"level": "no such level", "data": args.get("data", "")}
                send({"jsonrpc": "2.0", "method": "notifications/message", "params": params})
                send(answer)
            elif do == "hang":
                time.sleep(float(args.get("seconds", 3600)))
                send(answer)
            elif do == "child":
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
                answer["result"] = {"content": [{"type": "text", "text": str(child.pid)}]}
                send(answer)
            else:
                send(answer)
        else:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Method not found"}})
    if os.environ.get("FAKE_RAW_LINGER"):
        linger()


if __name__ == "__main__":
    main()
