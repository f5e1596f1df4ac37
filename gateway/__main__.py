import sys

_startup = set(sys.modules)

from gateway.cli import exit_hook, main  # noqa: E402

code = main()
if sys.argv[1:2] == ["run"]:
    exit_hook(code, _startup)  # no interpreter teardown when nothing needs it (see exit_hook)
raise SystemExit(code)
