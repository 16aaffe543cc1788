"""A real PostgreSQL (Debian's ``postgresql`` package) for tests: its own data folder in a temporary
directory, its own loopback port and socket folder, started and stopped by the test.

initdb and postgres refuse to run as root: as root they run as the ``postgres`` system user the
package creates (``runuser -u postgres``), with the folder owned by that user; otherwise as the
current user. Trust authentication on 127.0.0.1 only, user ``edge``, database ``edge``; the role
:data:`PASSWORD_ROLE` (when a test creates it) must give its password.
"""
from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_BIN = Path(os.environ.get("EDGE_PG_BIN", "/usr/lib/postgresql/15/bin"))


#: A role that pg_hba.conf makes log in with a password (scram-sha-256); every other role is trusted.
PASSWORD_ROLE = "edge_pw"


def available() -> bool:
    """True if the PostgreSQL server binaries are installed."""
    return (PG_BIN / "initdb").is_file() and (PG_BIN / "pg_ctl").is_file()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    """One PostgreSQL instance. :meth:`start` once, then :meth:`stop` / :meth:`kill` / :meth:`start`
    as the test needs; :meth:`destroy` at the end removes everything.

    ``tls``: (server certificate, its private key), PEM files: the server then has ``ssl = on``
    with copies of them (the key mode 600, owned by the server's user) and accepts TCP
    connections only over TLS (``hostssl`` lines alone in pg_hba.conf)."""

    def __init__(self, tls: tuple[Path, Path] | None = None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="edge-pg-"))
        os.chmod(self.root, 0o755)  # the postgres user must reach its folders
        self.data = self.root / "data"
        self.sock = self.root / "sock"
        self.log = self.root / "server.log"
        self.port = free_port()
        self.sock.mkdir()
        self._as_root = os.geteuid() == 0
        if self._as_root:
            pw = pwd.getpwnam("postgres")
            for p in (self.root, self.sock):
                os.chown(p, pw.pw_uid, pw.pw_gid)
        self._run(PG_BIN / "initdb", "-D", str(self.data), "-A", "trust", "-U", "edge", "--no-sync",
                  "-E", "UTF8", "--locale=C")
        hba = self.data / "pg_hba.conf"  # the role PASSWORD_ROLE must log in with a password (first match wins)
        hba.write_text(f"host all {PASSWORD_ROLE} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        if tls:
            self._tls(*tls)

    def _tls(self, cert: Path, key: Path) -> None:
        own = self.data / "server.crt", self.data / "server.key"
        for src, dst, mode in ((cert, own[0], 0o644), (key, own[1], 0o600)):
            shutil.copyfile(src, dst)
            os.chmod(dst, mode)  # postgres refuses a key that group or others may read
            if self._as_root:
                pw = pwd.getpwnam("postgres")
                os.chown(dst, pw.pw_uid, pw.pw_gid)
        with (self.data / "postgresql.conf").open("a") as f:
            f.write(f"ssl = on\nssl_cert_file = '{own[0]}'\nssl_key_file = '{own[1]}'\n")
        (self.data / "pg_hba.conf").write_text(
            "local all all trust\n"
            f"hostssl all {PASSWORD_ROLE} 127.0.0.1/32 scram-sha-256\n"
            "hostssl all all 127.0.0.1/32 trust\n")  # no host/hostnossl line: plain TCP is refused

    @property
    def dsn(self) -> str:
        """libpq connection string of the ``edge`` database over TCP on loopback."""
        return f"host=127.0.0.1 port={self.port} dbname=edge user=edge"

    def _run(self, *cmd: object, timeout: float = 60) -> subprocess.CompletedProcess:
        argv = [str(c) for c in cmd]
        if self._as_root:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr or r.stdout}\n"
                               f"{self.log.read_text() if self.log.exists() else ''}")
        return r

    def start(self) -> None:
        """Start (or restart) the server and wait until it accepts connections (bounded, 60 s)."""
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "-o",
                  f"-p {self.port} -k {self.sock} -c listen_addresses=127.0.0.1", "start", timeout=90)
        if not self._has_db():
            self._run(PG_BIN / "createdb", "-h", "127.0.0.1", "-p", self.port, "-U", "edge", "edge")

    def _has_db(self) -> bool:
        r = subprocess.run([str(PG_BIN.parent / "bin" / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "edge",
                            "-d", "postgres", "-tAc", "SELECT 1 FROM pg_database WHERE datname = 'edge'"],
                           capture_output=True, text=True, timeout=30)
        return r.stdout.strip() == "1"

    def stop(self) -> None:
        """A clean, fast shutdown (connections are cut)."""
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-w", "-t", "60", "-m", "fast", "stop", timeout=90)

    def kill(self) -> None:
        """Abort the server as a crash would (``-m immediate``: no checkpoint, recovery at next start)."""
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-w", "-t", "60", "-m", "immediate", "stop", timeout=90)

    def running(self) -> bool:
        """True while the postmaster runs."""
        argv = [str(PG_BIN / "pg_ctl"), "-D", str(self.data), "status"]
        if self._as_root:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        return subprocess.run(argv, capture_output=True, timeout=30).returncode == 0

    def destroy(self) -> None:
        """Stop the server if it runs and remove its folder."""
        try:
            if self.running():
                self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def wait_for(predicate, timeout_s: float = 60.0, step_s: float = 0.05) -> bool:
    """Poll ``predicate`` until it is true or ``timeout_s`` s passed; returns its last value."""
    deadline = time.monotonic() + timeout_s
    while True:
        if predicate():
            return True
        if time.monotonic() > deadline:
            return bool(predicate())
        time.sleep(step_s)
