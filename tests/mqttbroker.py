"""A real Mosquitto (Debian's ``mosquitto`` package) for tests: a generated config in a temporary
directory, its own loopback port, no persistence; optionally one user with a password, optionally
TLS only."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tests.pgserver import free_port

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def available() -> bool:
    """True if the mosquitto broker is installed."""
    return Path(MOSQUITTO).is_file()


class Broker:
    """One broker on 127.0.0.1:``port``; :meth:`stop` ends it and removes its folder.

    ``tls``: (CA certificate, server certificate, its private key), PEM files: the one listener
    then speaks TLS only (a plain-text client is cut off)."""

    def __init__(self, user: tuple[str, str] | None = None, tls: tuple[Path, Path, Path] | None = None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="edge-mqtt-"))
        os.chmod(self.root, 0o755)
        self.port = free_port()
        lines = [f"listener {self.port} 127.0.0.1", "persistence false", "log_dest stderr"]
        if tls:
            lines += [f"{k} {p}" for k, p in zip(("cafile", "certfile", "keyfile"), tls, strict=True)]
        if os.geteuid() == 0:
            lines.append("user root")  # no privilege drop: the files here are root's
        if user:
            pw = self.root / "passwd"
            subprocess.run(["mosquitto_passwd", "-b", "-c", str(pw), *user], check=True, timeout=30,
                           capture_output=True)
            lines += ["allow_anonymous false", f"password_file {pw}"]
        else:
            lines.append("allow_anonymous true")
        self.config = self.root / "mosquitto.conf"
        self.config.write_text("\n".join(lines) + "\n")
        self.log = (self.root / "broker.log").open("wb")
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.config)], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:  # bounded wait for the listener
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"mosquitto did not start: {(self.root / 'broker.log').read_text()}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        """Terminate the broker (bounded) and remove its folder."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)
