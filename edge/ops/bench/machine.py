"""The machine a bench runs on: its facts, the commit, the model file, thermal/power telemetry and
the memory-bandwidth ceiling of the decode rate."""
from __future__ import annotations

import os
import platform
import re
import statistics
import subprocess
import threading
import time
from pathlib import Path

import numpy as np

from drivers.sensors.hwmon import read_power
from drivers.sensors.meminfo import read_meminfo
from drivers.sensors.procinfo import board_model, cpu_model
from drivers.sensors.thermal import read_zones
from edge.governor.governor import sensor_paths
from edge.llm.llamacpp import model_path
from edge.models.manifest import sha256_file
from edge.ops.bench.stats import MIB, rounded
from edge.paths import CHECKOUT

#: MiB of the array copied for the bandwidth ceiling: well above the caches a single thread
#: copies through (RK3588: 3 MiB L3, Rockchip RK3588 datasheet; AMD Zen 3/4 EPYC: 32 MiB L3 per
#: CCD, 96 MiB with 3D V-Cache), so the copy runs from DRAM.
BANDWIDTH_MIB = 256
BANDWIDTH_REPEATS = 5
#: s between temperature/power samples during the LLM runs.
SAMPLE_INTERVAL_S = 0.5
GB = 1e9  # bandwidth unit: 10^9 bytes/s


def machine_info() -> dict:
    """Platform, CPU model (``/proc/cpuinfo``), board model (device tree), cores, RAM (MiB)."""
    mem = read_meminfo(Path("/proc/meminfo"))
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "board_model": board_model(),
        "cores": os.cpu_count(),
        "ram_mib": round(mem.total_bytes / MIB) if mem.total_bytes else None,
    }


def machine_slug(m: dict) -> str:
    """A short file-name part for the machine: ``x86_64-amd-epyc-2c``."""
    cpu = (m.get("board_model") or m.get("cpu_model") or "").lower()
    cpu = re.sub(r"\(r\)|\(tm\)|processor|cpu|@.*", " ", cpu)
    words = [w for w in re.split(r"[^a-z0-9]+", cpu) if w][:3]
    return "-".join([m.get("machine") or "unknown", *words, f"{m.get('cores')}c"])


def load_average() -> tuple[float, float, float] | None:
    """``os.getloadavg()`` (1, 5, 15 min), or None where the platform has none."""
    return os.getloadavg() if hasattr(os, "getloadavg") else None


def git_commit(repo: Path = CHECKOUT) -> dict:
    """``{"commit": full hash or None, "dirty": bool or None}`` (read-only git commands)."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=30)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return {"commit": None, "dirty": None}
        dirty = git("diff", "--quiet", "HEAD", "--").returncode != 0
        return {"commit": head.stdout.strip(), "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def model_info(model: str, models_dir=None) -> dict:
    """Manifest id or path → ``{id, path, bytes, sha256_prefix}``.

    Raises:
        FileNotFoundError: the model is not installed (the message says how to get it).
    """
    p = model_path(model, models_dir)
    return {"id": model, "path": str(p), "bytes": p.stat().st_size, "sha256_prefix": sha256_file(p)[:16]}


class Telemetry:
    """Hottest thermal zone (°C) and hwmon power (W) read at the board config's sensor paths
    (:func:`edge.governor.governor.sensor_paths`); a board without them gives ``None``, never an error.

    :meth:`start`/:meth:`stop` sample every ``interval_s`` in a thread; :attr:`trace` holds
    ``(t_s, temp_c, power_w)`` tuples (``t_s`` from :meth:`start`)."""

    def __init__(self, board, interval_s: float = SAMPLE_INTERVAL_S):
        self.paths = sensor_paths(board)
        self.interval_s = interval_s
        self.trace: list[tuple[float, float | None, float | None]] = []
        self.power_channels: dict[str, list[float]] = {}
        self.problems: set[str] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0

    def temperature_c(self) -> float | None:
        """The hottest readable zone, °C; None without zones."""
        if not self.paths.thermal:
            return None
        zones, probs = read_zones(self.paths.path(self.paths.thermal), self.paths.thermal_zones)
        self.problems.update(probs)
        temps = [z.temp_c for z in zones if z.temp_c is not None]
        return max(temps) if temps else None

    def power_w(self) -> float | None:
        """The highest-reading hwmon power channel, W (usually the board's input rail; channels can
        nest, so they are not summed); None without a power monitor."""
        if not self.paths.hwmon:
            return None
        readings, probs = read_power(self.paths.path(self.paths.hwmon))
        self.problems.update(probs)
        for r in readings:
            self.power_channels.setdefault(r.key, []).append(r.watts)
        return max((r.watts for r in readings), default=None)

    def sample(self) -> tuple[float | None, float | None]:
        """One reading, appended to :attr:`trace`: ``(temp °C, power W)``, either may be None."""
        t, p = self.temperature_c(), self.power_w()
        self.trace.append((round(time.monotonic() - self._t0, 2), t, p))
        return t, p

    def start(self) -> None:
        """Sample every ``interval_s`` in a daemon thread until :meth:`stop`."""
        self._t0 = time.monotonic()
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="bench-telemetry", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def stop(self) -> None:
        """End the sampling thread (waits up to 10 s for it)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def power_summary(self) -> dict | None:
        """``{"mean_w", "max_w", "samples", "channels": {key: mean W}}`` over the samples, or None."""
        ps = [p for _, _, p in self.trace if p is not None]
        if not ps:
            return None
        return {"mean_w": rounded(statistics.fmean(ps), 3), "max_w": rounded(max(ps), 3), "samples": len(ps),
                "channels": {k: rounded(statistics.fmean(v), 3) for k, v in self.power_channels.items()}}


