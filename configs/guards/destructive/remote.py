"""Commands that run a shell command on another machine or in a container: ``ssh HOST CMD`` (and ``-o
RemoteCommand=CMD``, ``autossh``), ``rsync --rsync-path=CMD``, ``docker``/``podman`` ``exec CTR CMD``, ``docker
compose exec SERVICE CMD`` and ``kubectl``/``oc`` ``exec POD -- CMD``. ``expand.unwrap`` asks this module, and
``rules.check_argv`` checks each such command with the directory it runs in unknown: a relative delete target
there is not the project's, and is denied like ``cd "$X" && rm -rf build``. (What the ssh family runs on this
machine, ``-o ProxyCommand=CMD``, ``scp -S PROG``, ``rsync -e CMD``, is ``optruns.option_runs``'.)

ssh joins its command words with spaces and the remote user's shell parses the line, so ``ssh h rm -rf
'/x y'`` runs ``rm -rf /x y``; with no command, that shell reads its program from stdin (``curl ... | ssh h``),
as ``sh`` would. ssh parses options again after the destination (``ssh h -t cmd``), as OpenSSH does. Standard
library only."""

from __future__ import annotations

import re

from .getopt import getopt

_F = frozenset
_SSH_VALUES = "bceilmopBDEFIJLOPQRSwW"  # ssh(1)'s options that take a value (OpenSSH 9); autossh adds -M
_NO_SHELL = _F({"-N", "-W", "-O", "-s", "-Q", "-V", "-G"})  # forwarding, control, subsystem, query: no shell
_DOCKER_GLOBAL = ("cHl", _F({"--config", "--context", "--host", "--log-level", "--tlscacert", "--tlscert", "--tlskey"}))
_DOCKER_EXEC = ("euw", _F({"--env", "--env-file", "--user", "--workdir", "--detach-keys"}))
_COMPOSE_GLOBAL = (
    "fp",
    _F(
        {
            "--file",
            "--project-name",
            "--profile",
            "--env-file",
            "--project-directory",
            "--ansi",
            "--parallel",
            "--progress",
        }
    ),
)
_COMPOSE_EXEC = ("euw", _F({"--env", "--user", "--workdir", "--index"}))


def remote_runs(name: str, args: list[str]) -> list[str]:
    """The shell programs ``name ARGS`` (``name`` in ``wrappers.REMOTE``, or ``rsync``) runs elsewhere."""
    if name in ("ssh", "autossh"):
        return _ssh(args, _SSH_VALUES + ("M" if name == "autossh" else ""))
    if name == "rsync":
        return _rsync_path(args)
    if name in ("docker", "podman", "docker-compose", "podman-compose"):
        return _docker(args, compose=name.endswith("-compose"))
    return _kubectl(args)  # kubectl, oc


def _ssh(args: list[str], values: str) -> list[str]:
    _, opts, stop = getopt(args, values, permute=False)
    rest = args[stop:]  # the destination and the command (getopt has taken a `--`)
    if not rest:
        return []  # no destination: ssh -V
    _, more, stop = getopt(rest[1:], values, permute=False)  # ssh host -t cmd: options again
    opts += more
    command = rest[1:][stop:]
    if {o for o, _ in opts} & _NO_SHELL:
        return []
    out = [v for v in (_remote_command(v) for o, v in opts if o == "-o") if v]
    if command:
        out.append(" ".join(command))
    return out or ["sh"]  # no command: the remote login shell reads stdin (echo 'rm -rf ~' | ssh h)


def _remote_command(option: str) -> str | None:
    """The command of ``-o RemoteCommand=CMD`` (``Key Value`` too; the key in any case), else None."""
    parts = re.split(r"\s*=\s*|\s+", option.strip(), maxsplit=1)
    if parts[0].lower() != "remotecommand" or len(parts) < 2 or parts[1].lower() == "none":
        return None
    return parts[1]


def _rsync_path(args: list[str]) -> list[str]:
    """``rsync --rsync-path=CMD``: the remote shell runs CMD (``sudo rsync``, or anything before it)."""
    out = []
    for k, a in enumerate(args):
        if a == "--rsync-path" and k + 1 < len(args):
            out.append(args[k + 1])
        elif a.startswith("--rsync-path="):
            out.append(a.partition("=")[2])
    return [v for v in out if v.strip()]


def _docker(args: list[str], compose: bool = False) -> list[str]:
    """``docker [global options] [container] exec [options] CONTAINER CMD ...`` and ``docker compose [options]
    exec [options] SERVICE CMD ...`` (``docker-compose``: ``compose``): the command, joined for a shell."""
    _, _, stop = getopt(args, *(_COMPOSE_GLOBAL if compose else _DOCKER_GLOBAL), permute=False)
    args = args[stop:]
    if not compose and args[:1] == ["compose"]:
        return _docker(args[1:], compose=True)
    if not compose and args[:1] == ["container"]:
        args = args[1:]
    if args[:1] != ["exec"]:
        return []
    _, _, stop = getopt(args[1:], *(_COMPOSE_EXEC if compose else _DOCKER_EXEC), permute=False)
    command = args[1 + stop :][1:]  # after the container or service
    return [_joined(command)] if command else []


def _kubectl(args: list[str]) -> list[str]:
    """``kubectl ... exec ... -- CMD ...`` (the ``--`` form: without it kubectl's own flags and the command's
    cannot be told apart): the command, joined for a shell."""
    if "exec" not in args or "--" not in args or args.index("exec") > args.index("--"):
        return []
    command = args[args.index("--") + 1 :]
    return [_joined(command)] if command else []


def _joined(words: list[str]) -> str:
    import shlex

    return shlex.join(words)
