"""A real PostgreSQL server for tests: Debian's ``postgresql`` package, started into a temp dir.

PostgreSQL refuses to run as root, so when the tests run as root ``initdb`` and ``pg_ctl`` run as the
``postgres`` system user (``runuser -u postgres``) on a directory owned by that user; as any other
user they run directly. The server listens on 127.0.0.1 on a free port and on a Unix socket inside
the data directory; host connections need a password (scram-sha-256), so the tests exercise the
credential path the way a shared deployment does. Binaries are found under
``/usr/lib/postgresql/*/bin`` (newest first) or ``$HOOKGATE_PG_BIN``.

``PgServer.stop()`` / ``start()`` stop and restart the same cluster on the same port (fault tests);
``new_database()`` gives every test its own empty database owned by the test role.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

ROLE = "hookgate"
PASSWORD = "s3cret-Pg-pass-7Q"  # the tests check that this never shows up in logs or errors


def find_bin_dir() -> Path | None:
    """The directory holding ``initdb``/``pg_ctl``: ``$HOOKGATE_PG_BIN``, else the newest Debian one."""
    env = os.environ.get("HOOKGATE_PG_BIN")
    if env:
        return Path(env) if (Path(env) / "pg_ctl").exists() else None
    dirs = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda d: int(Path(d).parent.name or 0) if Path(d).parent.name.isdigit() else 0,
        reverse=True,
    )
    for d in dirs:
        if (Path(d) / "pg_ctl").exists() and (Path(d) / "initdb").exists():
            return Path(d)
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class PgServer:
    """One PostgreSQL cluster in a temp dir (see module docstring)."""

    def __init__(self, bin_dir: Path, *, durable: bool = False) -> None:
        self.bin_dir = bin_dir
        self.durable = durable
        self.as_root = os.geteuid() == 0
        self.base = Path(tempfile.mkdtemp(prefix="hookgate-pg-"))
        self.data = self.base / "data"
        self.log = self.base / "server.log"
        self.port = free_port()
        self._dbs = 0
        if self.as_root:
            pw = pwd.getpwnam("postgres")
            os.chown(self.base, pw.pw_uid, pw.pw_gid)

    def _cmd(self, *args: str) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *args] if self.as_root else list(args)

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            self._cmd(*args), capture_output=True, text=True, timeout=timeout, check=False, cwd=str(self.base)
        )
        if proc.returncode != 0:
            raise RuntimeError(
                f"{' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}\n{self.log_tail()}"
            )
        return proc

    def init(self) -> None:
        pwfile = self.base / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.as_root:
            pw = pwd.getpwnam("postgres")
            os.chown(pwfile, pw.pw_uid, pw.pw_gid)
        self._run(
            str(self.bin_dir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            ROLE,
            f"--pwfile={pwfile}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        )
        pwfile.unlink()
        conf = self.data / "postgresql.conf"
        with conf.open("a") as f:
            f.write(
                f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.data}'\nmax_connections = 200\nshared_buffers = 32MB\n"
            )
            if not self.durable:  # tests: speed over crash safety; benches keep PostgreSQL's defaults
                f.write("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
            if self.has_stat_statements:
                f.write("shared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track_utility = on\n")

    @property
    def has_stat_statements(self) -> bool:
        """Whether the server's contrib has pg_stat_statements (Debian's postgresql-NN ships it)."""
        share = self.bin_dir.parent.parent.parent.parent / "share" / "postgresql" / self.bin_dir.parent.name
        return (share / "extension" / "pg_stat_statements.control").exists()

    def statements_reset(self, db: str) -> None:
        """Start counting statements in ``db`` from zero (creates the extension there)."""
        self.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", db)
        self.psql("SELECT pg_stat_statements_reset()", db)

    def statements(self, db: str, *, touching: str | None = None, excluding: tuple[str, ...] = ()) -> int:
        """Statements the server ran in ``db`` since ``statements_reset`` (each is one client round trip
        for hookgate's autocommit connections), not counting these bookkeeping queries; ``touching`` /
        ``excluding``: only statements whose text names that table (or names none of those)."""
        extra = f" AND s.query ILIKE '%{touching}%'" if touching else ""
        extra += "".join(f" AND s.query NOT ILIKE '%{name}%'" for name in excluding)
        out = self.psql(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d "
            f"ON d.oid = s.dbid WHERE d.datname = '{db}' AND s.query NOT ILIKE '%pg_stat_statements%' "
            f"AND s.query NOT ILIKE 'CREATE EXTENSION%'{extra}",
            db,
        )
        return int(out.strip() or 0)

    def log_statements(self, db: str) -> None:
        """Make the server log every statement run in ``db`` (``log_statement = 'all'`` for that database
        only; connections opened afterwards pick it up)."""
        self.psql(f"ALTER DATABASE \"{db}\" SET log_statement = 'all'", db)

    def log_mark(self) -> int:
        """The server log's current end (pass it to ``logged_statements``)."""
        try:
            return self.log.stat().st_size
        except OSError:
            return 0

    def logged_statements(self, since: int, settle: float = 0.3) -> list[tuple[int, str]]:
        """``(backend pid, first line of the SQL)`` of every statement the server logged after ``since``
        (a ``log_mark``), in order; waits until the log has been quiet for ``settle`` seconds. With
        ``log_statements`` on, each is one statement a client sent, that is one round trip for hookgate's
        autocommit connections (they never prepare; ``BEGIN``/``COMMIT`` would show up as statements)."""
        import re

        size = -1
        while size != self.log_mark():
            size = self.log_mark()
            time.sleep(settle)
        with self.log.open("rb") as fh:
            fh.seek(since)
            text = fh.read().decode("utf-8", "replace")
        found = re.findall(r"\[(\d+)\] LOG:  (?:statement|execute [^:]*): (.*)", text)
        return [(int(pid), sql) for pid, sql in found]

    def start(self, timeout: float = 60) -> None:
        self._run(
            str(self.bin_dir / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            str(int(timeout)),
            "start",
            timeout=timeout + 10,
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def is_running(self) -> bool:
        proc = subprocess.run(
            self._cmd(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "status"),
            capture_output=True,
            text=True,
            check=False,
            cwd=str(self.base),
        )
        return proc.returncode == 0

    def psql(self, sql: str, db: str = "postgres") -> str:
        """Run ``sql`` through the Unix socket as the superuser role (trust auth); return stdout."""
        proc = self._run(
            str(self.bin_dir / "psql"),
            "-h",
            str(self.data),
            "-p",
            str(self.port),
            "-U",
            ROLE,
            "-d",
            db,
            "-v",
            "ON_ERROR_STOP=1",
            "-qAt",
            "-c",
            sql,
        )
        return proc.stdout

    def url(self, db: str, *, password: bool = True) -> str:
        auth = f"{ROLE}:{PASSWORD}" if password else ROLE
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{db}"

    def new_database(self) -> str:
        """Create a fresh empty database and return its name."""
        self._dbs += 1
        name = f"t{os.getpid()}_{self._dbs}"
        self.psql(f'CREATE DATABASE "{name}"')
        return name

    def log_tail(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            if self.is_running():
                self.stop("immediate")
        shutil.rmtree(self.base, ignore_errors=True)


def start_server(retries: int = 3, *, durable: bool = False) -> PgServer:
    """Init and start a cluster (retrying on a port race); raises RuntimeError with the server log.
    ``durable``: keep PostgreSQL's crash-safe defaults (fsync, synchronous commit) instead of the
    tests' faster settings."""
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise FileNotFoundError(
            "no PostgreSQL binaries under /usr/lib/postgresql/*/bin "
            "(install Debian's postgresql package, as .ci/run does)"
        )
    last: Exception | None = None
    for _ in range(retries):
        server = PgServer(bin_dir, durable=durable)
        try:
            server.init()
            server.start()
            return server
        except RuntimeError as exc:
            last = exc
            server.destroy()
            time.sleep(0.2)
    raise RuntimeError(f"could not start PostgreSQL: {last}")
