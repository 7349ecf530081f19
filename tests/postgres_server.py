"""A throwaway PostgreSQL server for tests: ``initdb`` in a temporary folder, loopback only, stopped afterwards.

The server listens on 127.0.0.1 on a free port (its unix socket in the same temporary folder), runs with
``fsync=off`` (speed; nothing is kept) and asks for a scram-sha-256 password over TCP, so a URL whose password
comes from an environment variable is tested for real. ``initdb`` refuses to run as root: under root (CI) the
binaries run as the ``postgres`` system user, which owns the temporary folder.

    server = PostgresServer.start()
    url = server.create_database("t1")     # postgresql+psycopg://ragassay:...@127.0.0.1:PORT/t1
    server.stop()

Test modules import the fixtures explicitly: ``postgres_server = make_postgres_server_fixture()`` and
``postgres_url = make_postgres_url_fixture()``.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import secrets
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from ray_cluster import free_port

ROLE = "ragassay"
START_TIMEOUT_S = 60


def find_binaries() -> Path | None:
    """The folder with ``initdb``, ``pg_ctl`` and ``postgres`` (PATH first, then Debian's versioned folders)."""
    found = shutil.which("initdb")
    candidates = [Path(os.path.realpath(found)).parent] if found else []
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for folder in candidates:
        if all((folder / name).exists() for name in ("initdb", "pg_ctl", "postgres")):
            return folder
    return None


def _as_server_user() -> list[str]:
    """The command prefix that runs a PostgreSQL binary as a user it accepts (never root)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("runuser") is None:
        raise RuntimeError("running as root and 'runuser' is missing: cannot start PostgreSQL as another user")
    return ["runuser", "-u", "postgres", "--"]


@dataclasses.dataclass
class PostgresServer:
    """A running server: the superuser connects over the unix socket, tests over TCP as :data:`ROLE`."""

    bin_dir: Path
    temp_dir: Path
    port: int
    password: str

    @property
    def data_dir(self) -> Path:
        return self.temp_dir / "data"

    @classmethod
    def start(cls) -> PostgresServer:
        """Create a cluster and start it; raises RuntimeError (with the server's log) when it cannot."""
        bin_dir = find_binaries()
        if bin_dir is None:
            raise RuntimeError("PostgreSQL binaries (initdb, pg_ctl, postgres) not found; apt-get install postgresql")
        prefix = _as_server_user()
        temp_dir = Path(tempfile.mkdtemp(prefix="rg-pg-", dir="/tmp"))
        if prefix:
            shutil.chown(temp_dir, "postgres", "postgres")
        server = cls(bin_dir, temp_dir, free_port(), secrets.token_hex(16))
        try:
            server._init(prefix)
            server.start_again()
            server._create_role()
        except (RuntimeError, OSError, subprocess.SubprocessError):
            server.stop()
            raise
        return server

    def start_again(self) -> None:
        """Start the server on its existing data folder and port (after :meth:`shut_down`); waits until it
        accepts connections."""
        self._run(
            _as_server_user(),
            "pg_ctl",
            "-D",
            str(self.data_dir),
            "-l",
            str(self.temp_dir / "server.log"),
            "-w",
            "-t",
            str(START_TIMEOUT_S),
            "-o",
            self._options(),
            "start",
        )

    def shut_down(self) -> None:
        """Stop the server as an administrator restarting it would (``pg_ctl stop -m fast``: open sessions are
        ended, their transactions rolled back), keeping its data for :meth:`start_again`."""
        self._run(_as_server_user(), "pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop")

    def _options(self) -> str:
        return (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.temp_dir} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
        )

    def _init(self, prefix: list[str]) -> None:
        # The superuser is trusted on the unix socket only (in a folder only it and root can reach); TCP needs
        # a scram password.
        self._run(
            prefix,
            "initdb",
            "-D",
            str(self.data_dir),
            "-U",
            "postgres",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--encoding=UTF8",
            "--no-locale",
        )

    def _run(self, prefix: list[str], binary: str, *args: str) -> None:
        done = subprocess.run(
            [*prefix, str(self.bin_dir / binary), *args],
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S + 30,
            cwd=self.temp_dir,
        )
        if done.returncode != 0:
            log = self.temp_dir / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{binary} failed ({done.returncode}): {done.stderr.strip()[-2000:]}\n{tail}")

    def admin(self):
        """A psycopg connection as the superuser over the unix socket (autocommit)."""
        import psycopg

        return psycopg.connect(
            host=str(self.temp_dir), port=self.port, user="postgres", dbname="postgres", autocommit=True
        )

    def _create_role(self) -> None:
        from psycopg import sql

        with self.admin() as conn:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(ROLE), sql.Literal(self.password))
            )

    def url(self, database: str, password: str | None = None) -> str:
        """The SQLAlchemy URL of ``database`` as :data:`ROLE` (``password``: the text to put there)."""
        return f"postgresql+psycopg://{ROLE}:{password or self.password}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new empty database owned by :data:`ROLE`; returns its URL."""
        from psycopg import sql

        name = name or f"t_{uuid.uuid4().hex[:16]}"
        with self.admin() as conn:
            conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(name), sql.Identifier(ROLE)))
        return self.url(name)

    def drop_database(self, name: str) -> None:
        from psycopg import sql

        with self.admin() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def stop(self) -> None:
        """Stop the server (immediately: nothing is kept) and delete its folder."""
        if (self.data_dir / "postmaster.pid").exists():
            subprocess.run(
                [
                    *_as_server_user(),
                    str(self.bin_dir / "pg_ctl"),
                    "-D",
                    str(self.data_dir),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ],
                capture_output=True,
                timeout=60,
                cwd=self.temp_dir,
            )
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _postgres_server_fixture():
    """A session's server; skipped with the reason when psycopg or the binaries are missing or it cannot start."""
    import importlib.util

    import pytest

    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("psycopg is not installed (pip install 'ragassay[postgres]')")
    try:
        server = PostgresServer.start()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"a throwaway PostgreSQL server could not start here: {str(exc)[:800]}")
    try:
        yield server
    finally:
        server.stop()


def _postgres_url_fixture(postgres_server):
    """A fresh database per test (tests never see each other's rows), dropped afterwards."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url.rsplit("/", 1)[1])


def make_postgres_server_fixture():
    """The session-scoped ``postgres_server`` fixture (import it into a test module)."""
    import pytest

    return pytest.fixture(scope="session", name="postgres_server")(_postgres_server_fixture)


def make_postgres_url_fixture():
    """The function-scoped ``postgres_url`` fixture; needs ``postgres_server`` imported into the module too."""
    import pytest

    return pytest.fixture(name="postgres_url")(_postgres_url_fixture)