def memory_bandwidth(size_mib: int = BANDWIDTH_MIB, repeats: int = BANDWIDTH_REPEATS, threads: int | None = None) -> dict:
    """Copy bandwidth of this machine with every core copying at once (the decode's weights are read
    by ``llm.threads`` threads; one thread alone does not reach the memory's bandwidth): ``threads``
    (default ``os.cpu_count()``) threads each ``numpy.copyto`` their own slice of a ``size_mib`` MiB
    array, started together (numpy releases the GIL for the copy), best of ``repeats``; bytes moved
    = 2 × size (read + write). Also the one-thread figure, as before. Returns ``{"gb_per_s" (10^9
    bytes/s, all threads), "runs_gb_per_s", "threads", "single_thread_gb_per_s", "array_mib",
    "repeats", "convention"}``.

    Raises:
        ValueError: ``size_mib``, ``repeats`` or ``threads`` below 1.
    """
    threads = threads or os.cpu_count() or 1
    if size_mib < 1 or repeats < 1 or threads < 1:
        raise ValueError(f"memory_bandwidth: size_mib, repeats and threads must be >= 1, got {size_mib}, {repeats}, {threads}")
    src = np.ones(size_mib * MIB, dtype=np.uint8)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # touch every page first: page faults are not bandwidth
    single = []
    for _ in range(repeats):
        t = time.perf_counter()
        np.copyto(dst, src)
        single.append(2 * src.nbytes / (time.perf_counter() - t) / GB)
    cuts = np.linspace(0, src.nbytes, threads + 1, dtype=np.int64)
    runs = []
    for _ in range(repeats):
        start = threading.Barrier(threads + 1)
        workers = [threading.Thread(target=_copy_slice, args=(start, dst[cuts[i]:cuts[i + 1]], src[cuts[i]:cuts[i + 1]]))
                   for i in range(threads)]
        for w in workers:
            w.start()
        start.wait()
        t = time.perf_counter()
        for w in workers:
            w.join()
        runs.append(2 * src.nbytes / (time.perf_counter() - t) / GB)
    del src, dst
    return {"gb_per_s": rounded(max(runs), 3), "runs_gb_per_s": [rounded(x, 3) for x in runs], "threads": threads,
            "single_thread_gb_per_s": rounded(max(single), 3), "array_mib": size_mib, "repeats": repeats,
            "convention": f"numpy.copyto, {threads} threads on slices started together (all cores), best of "
                          f"repeats; bytes moved = 2 x array size (read + write)"}


def _copy_slice(start: threading.Barrier, dst: np.ndarray, src: np.ndarray) -> None:
    start.wait()
    np.copyto(dst, src)


def bandwidth_ceiling(bw: dict, model_bytes: int, ours_tokens_per_s: float | None,
                      plain_tokens_per_s: float | None) -> dict:
    """``bw`` (:func:`memory_bandwidth`) plus the decode ceiling of a ``model_bytes`` GGUF file:
    ``ceiling_tokens_per_s = bandwidth ÷ file bytes`` and the fraction of it each side's decode
    rate (tokens/s) reaches; a new dict."""
    ceiling = bw["gb_per_s"] * GB / model_bytes
    return {**bw, "model_bytes": model_bytes, "ceiling_tokens_per_s": rounded(ceiling),
            "decode_fraction_of_ceiling": rounded((ours_tokens_per_s or 0) / ceiling, 3),
            "plain_decode_fraction_of_ceiling": rounded((plain_tokens_per_s or 0) / ceiling, 3)}
