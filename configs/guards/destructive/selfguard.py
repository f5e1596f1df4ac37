"""The agent changing its own guard rails (rule ``hookgate.self-change``): hookgate's own commands that change hook
configuration or answer approvals (``hookgate``, ``python -m gateway``, a path to ``gateway/cli/hookgate``), pip
removing or replacing the installed hookgate, the sqlite3 CLI on hookgate's state, and HTTP calls to the gateway's
approval decision routes (``curl -X POST http://127.0.0.1:8787/approvals/ID``)."""

from __future__ import annotations

import os
import re

from .context import POLICY, Ctx
from .getopt import getopt
from .outside import read as read_outside
from .protected import config_kind

_HOOKGATE_COMMANDS = frozenset(
    {"run", "validate", "explain", "demo", "serve", "mode", "audit", "install", "uninstall", "store", "approvals"}
)


def _deny(shown: str, what: str, ctx: Ctx) -> str | None:
    return ctx.hit(
        "hookgate.self-change",
        shown,
        (
            f"`{shown}` {what}; the agent must not change its own guard rails or answer its own approval "
            f"requests, so {POLICY} blocks it: ask the user to run it."
        ),
    )


def check_hookgate(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """hookgate's own commands that change the agent's hook configuration or policy state: ``install``,
    ``uninstall``, ``mode ... off``, ``approvals approve|reject`` (the agent must not approve its own requests or
    switch its own guard rails off). Reading commands (validate, explain, approvals list/show, audit...) pass."""
    words = [a for a in args if not a.startswith("-")]
    sub = next((w for w in words if w in _HOOKGATE_COMMANDS), None)
    if sub is None:  # echo uninstall | xargs hookgate, hookgate "$@": the subcommand is known only at run time
        if any(_unknown(w) for w in words):
            return _deny(
                shown, "runs a hookgate command known only at run time (it can change hook configuration)", ctx
            )
        return None
    rest = words[words.index(sub) + 1 :]
    if sub in ("install", "uninstall"):
        what = f"{sub}s hookgate's hooks in an agent's hook configuration"
    elif sub == "mode" and "off" in rest:
        what = "switches a hookgate policy mode off"
    elif sub == "mode" and any(_unknown(w) for w in rest):  # echo off | xargs hookgate mode read-only
        what = "sets a hookgate policy mode to a value known only at run time (it can switch it off)"
    elif sub == "approvals" and rest[:1] and rest[0] in ("approve", "reject"):
        what = f"{rest[0]}s an approval request"
    elif sub == "approvals" and rest[:1] and _unknown(rest[0]):  # echo approve 7 | xargs hookgate approvals
        what = "runs an approvals command known only at run time (it can answer an approval request)"
    else:
        return None
    return _deny(shown, what, ctx)


def _unknown(word: str) -> bool:
    """Whether an argument is known only at run time: what ``xargs``/``parallel`` read from stdin, a variable."""
    return "$" in word or "`" in word


def is_hookgate_script(path: str) -> bool:
    """Whether ``path`` (a program a Python interpreter runs) is hookgate's CLI: ``.../gateway/cli/hookgate``,
    ``gateway/__main__.py``, ``gateway/cli/__init__.py`` or the ``gateway`` package folder itself."""
    p = path.replace("\\", "/").rstrip("/")
    return p.endswith(("gateway/cli/hookgate", "gateway/__main__.py", "gateway/cli/__init__.py", "gateway/cli")) or (
        p == "gateway" or p.endswith("/gateway") or p.rsplit("/", 1)[-1] == "hookgate"
    )


def is_hookgate_module(module: str) -> bool:
    return module in ("gateway", "gateway.cli", "gateway.__main__", "gateway.cli.__init__")


_PIP = frozenset({"pip", "pip3", "pipx", "uv"})


def _requirement_name(text: str) -> str:
    return re.split(r"[\[<>=!~;@ ]", text, maxsplit=1)[0].strip().lower().replace("_", "-")


def check_pip(name: str, args: list[str], shown: str, ctx: Ctx) -> str | None:
    """``pip uninstall hookgate``, ``pip install --force-reinstall hookgate==0.1``, ``uv pip uninstall hookgate``,
    ``pipx uninstall hookgate``, ``uv tool uninstall hookgate``: the guard rails removed or replaced."""
    if name == "uv":
        if args[:1] in (["pip"], ["tool"]):
            args = args[1:]
        else:
            return None
    name_or_verb = next((a for a in args if not a.startswith("-")), "")
    if name_or_verb not in ("uninstall", "install", "reinstall", "remove", "upgrade", "sync"):
        return None
    rest = args[args.index(name_or_verb) + 1 :]
    operands, _, _ = getopt(
        rest,
        "rceit",
        frozenset(
            {
                "--requirement",
                "--constraint",
                "--editable",
                "--index-url",
                "--extra-index-url",
                "--target",
                "--prefix",
                "--python",
                "--find-links",
            }
        ),
    )
    if any(_requirement_name(o) == "hookgate" for o in operands):
        verb = "removes" if name_or_verb in ("uninstall", "remove") else "replaces"
        return _deny(shown, f"{verb} the installed hookgate, the agent's guard rails", ctx)
    return None


_SQLITE_VALUE = frozenset(
    {"cmd", "init", "separator", "newline", "nullvalue", "escape", "maxsize", "mmap", "pagecache"}
)


def check_sqlite(args: list[str], shown: str, ctx: Ctx, fed: str | None = None) -> str | None:
    """``sqlite3 ~/.local/state/hookgate/state.sqlite3 "update approvals ..."``: writes to hookgate's state
    (approvals, audit records) behind the store's back. ``-readonly`` covers the database it opens (and what
    the SQL attaches), not one a later ``.open`` names. ``fed``: the text on its stdin, when known."""
    readonly = "-readonly" in args or "--readonly" in args
    operands, i = [], 0
    while i < len(args):  # sqlite3's options are single-dash words, some with a value
        if args[i].startswith("-") and args[i] != "-":
            i += 2 if args[i].lstrip("-") in _SQLITE_VALUE else 1
            continue
        operands.append(args[i])
        i += 1
    texts = [*args, *([fed] if fed else [])]
    # the database named first, and any path inside the SQL or the options (-cmd '.open F', ATTACH 'F' AS s)
    named = (
        []
        if readonly
        else [*operands[:1], *(m.group(1) or m.group(2) for a in texts for m in re.finditer(_LITERAL, a))]
    )
    named += [m.group(1) for a in texts for m in re.finditer(_SQLITE_OPEN, a)]  # .open F (not .open -readonly F)
    if not readonly:
        named += [
            w for a in [*args[:-1], *([fed] if fed else [])] if " " in a or ";" in a for w in re.split(r"[\s;'\"]+", a)
        ]
    for operand in named:
        if operand.startswith("file:"):
            operand = operand[5:].split("?", 1)[0]
        for path in (
            ctx.state.candidates(operand.strip("'\"")) if operand else []
        ):  # cd STATE_DIR && sqlite3 state.sqlite3
            if config_kind(path) == "hookgate's own cache or state":
                return _deny(shown, f"opens hookgate's state {path} for writing (approvals, audit records)", ctx)
    return None


_SQLITE_OPEN = r"(?m)^\s*\.op(?:e|en)?\s+(?:--?(?!readonly\b)\w+\s+)*(?!--?readonly\b)(\S+)"

_ROUTE = r"(?:^|/)(?:ui/api/)?approvals/[^/?#]+/?(?:[?#]|$)"  # compiled on first use
_LOOPBACK = ("127.", "localhost", "[::1]", "0.0.0.0", "::1")


def _gateway_url(url: str) -> bool:
    """Whether ``url`` names an approvals decision route (``/approvals/ID``, ``/approvals/slack``,
    ``/ui/api/approvals/ID``) on a loopback address or on ``$HOOKGATE_SERVER``."""
    text = url.strip("'\"")
    if text.startswith(("$HOOKGATE_SERVER", "${HOOKGATE_SERVER}")):
        rest = text.split("}", 1)[-1] if text.startswith("${") else text[len("$HOOKGATE_SERVER") :]
        return re.search(_ROUTE, rest) is not None
    _scheme, sep, after = text.partition("://")
    if not sep:
        after = text
    host, _, path = after.partition("/")
    host = host.rsplit("@", 1)[-1].lower()
    read_outside()
    server = os.environ.get("HOOKGATE_SERVER", "").partition("://")[2].split("/", 1)[0].lower()
    loopback = host.startswith(_LOOPBACK) or host.startswith(":") or _loopback_literal(host)  # httpie :8787
    if not (loopback or (server and host == server)):
        return False
    return re.search(_ROUTE, "/" + path) is not None


def _loopback_literal(host: str) -> bool:
    """Whether ``host`` (``name[:port]``, ``[v6][:port]``) is a loopback or unspecified address in a form a
    client resolves without DNS: ``2130706433``, ``0x7f000001``, ``0177.1`` (the ``inet_aton`` forms curl
    takes), ``[::ffff:127.0.0.1]``, ``[0:0:0:0:0:0:0:1]``, ``[::]``, or a name under ``localhost``."""
    import ipaddress
    import socket

    if host.startswith("["):
        name = host[1:].partition("]")[0]
    else:
        name = host.rpartition(":")[0] if host.count(":") == 1 else host
    name = name.rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        try:
            address = ipaddress.IPv4Address(socket.inet_aton(name))
        except OSError:
            return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified


def check_http(args: list[str], shown: str, ctx: Ctx) -> str | None:
    """An HTTP client sent to an approvals decision route of the gateway: the agent answering its own
    approval request with the thin client's token; also a URL on another host name that ``--connect-to``,
    ``--resolve`` or a proxy (``-x``) sends to the gateway (``--resolve example.com:80:127.0.0.1``)."""
    rerouted = _rerouted(args)
    for a in args:
        url = a.partition("=")[2] if a.startswith("--url=") else a
        if rerouted and "approvals/" in url and not url.startswith("-"):
            _scheme, sep, after = url.strip("'\"").partition("://")
            if re.search(_ROUTE, "/" + (after if sep else url).partition("/")[2]):
                return _deny(shown, "answers an approval request through the gateway, reached under another name", ctx)
        if "%" in url:  # /%61pprovals/ID: the server decodes the path before it routes it
            from urllib.parse import unquote

            url = unquote(url)
        if "approvals/" in url and _gateway_url(url):
            return _deny(shown, "answers an approval request through the gateway's approvals route", ctx)
        if ("{" in url or "[" in url) and _globbed_route(url):
            return _deny(shown, "spells the gateway's approvals route with curl's URL globbing", ctx)
    return None


_REROUTES = ("--connect-to", "--resolve", "-x", "--proxy", "--preproxy", "--socks5", "--socks5-hostname")


def _rerouted(args: list[str]) -> bool:
    """Whether curl's ``--connect-to``/``--resolve`` or a proxy (``-x``, ``--proxy``...) points at the gateway."""
    for k, a in enumerate(args):
        key, eq, value = a.partition("=")
        if key.startswith("-x") and len(key) > 2 and not key.startswith("--"):
            key, value, eq = "-x", a[2:], "="
        if key not in _REROUTES:
            continue
        if not eq:
            value = args[k + 1] if k + 1 < len(args) else ""
        value = value.strip("'\"")
        if key in ("--connect-to", "--resolve"):  # HOST:PORT:TARGET[:PORT], HOST:PORT:ADDR[,ADDR]
            hosts = value.split(":", 2)[2:3]
            hosts = [h for part in hosts for h in part.split(",")] if key == "--resolve" else hosts
        else:
            hosts = [value]
        if any(h and _gateway_url(h.rstrip("/") + "/approvals/x") for h in hosts):
            return True
    return False


def _globbed_route(url: str) -> bool:
    """Whether curl's URL globbing (``{a,b}`` sets, ``[a-z]`` / ``[1-9]`` ranges) can turn a path segment of
    ``url`` into ``approvals`` (or ``ui`` before ``api/approvals``) on the gateway: ``appr[o-o]vals``."""
    _scheme, sep, after = url.strip("'\"").partition("://")
    host, _, path = (after if sep else url).partition("/")
    segments = path.split("/")
    for i, segment in enumerate(segments):
        if "{" not in segment and "[" not in segment:
            continue
        pattern = ""
        for part in re.split(r"(\{[^{}]*\}|\[[^\[\]]*\])", segment):
            if part.startswith("{") and part.endswith("}"):
                pattern += "(?:" + "|".join(re.escape(x) for x in part[1:-1].split(",")) + ")"
            elif part.startswith("[") and part.endswith("]"):
                pattern += ".+?"  # a range: one or more characters (numeric ranges give several)
            else:
                pattern += re.escape(part)
        if re.fullmatch(pattern, "approvals") or (i == 0 and re.fullmatch(pattern, "ui")):
            return _gateway_url(host + "/approvals/x")
    return False


_LITERAL = r"'([^'\\\n]{1,400})'|\"([^\"\\\n]{1,400})\""  # compiled on first use


def check_code_literals(code: str, shown: str, ctx: Ctx) -> str | None:
    """A one-liner naming hookgate's state, cache or installed files in a string literal
    (``sqlite3.connect('~/.local/state/hookgate/state.sqlite3').execute('delete ...')``), or calling hookgate's
    CLI with an approval answer (``from gateway.cli import main; main(['approvals', 'approve', ID])``)."""
    if "hookgate" not in code and "gateway" not in code:
        return None
    for m in re.finditer(_LITERAL, code):
        text = (m.group(1) or m.group(2) or "").strip()
        if "hookgate" in text and config_kind(text, removal=True):
            return _deny(shown, f"reaches {text[:80]}, hookgate's own state or installed files", ctx)
    if re.search(r"\bgateway\b", code) and re.search(r"""['"](?:approve|reject|uninstall|install)['"]""", code):
        return _deny(shown, "calls hookgate's CLI to change its hooks or answer an approval request", ctx)
    mode_off = re.search(r"""['"]mode['"]""", code) and re.search(r"""['"]off['"]""", code)
    if mode_off and re.search(r"\bgateway\b", code):  # main(['mode', 'read-only', 'off'])
        return _deny(shown, "calls hookgate's CLI to switch a policy mode off", ctx)
    return None
