"""``hookgate serve``: answer hook events over HTTP (``gateway.serve``)."""

from __future__ import annotations

from gateway.cli import _err
from gateway.wire import EXIT_ERROR

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def cmd_serve(args: argparse.Namespace) -> int:
    from gateway.config import find_config_paths
    from gateway.errors import ConfigError, StoreError
    from gateway.serve import serve

    if args.max_body is None:
        from gateway.client import event_limit_problem

        problem = event_limit_problem()
        if problem is not None:  # a server runs long: refuse at start rather than serve another limit
            _err(f"{problem.partition(';')[0]}: fix it or pass --max-body BYTES")
            return EXIT_ERROR
    try:
        return serve(
            find_config_paths(args.config),
            host=args.host,
            port=args.port,
            max_body=args.max_body,
            reload_interval=args.reload_interval,
            log_level=args.log_level,
            allow_hosts=args.allow_host,
            read_timeout=args.read_timeout,
        )
    except ConfigError as exc:
        more = f" (and {len(exc.issues) - 1} more; run 'hookgate validate')" if len(exc.issues) > 1 else ""
        _err(f"invalid config: {exc.issues[0]}{more}")
        return EXIT_ERROR
    except StoreError as exc:
        _err(str(exc))
        return EXIT_ERROR
    except OSError as exc:
        _err(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
        return EXIT_ERROR
