"""A private PostgreSQL cluster for tests: ``initdb`` + ``pg_ctl`` in a temporary directory,
listening only on a Unix socket there (``listen_addresses = ''``: no TCP port, nothing to
collide with under pytest-xdist), stopped and removed at the end.

``initdb`` refuses to run as root, so under root (as CI runs) the server runs as an
unprivileged user: ``postgres`` when the system has one (Debian's package creates it), else
uid 1000. Durability settings are off (``fsync``, ``full_page_writes``): the tests check
transactions and concurrency, not crash safety of the disk.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

#: The superuser initdb creates; the stores under test connect as the unprivileged APP_ROLE.
SUPERUSER = "tooldeck_admin"
APP_ROLE = "tooldeck_app"
_SETTINGS = """
listen_addresses = ''
unix_socket_directories = '{socket_dir}'
unix_socket_permissions = 0777
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 300
shared_buffers = 32MB
"""


def find_bindir() -> Path | None:
    """The directory of ``initdb`` and ``pg_ctl``: on PATH, at ``pg_config --bindir``, or
    Debian's ``/usr/lib/postgresql/<version>/bin`` (newest first); None when not installed."""
    initdb = shutil.which("initdb")
    if initdb is not None:
        return Path(initdb).resolve().parent
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False, timeout=30)
        candidate = Path(out.stdout.strip())
        if out.returncode == 0 and (candidate / "initdb").exists():
            return candidate
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_version_key, reverse=True)
    return Path(versions[0]).parent if versions else None


def _version_key(path: str) -> tuple[int, ...]:
    version = Path(path).parent.parent.name
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def _server_user() -> tuple[int, int] | None:
    """(uid, gid) to run the server as: None when not root (run as ourselves); as root, the
    ``postgres`` user, else an ordinary user, else ``nobody`` (initdb needs a passwd entry).

    Raises:
        FileNotFoundError: root, and no unprivileged user to run the server as.
    """
    if os.geteuid() != 0:
        return None
    for name in ("postgres", 1000, "nobody"):
        try:
            entry = pwd.getpwnam(name) if isinstance(name, str) else pwd.getpwuid(name)
        except KeyError:
            continue
        return (entry.pw_uid, entry.pw_gid)
    raise FileNotFoundError("an unprivileged user (postgres, uid 1000 or nobody) to run the server as")


def _shared_tmp() -> str:
    """A temp directory the server's user can reach (pytest's own is private to root)."""
    base = tempfile.gettempdir()
    return base if os.stat(base).st_mode & 0o001 else "/tmp"  # sticky and world-traversable


@dataclass
class Cluster:
    """A running private cluster."""

    bindir: Path
    root: Path
    user: tuple[int, int] | None

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def url(self, database: str = "postgres", user: str = SUPERUSER) -> str:
        """A libpq URL reaching ``database`` as ``user`` over the cluster's Unix socket."""
        return f"postgresql://{user}@/{database}?host={self.root}"

    def _run(self, *args: str, timeout: float = 120) -> None:
        kwargs: dict[str, object] = {}
        if self.user is not None:
            kwargs = {"user": self.user[0], "group": self.user[1], "extra_groups": []}
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "HOME": str(self.root)}
        result = subprocess.run(  # type: ignore[call-overload]
            [str(self.bindir / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=self.root,
            check=False,
            **kwargs,
        )
        if result.returncode != 0:
            log = self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""
            raise RuntimeError(f"{args[0]} failed ({result.returncode}): {result.stderr.strip()}\n{log}")

    def start(self) -> None:
        """``initdb`` then ``pg_ctl start``; then the application role exists."""
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
            "--no-instructions",
        )
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(_SETTINGS.format(socket_dir=self.root))
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "120", "start")
        self.execute(f"CREATE ROLE {APP_ROLE} LOGIN")

    def stop(self) -> None:
        """Stop the server at once (``-m immediate``) and remove its directory."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def execute(self, sql: str, database: str = "postgres") -> None:
        """Run ``sql`` as the superuser, outside a transaction."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(sql.encode())

    def new_database(self) -> str:
        """A fresh database owned by the application role; returns its URL (as that role)."""
        name = "t_" + uuid.uuid4().hex[:16]
        self.execute(f'CREATE DATABASE "{name}" OWNER {APP_ROLE}')
        return self.url(name, APP_ROLE)


def start_cluster() -> Cluster:
    """A started cluster in a new temporary directory.

    Raises:
        FileNotFoundError: PostgreSQL is not installed, or (as root) there is no user to run it as.
        RuntimeError: it is installed but would not start (the server log is in the message).
    """
    bindir = find_bindir()
    if bindir is None:
        raise FileNotFoundError("initdb")
    user = _server_user()
    root = Path(tempfile.mkdtemp(prefix="tdpg-", dir=_shared_tmp()))
    if user is not None:
        os.chown(root, *user)
    cluster = Cluster(bindir, root, user)
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster
