"""Starting ``edge run`` live (no ``--input``) as a child process and reading its output lines."""
from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.helpers import INVENTORY, REPO


def _pump(stream, q: queue.Queue) -> None:
    for line in iter(stream.readline, ""):
        q.put(line)
    q.put(None)


def start_edge_run(cfg: Path, env: dict, out_dir: Path) -> tuple[subprocess.Popen, queue.Queue, queue.Queue]:
    """``edge run --json --config CFG --inventory <shared inventory> --output-dir OUT`` in ``env``;
    returns the process and queues of its stdout and stderr lines (None at EOF)."""
    proc = subprocess.Popen([sys.executable, "-m", "edge.cli", "run", "--json", "--config", str(cfg),
                             "--inventory", str(INVENTORY), "--output-dir", str(out_dir)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out_q: queue.Queue = queue.Queue()
    err_q: queue.Queue = queue.Queue()
    threading.Thread(target=_pump, args=(proc.stdout, out_q), daemon=True).start()
    threading.Thread(target=_pump, args=(proc.stderr, err_q), daemon=True).start()
    return proc, out_q, err_q


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 30) -> None:
    """Send ``sig`` and wait for the process; kill it when it does not end within ``timeout`` s."""
    proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


def lines_until(q: queue.Queue, pred, timeout: float) -> list[str]:
    """Lines from ``q`` until one satisfies ``pred``; fails when the process ends first or after
    ``timeout`` s (hang detection only)."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = q.get(timeout=1)
        except queue.Empty:
            continue
        assert line is not None, "the service ended early:\n" + "".join(seen)
        seen.append(line)
        if pred(line):
            return seen
    raise AssertionError("timed out waiting; saw:\n" + "".join(seen))
