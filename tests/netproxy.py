"""A TCP proxy on loopback for network faults: ``pass`` forwards, ``stall`` holds every connection
open but forwards nothing (a switch dropping packets: the client's kernel still gets ACKs from
ours), ``drop`` closes every connection and refuses new ones (a cable pulled, a host gone)."""
from __future__ import annotations

import select
import socket
import threading

from tests.pgserver import free_port


class Proxy:
    """Forwards 127.0.0.1:``port`` to 127.0.0.1:``target``; :meth:`set` switches the mode."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = free_port()
        self.mode = "pass"
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._listener.settimeout(0.1)
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def set(self, mode: str) -> None:
        """``pass``, ``stall`` or ``drop`` (closes what is open now)."""
        assert mode in ("pass", "stall", "drop")
        self.mode = mode
        if mode == "drop":
            with self._lock:
                for s in self._conns:
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    s.close()
                self._conns.clear()

    def close(self) -> None:
        """Stop accepting and close every connection."""
        self._stop.set()
        self.set("drop")
        self._thread.join(timeout=5)
        self._listener.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            if self.mode == "drop":
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        peers = {a: b, b: a}
        try:
            while not self._stop.is_set():
                if self.mode == "stall":
                    self._stop.wait(0.05)
                    continue
                ready, _, _ = select.select([a, b], [], [], 0.05)
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    peers[s].sendall(data)
        except (OSError, ValueError):
            return
        finally:
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass
