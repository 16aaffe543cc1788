"""``edge bench``: speed, memory and heat of the LLM and of the voice loop, in one run (issue 8).

    edge bench [--model NAME] [--runs N] [--max-tokens N] [--json] [--out DIR] [--no-loop]
               [--sessions DIR] [--llm-turns N] [--config FILE] [--board NAME]

What one run measures, and how:

1. **LLM, our engine path** (:class:`edge.llm.llamacpp.LlamaCppEngine` through
   :func:`edge.llm.base.generate`): time to first token (TTFT, ms, from the call to the first
   sampled token, prompt templating and prefill included), decode rate (tokens/s after the first
   token), peak resident memory (``VmHWM``, MiB), device temperature before and after (the
   hottest thermal zone, °C; ``null`` without zones), power (W, where a hwmon ``power*_input``
   exists; ``null`` otherwise). At least :data:`MIN_RUNS` runs are asked for; the headline decode
   rate is the **median of the second half** of the runs, because boards throttle.
2. **Side by side**, in the same run, same model file, prompt, ``n_ctx``, threads, ``max_tokens``,
   sampling (temperature, seed, top-k/top-p/min-p, repeat penalty): plain llama-cpp-python
   (``Llama(...).create_chat_completion(stream=True)``) against our engine path. Each side runs in
   its **own child process** (so each ``VmHWM`` is that side's alone), both loaded at once, and the
   runs are interleaved A B A B … so machine noise hits both alike. Every figure is also given as
   a ratio ours ÷ plain. Run *i* of both sides asks question ``PROMPTS[i % len(PROMPTS)]`` after
   the same system prompt: the first run of each side is a cold prefill, later runs reuse the
   system prompt's KV cache (as a device does from its second question on).
3. **Memory-bandwidth ceiling**: a ``numpy.copyto`` of a :data:`BANDWIDTH_MIB` MiB array, best of
   :data:`BANDWIDTH_REPEATS`; bytes moved are counted as **2 × size** (read + write, the STREAM
   "copy" convention), in GB/s (10^9 bytes/s). ``ceiling tokens/s = bandwidth ÷ GGUF file bytes``:
   the decode rate if every token streamed all weights from memory once (an upper bound: the
   token-embedding table is read one row per token, and a single-threaded copy may under-state
   what all cores together can pull). The fraction of it that decode reaches is reported.
4. **Throttling** is flagged when the second half's median decode rate is more than
   :data:`THROTTLE_DROP` below the first half's (competing load on the machine looks the same:
   the result keeps the load average and temperatures to tell them apart).
5. **Voice loop** per stage over the shared sessions (``../shared/audio/sessions``, one fresh
   store per session, models loaded once): wake-word CPU time per 80 ms frame
   (``time.process_time`` around :meth:`edge.stages.wake.WakeWord.process`, all threads of the process),
   recognition real-time factor (:attr:`edge.stages.asr.base.Recognition.real_time_factor`), and the
   pipeline's own ``turn_end`` latencies: endpoint → transcript, transcript → intent, intent →
   first audio (the reply WAV written by TTS; ``intent_to_reply_audio_ms``), total — for the
   grammar path and the LLM path separately (by the intent's ``source``). The LLM path gets
   ``--llm-turns`` more turns from text through :meth:`edge.stages.nlu.understand.Understanding.understand`
   (no audio: they add transcript → intent and intent → first audio only). The whole-loop
   real-time factor per session (wall ÷ audio time, formerly ``bench/loop_rtf.py``) is kept too.

Results: ``bench/results/bench-<date>T<HHMM>-<machine>-<model>.json`` and a ``.png`` chart of the
same name. The JSON holds the machine (platform, CPU model, cores, RAM), the model (id, file,
bytes, SHA-256 prefix), the commit (``git rev-parse``), the settings and every raw per-run figure.
"""
from __future__ import annotations

import json
import os
import platform
import re
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from edge.paths import CHECKOUT
from edge.errors import EdgeError

#: Issue 8: "at least 10 runs, the second half reported".
MIN_RUNS = 10
#: Issue 8: throttling is flagged when the second half decodes > 15 % slower than the first.
THROTTLE_DROP = 0.15
#: MiB of the array copied for the bandwidth ceiling: well above the caches a single thread
#: copies through (RK3588: 3 MiB L3, Rockchip RK3588 datasheet; AMD Zen 3/4 EPYC: 32 MiB L3 per
#: CCD, 96 MiB with 3D V-Cache), so the copy runs from DRAM.
BANDWIDTH_MIB = 256
BANDWIDTH_REPEATS = 5
#: Answer budget of the LLM runs, in tokens: long enough for a steady decode rate.
DEFAULT_MAX_TOKENS = 128
#: Extra LLM-path turns from text for the voice-loop figures (the sessions have one LLM turn).
DEFAULT_LLM_TURNS = 3
#: s between temperature/power samples during the LLM runs.
SAMPLE_INTERVAL_S = 0.5
#: s a worker may take for one load or one generation before it counts as hung (a loaded
#: 2-core machine decodes SmolLM2-135M at ~1 token/s at worst here).
WORKER_TIMEOUT_S = 900.0
FRAME_MS = 80  # edge.loop.pipeline.FRAME_MS: one frame is 1280 samples at 16 kHz

MIB = 1024 * 1024
GB = 1e9  # bandwidth unit: 10^9 bytes/s

REPO = CHECKOUT
SHARED = REPO.parent / "shared"
DEFAULT_SESSIONS = SHARED / "audio" / "sessions"
DEFAULT_OUT = REPO / "bench" / "results"

#: The system prompt of every LLM run (not the product's: that one asks for two short sentences,
#: which ends generation before the decode rate settles).
BENCH_SYSTEM = ("You are the helpful assistant of a workshop stock room. You explain things in detail, "
                "in plain words, and you like telling stories about tools and the people who use them.")
#: One question per run (run i asks PROMPTS[i % len]); each asks for a long answer.
PROMPTS = (
    "Tell me a long story about a robot who works in a hardware store.",
    "Explain in detail how a cordless drill works, from the battery to the chuck.",
    "Write a long story about a lost box of M8 bolts and the worker who finds it.",
    "Describe in detail how to organise a workshop stock room so that nothing gets lost.",
    "Tell me a long story about a torque wrench that wanted to become a hammer.",
    "Explain in detail why workers wear safety goggles and gloves, with examples.",
)
#: Questions for the extra LLM-path turns (the grammar path does not take them).
LLM_TURN_TEXTS = (
    "tell me a fun fact about screwdrivers",
    "what is a torque wrench used for",
    "why do we wear safety goggles in the workshop",
    "tell me a short joke about spanners",
    "what is the difference between a nut and a bolt",
)
STAGES = ("asr_rtf", "endpoint_to_transcript_ms", "transcript_to_intent_ms", "intent_to_first_audio_ms", "total_ms")


class BenchError(EdgeError):
    """A benchmark step failed (a worker crashed or hung); the message says which and why."""


# ================================================================================================
# small statistics


def median(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return float(statistics.median(xs)) if xs else None


def percentile(xs, q: float) -> float | None:
    """The ``q`` (0..1) quantile by linear interpolation; None for no values."""
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def halves(xs: list) -> tuple[list, list]:
    """First and second half of ``xs`` (the second gets the middle element of an odd count)."""
    n = len(xs) // 2
    return xs[:n], xs[n:]


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def _r(x: float | None, nd: int = 2) -> float | None:
    return None if x is None else round(float(x), nd)


def throttle_check(rates: list[float], drop: float = THROTTLE_DROP) -> dict:
    """``rates`` (tokens/s per run, in order) → ``{first_half_tokens_per_s, second_half_tokens_per_s,
    drop_fraction, throttled}``: throttled when the second half's median is more than ``drop``
    (0..1) below the first half's. Needs at least 2 rates, else ``throttled`` is None."""
    first, second = halves([r for r in rates if r])
    if not first or not second:
        return {"first_half_tokens_per_s": None, "second_half_tokens_per_s": None, "drop_fraction": None,
                "throttled": None}
    a, b = median(first), median(second)
    d = 1.0 - b / a if a else None
    return {"first_half_tokens_per_s": _r(a), "second_half_tokens_per_s": _r(b), "drop_fraction": _r(d, 3),
            "throttled": bool(d is not None and d > drop)}


# ================================================================================================
# machine, model, commit, telemetry


def machine_info() -> dict:
    """Platform, CPU model (``/proc/cpuinfo``), board model (device tree), cores, RAM (MiB)."""
    from drivers.sensors.meminfo import read_meminfo
    from drivers.sensors.procinfo import board_model, cpu_model

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


def git_commit(repo: Path = REPO) -> dict:
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
    from edge.llm.llamacpp import model_path
    from edge.models.manifest import sha256_file

    p = model_path(model, models_dir)
    return {"id": model, "path": str(p), "bytes": p.stat().st_size, "sha256_prefix": sha256_file(p)[:16]}


class Telemetry:
    """Hottest thermal zone (°C) and hwmon power (W) read at the board config's sensor paths
    (:func:`edge.governor.governor.sensor_paths`); a board without them gives ``None``, never an error.

    :meth:`start`/:meth:`stop` sample every ``interval_s`` in a thread; :attr:`trace` holds
    ``(t_s, temp_c, power_w)`` tuples (``t_s`` from :meth:`start`)."""

    def __init__(self, board, interval_s: float = SAMPLE_INTERVAL_S):
        from edge.governor.governor import sensor_paths

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
        from drivers.sensors.thermal import read_zones

        if not self.paths.thermal:
            return None
        zones, probs = read_zones(self.paths.path(self.paths.thermal), self.paths.thermal_zones)
        self.problems.update(probs)
        temps = [z.temp_c for z in zones if z.temp_c is not None]
        return max(temps) if temps else None

    def power_w(self) -> float | None:
        """The highest-reading hwmon power channel, W (usually the board's input rail; channels can
        nest, so they are not summed); None without a power monitor."""
        from drivers.sensors.hwmon import read_power

        if not self.paths.hwmon:
            return None
        readings, probs = read_power(self.paths.path(self.paths.hwmon))
        self.problems.update(probs)
        for r in readings:
            self.power_channels.setdefault(r.key, []).append(r.watts)
        return max((r.watts for r in readings), default=None)

    def sample(self) -> tuple[float | None, float | None]:
        t, p = self.temperature_c(), self.power_w()
        self.trace.append((round(time.monotonic() - self._t0, 2), t, p))
        return t, p

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="bench-telemetry", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def power_summary(self) -> dict | None:
        """``{"mean_w", "max_w", "samples", "channels": {key: mean W}}`` over the samples, or None."""
        ps = [p for _, _, p in self.trace if p is not None]
        if not ps:
            return None
        return {"mean_w": _r(statistics.fmean(ps), 3), "max_w": _r(max(ps), 3), "samples": len(ps),
                "channels": {k: _r(statistics.fmean(v), 3) for k, v in self.power_channels.items()}}


def memory_bandwidth(size_mib: int = BANDWIDTH_MIB, repeats: int = BANDWIDTH_REPEATS) -> dict:
    """Copy bandwidth of this machine: ``numpy.copyto`` of a ``size_mib`` MiB array, best of
    ``repeats``; bytes moved = 2 × size (read + write). Returns ``{"gb_per_s" (10^9 bytes/s),
    "runs_gb_per_s", "array_mib", "repeats", "convention"}``.

    Raises:
        ValueError: ``size_mib`` or ``repeats`` below 1.
    """
    import numpy as np

    if size_mib < 1 or repeats < 1:
        raise ValueError(f"memory_bandwidth: size_mib and repeats must be >= 1, got {size_mib}, {repeats}")
    src = np.ones(size_mib * MIB, dtype=np.uint8)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # touch every page first: page faults are not bandwidth
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        np.copyto(dst, src)
        dt = time.perf_counter() - t
        runs.append(2 * src.nbytes / dt / GB)
    del src, dst
    return {"gb_per_s": _r(max(runs), 3), "runs_gb_per_s": [_r(x, 3) for x in runs], "array_mib": size_mib,
            "repeats": repeats,
            "convention": "numpy.copyto, single thread, best of repeats; bytes moved = 2 x array size (read + write)"}


# ================================================================================================
# LLM workers: one child process per side


def _worker_main(spec_json: str) -> None:
    """Child process: load one side, then answer one JSON line per request line on stdin.

    Requests: ``{"messages": [...]}`` → one generation's figures; ``{"quit": true}`` → exit.
    stdout carries only the protocol; llama.cpp's own prints go to stderr.
    """
    from drivers.sensors.procinfo import peak_rss_bytes

    spec = json.loads(spec_json)
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything a C library prints to stdout lands on stderr
    side = spec["side"]
    t0 = time.perf_counter()
    if side == "ours":
        from edge.llm.base import GenerationRequest, generate
        from edge.llm.llamacpp import LlamaCppEngine

        engine = LlamaCppEngine(spec["model"], n_ctx=spec["n_ctx"], threads=spec["threads"], seed=spec["seed"],
                                n_batch=spec["n_batch"])

        def run(messages):
            text, st = generate(engine, GenerationRequest(messages, max_tokens=spec["max_tokens"],
                                                          temperature=spec["temperature"]))
            return {"ttft_ms": st.ttft_ms, "decode_tokens_per_s": st.tokens_per_s,
                    "completion_tokens": st.completion_tokens, "prompt_tokens": st.prompt_tokens,
                    "total_ms": st.total_ms, "finish_reason": st.finish_reason,
                    "prefix_cache": st.extra.get("prefix_cache"), "text_chars": len(text)}
    elif side == "plain":
        from llama_cpp import Llama

        from edge.llm.llamacpp import MIN_P, REPEAT_PENALTY, TOP_K, TOP_P

        llm = Llama(model_path=spec["model"], n_ctx=spec["n_ctx"], n_threads=spec["threads"],
                    n_threads_batch=spec["threads"], n_batch=spec["n_batch"], seed=spec["seed"], use_mmap=True,
                    verbose=False)

        def run(messages):
            t = time.perf_counter()
            first = None
            parts: list[str] = []
            finish = None
            for chunk in llm.create_chat_completion(
                    messages=messages, stream=True, max_tokens=spec["max_tokens"], temperature=spec["temperature"],
                    top_k=TOP_K, top_p=TOP_P, min_p=MIN_P, repeat_penalty=REPEAT_PENALTY, seed=spec["seed"]):
                choice = chunk["choices"][0]
                piece = choice["delta"].get("content")
                if piece:
                    if first is None:
                        first = time.perf_counter()
                    parts.append(piece)
                finish = choice.get("finish_reason") or finish
            end = time.perf_counter()
            text = "".join(parts)
            # the stream gives text, not token ids: count by re-tokenizing the answer
            n = len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else 0
            return {"ttft_ms": 1000 * ((first or end) - t),
                    "decode_tokens_per_s": (n - 1) / (end - first) if first and n > 1 and end > first else 0.0,
                    "completion_tokens": n, "prompt_tokens": None, "total_ms": 1000 * (end - t),
                    "finish_reason": finish, "prefix_cache": None, "text_chars": len(text)}
    else:
        raise SystemExit(f"unknown side {side!r}")
    load_ms = 1000 * (time.perf_counter() - t0)
    proto.write(json.dumps({"ready": True, "load_ms": load_ms, "peak_rss_bytes": peak_rss_bytes(),
                            "pid": os.getpid()}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("quit"):
            break
        res = run(req["messages"])
        res["peak_rss_bytes"] = peak_rss_bytes()
        proto.write(json.dumps(res) + "\n")
    proto.write(json.dumps({"bye": True, "peak_rss_bytes": peak_rss_bytes()}) + "\n")


class _Worker:
    """One side in a child process (see :func:`_worker_main`)."""

    def __init__(self, side: str, spec: dict, timeout_s: float = WORKER_TIMEOUT_S):
        self.side = side
        self.timeout_s = timeout_s
        self._err = tempfile.TemporaryFile(mode="w+")
        code = "import sys; from edge.ops.bench import _worker_main; _worker_main(sys.argv[1])"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen([sys.executable, "-c", code, json.dumps({**spec, "side": side})],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, text=True,
                                     env=env)
        self.ready = self._read("load")

    def _stderr_tail(self) -> str:
        self._err.seek(0)
        lines = [ln for ln in self._err.read().splitlines() if ln.strip()]
        return " | ".join(lines[-5:])

    def _read(self, what: str) -> dict:
        r, _, _ = select.select([self.proc.stdout], [], [], self.timeout_s)
        line = self.proc.stdout.readline() if r else ""
        if not line:
            if not r:
                self.kill()
                raise BenchError(f"{self.side} LLM worker: no answer to {what} within {self.timeout_s:.0f} s (hung)")
            code = self.proc.wait(timeout=30)
            raise BenchError(f"{self.side} LLM worker exited with code {code} during {what}: {self._stderr_tail()}")
        return json.loads(line)

    def run(self, messages: list[dict]) -> dict:
        try:
            self.proc.stdin.write(json.dumps({"messages": messages}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:  # the child is gone: _read reports its exit code and stderr
            pass
        return self._read("a generation")

    def close(self) -> dict:
        try:
            self.proc.stdin.write(json.dumps({"quit": True}) + "\n")
            self.proc.stdin.flush()
            bye = self._read("quit")
            self.proc.wait(timeout=60)
            return bye
        finally:
            self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        if not self._err.closed:
            self._err.close()


def _side_summary(ready: dict, runs: list[dict], bye: dict) -> dict:
    rates = [r["decode_tokens_per_s"] for r in runs]
    first, second = halves(rates)
    peaks = [x for x in [ready.get("peak_rss_bytes"), bye.get("peak_rss_bytes"),
                         *(r.get("peak_rss_bytes") for r in runs)] if x]
    return {
        "load_ms": _r(ready["load_ms"], 1),
        "ttft_ms": _r(median(r["ttft_ms"] for r in runs), 1),
        "ttft_cold_ms": _r(runs[0]["ttft_ms"], 1) if runs else None,
        "ttft_warm_ms": _r(median(r["ttft_ms"] for r in runs[1:]), 1),
        "decode_tokens_per_s": _r(median(second)),
        "decode_tokens_per_s_first_half": _r(median(first)),
        "completion_tokens": _r(median(r["completion_tokens"] for r in runs), 1),
        "peak_rss_mib": _r(max(peaks) / MIB, 1) if peaks else None,
        "runs": [{k: (_r(v, 3) if isinstance(v, float) else v) for k, v in r.items()} for r in runs],
    }


def measure_llm(model: dict, n_ctx: int, threads: int, max_tokens: int, runs: int, temperature: float,
                seed: int, telemetry: Telemetry, log: Callable[[str], None] = lambda s: None,
                n_batch: int = 512) -> dict:
    """Our engine path against plain llama-cpp-python, interleaved, each in its own child process.

    Args:
        model: :func:`model_info` of the GGUF file.
        n_ctx: context window, tokens. threads: CPU threads of each side. max_tokens: per run.
        runs: generations per side (>= 2; issue 8 asks for >= :data:`MIN_RUNS`).
        temperature, seed: sampling, the same for both sides.
        telemetry: sampled during the runs for temperature and power.
    Returns:
        ``{"settings", "ours", "plain", "ratio", "temperature_c", "power_w", "throttling", "trace"}``.
    Raises:
        ValueError: ``runs`` < 2.
        BenchError: a worker failed or hung.
    """
    if runs < 2:
        raise ValueError(f"--runs must be at least 2 (the second half is reported; issue 8 asks for {MIN_RUNS}), got {runs}")
    spec = {"model": model["path"], "n_ctx": n_ctx, "threads": threads, "max_tokens": max_tokens,
            "temperature": temperature, "seed": seed, "n_batch": min(n_batch, n_ctx)}
    temp_before = telemetry.temperature_c()
    power_before = telemetry.power_w()
    telemetry.start()
    workers: dict[str, _Worker] = {}
    results: dict[str, list[dict]] = {"ours": [], "plain": []}
    try:
        for side in ("ours", "plain"):  # loaded one after the other: load times are not shared
            log(f"loading the {side} side in a child process")
            workers[side] = _Worker(side, spec)
        for i in range(runs):
            messages = [{"role": "system", "content": BENCH_SYSTEM},
                        {"role": "user", "content": PROMPTS[i % len(PROMPTS)]}]
            for side in ("ours", "plain"):
                res = workers[side].run(messages)
                res["run"] = i
                results[side].append(res)
            log(f"run {i + 1}/{runs}: ours {results['ours'][-1]['decode_tokens_per_s']:.1f} tok/s, "
                f"plain {results['plain'][-1]['decode_tokens_per_s']:.1f} tok/s")
        byes = {side: w.close() for side, w in workers.items()}
    finally:
        for w in workers.values():
            w.kill()
        telemetry.stop()
    temp_after = telemetry.temperature_c()
    power_after = telemetry.power_w()
    sides = {s: _side_summary(workers[s].ready, results[s], byes[s]) for s in ("ours", "plain")}
    figures = ("load_ms", "ttft_ms", "ttft_cold_ms", "ttft_warm_ms", "decode_tokens_per_s", "completion_tokens",
               "peak_rss_mib")
    temps = [t for _, t, _ in telemetry.trace if t is not None]
    power = telemetry.power_summary()
    if power is not None:
        power["before_w"], power["after_w"] = _r(power_before, 3), _r(power_after, 3)
        tps = sides["ours"]["decode_tokens_per_s"]
        power["joules_per_token"] = _r(power["mean_w"] / tps, 4) if tps else None
    return {
        "settings": {**{k: v for k, v in spec.items() if k != "model"}, "runs": runs,
                     "order": "interleaved: ours, plain, ours, plain, ...", "system_prompt": BENCH_SYSTEM,
                     "prompts": list(PROMPTS)},
        "ours": sides["ours"],
        "plain": sides["plain"],
        "ratio": {f: ratio(sides["ours"][f], sides["plain"][f]) for f in figures},
        "temperature_c": {"before": _r(temp_before, 1), "after": _r(temp_after, 1),
                          "max_during": _r(max(temps), 1) if temps else None},
        "power_w": power,
        "throttling": {"ours": throttle_check([r["decode_tokens_per_s"] for r in results["ours"]]),
                       "plain": throttle_check([r["decode_tokens_per_s"] for r in results["plain"]]),
                       "threshold": THROTTLE_DROP},
        "trace": [list(t) for t in telemetry.trace],
    }


# ================================================================================================
# voice loop


class _TimedWake:
    """Wraps a :class:`edge.stages.wake.WakeWord`: CPU time (``time.process_time``, s) of every
    :meth:`process` call is appended to :attr:`cpu_s`; everything else is the wrapped object's."""

    def __init__(self, wake):
        self._wake = wake
        self.cpu_s: list[float] = []

    def process(self, frame):
        c = time.process_time()
        out = self._wake.process(frame)
        self.cpu_s.append(time.process_time() - c)
        return out

    def __getattr__(self, name):
        return getattr(self._wake, name)


class _RecordingAsr:
    """Wraps a recognizer; :attr:`last` is the :class:`edge.stages.asr.base.Recognition` of the last
    :meth:`finish`."""

    def __init__(self, asr):
        self._asr = asr
        self.last = None

    def finish(self):
        self.last = self._asr.finish()
        return self.last

    def __getattr__(self, name):
        return getattr(self._asr, name)


def _gen_figures(stats) -> dict:
    if stats is None:
        return {}
    return {"llm_ttft_ms": _r(stats.ttft_ms, 1), "llm_tokens_per_s": _r(stats.tokens_per_s),
            "llm_completion_tokens": stats.completion_tokens}


def _path_summary(turns: list[dict]) -> dict:
    out = {}
    for k in STAGES:
        xs = [t[k] for t in turns if t.get(k) is not None]
        out[k] = {"median": _r(median(xs), 3 if k == "asr_rtf" else 1), "mean": _r(statistics.fmean(xs), 3 if k == "asr_rtf" else 1) if xs else None,
                  "n": len(xs)}
    out["turns"] = len(turns)
    return out


def check_sessions(sessions_dir: Path) -> tuple[list[Path], Path]:
    """The session WAVs (sorted) and ``inventory.csv`` of ``sessions_dir``.

    Raises:
        FileNotFoundError: no WAV or no inventory; the message names the folder and the fix.
    """
    sessions_dir = Path(sessions_dir)
    wavs = sorted(sessions_dir.glob("*.wav"))
    inventory = sessions_dir / "inventory.csv"
    if not wavs or not inventory.is_file():
        raise FileNotFoundError(
            f"{sessions_dir}: needs session *.wav files and inventory.csv (found {len(wavs)} WAVs, inventory "
            f"{'present' if inventory.is_file() else 'missing'}); pass the shared sessions folder with --sessions DIR "
            f"or skip the voice loop with --no-loop")
    return wavs, inventory


def measure_loop(settings, sessions_dir: Path, llm_turns: int = DEFAULT_LLM_TURNS,
                 log: Callable[[str], None] = lambda s: None) -> dict:
    """The voice loop per stage over every ``*.wav`` of ``sessions_dir`` (with its ``inventory.csv``).

    Args:
        settings: validated :class:`edge.config.Settings`; ``store.path`` and ``output_dir`` are
            replaced by temporary ones.
        sessions_dir: folder of 16 kHz session WAVs and ``inventory.csv``.
        llm_turns: extra LLM-path turns from text (:data:`LLM_TURN_TEXTS`), 0 for none.
    Returns:
        ``{"sessions", "turns", "wake_cpu_ms_per_frame", "paths": {"grammar", "llm"}, "rtf_overall", ...}``.
    Raises:
        FileNotFoundError: no sessions or no ``inventory.csv`` (names ``--sessions``).
    """
    from drivers.audio import wav_frames
    from drivers.sensors.procinfo import peak_rss_bytes
    from edge.stages import dialog
    from edge import events as ev
    from edge.loop.build import build_stages, run_frames
    from edge.stages.store import Store

    sessions_dir = Path(sessions_dir)
    wavs, inventory = check_sessions(sessions_dir)
    if not 0 <= llm_turns <= len(LLM_TURN_TEXTS):
        raise ValueError(f"--llm-turns must be 0..{len(LLM_TURN_TEXTS)}, got {llm_turns}")
    tmp = Path(tempfile.mkdtemp(prefix="edge-bench-"))
    settings = settings.model_copy(update={
        "store": settings.store.model_copy(update={"path": tmp / "boot.db"}), "output_dir": tmp})
    boot = Store(tmp / "boot.db")
    boot.import_csv(inventory)
    t = time.perf_counter()
    log("loading the voice loop's models")
    stages = build_stages(settings, boot)
    load_s = time.perf_counter() - t
    wake = _TimedWake(stages.wake)
    asr = _RecordingAsr(stages.asr)
    stages.wake, stages.asr = wake, asr
    und = stages.understanding
    sessions, turns = [], []
    for wav in wavs:
        frames = list(wav_frames(wav))
        audio_s = len(frames) * FRAME_MS / 1000
        store = Store(tmp / f"{wav.stem}.db")
        store.import_csv(inventory)
        stages.store = store
        stages.wake.flush()
        n0 = len(wake.cpu_s)
        per_turn: dict[str, dict] = {}

        def emit(e, per_turn=per_turn, session=wav.stem):
            row = per_turn.setdefault(e.turn_id, {"session": session, "origin": "audio"})
            if isinstance(e, ev.Transcript) and asr.last is not None:
                row["asr_rtf"] = _r(asr.last.real_time_factor, 3)
                row["text"] = e.text
            elif isinstance(e, ev.IntentEvent):
                row["source"], row["intent"] = e.source, e.intent
                if e.source == "llm":
                    row.update(_gen_figures(und.last_generation))
            elif isinstance(e, ev.TurnEnd):
                lat = e.latency_ms
                row.update({"endpoint_to_transcript_ms": lat.get("endpoint_to_transcript_ms"),
                            "transcript_to_intent_ms": lat.get("transcript_to_intent_ms"),
                            "intent_to_first_audio_ms": lat.get("intent_to_reply_audio_ms"),
                            "total_ms": lat.get("total_ms")})

        w0, c0 = time.perf_counter(), time.process_time()
        run_frames(frames, stages, settings, tmp, emit)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        done = [r for r in per_turn.values() if r.get("source") and r.get("total_ms") is not None]
        turns.extend(done)
        cpu_frames = wake.cpu_s[n0:]
        sessions.append({"session": wav.stem, "audio_s": round(audio_s, 3), "wall_s": round(wall, 3),
                         "cpu_s": round(cpu, 3), "rtf": round(wall / audio_s, 3) if audio_s else None,
                         "frames": len(cpu_frames),
                         "wake_cpu_ms_per_frame": _r(1000 * statistics.fmean(cpu_frames), 3) if cpu_frames else None,
                         "turns": len(done)})
        store.close()
        log(f"session {wav.stem}: RTF {sessions[-1]['rtf']}, {len(done)} turn(s)")
    if und.llm is not None:
        store = Store(tmp / "text-turns.db")
        store.import_csv(inventory)
        for i, text in enumerate(LLM_TURN_TEXTS[:llm_turns]):
            t1 = time.perf_counter()
            intent = und.understand(text)
            t2 = time.perf_counter()
            if intent is None:
                continue
            outcome = dialog.act(intent, store, text, f"bench-text-{i}")
            t3 = time.perf_counter()
            stages.tts.synthesize(outcome.text, tmp / f"text-{i}.wav")
            t4 = time.perf_counter()
            row = {"session": None, "origin": "text", "text": text, "source": intent.source,
                   "intent": intent.intent, "asr_rtf": None, "endpoint_to_transcript_ms": None,
                   "transcript_to_intent_ms": round(1000 * (t2 - t1), 1),
                   "intent_to_first_audio_ms": round(1000 * (t4 - t3), 1), "total_ms": None}
            if intent.source == "llm":
                row.update(_gen_figures(und.last_generation))
            turns.append(row)
            log(f"text turn {text!r}: {intent.source}, {row['transcript_to_intent_ms']} ms to intent")
        store.close()
    peak = peak_rss_bytes()
    close = getattr(und.llm, "close", None)
    if close:
        close()
    boot.close()
    cpu_ms = [1000 * c for c in wake.cpu_s]
    total_audio = sum(s["audio_s"] for s in sessions)
    total_wall = sum(s["wall_s"] for s in sessions)
    paths = {p: _path_summary([t for t in turns if t.get("source") == p]) for p in ("grammar", "llm")}
    return {
        "sessions_dir": str(sessions_dir),
        "asr": settings.asr.engine, "llm": settings.llm.model if settings.llm.engine != "none" else None,
        "model_load_s": round(load_s, 2),
        "total_audio_s": round(total_audio, 2), "total_wall_s": round(total_wall, 2),
        "rtf_overall": round(total_wall / total_audio, 3) if total_audio else None,
        "wake_cpu_ms_per_frame": {
            "mean": _r(statistics.fmean(cpu_ms), 3) if cpu_ms else None, "p50": _r(percentile(cpu_ms, 0.5), 3),
            "p95": _r(percentile(cpu_ms, 0.95), 3), "frames": len(cpu_ms),
            "core_fraction": _r(statistics.fmean(cpu_ms) / FRAME_MS, 4) if cpu_ms else None,
            "note": "process CPU time (all threads) per 80 ms frame; core_fraction = mean / 80 ms"},
        "paths": paths,
        "peak_rss_mib": _r(peak / MIB, 1) if peak else None,
        "sessions": sessions,
        "turns": turns,
    }


# ================================================================================================
# the whole run, the files, the chart


def run(settings, *, model: str | None = None, runs: int = MIN_RUNS, max_tokens: int = DEFAULT_MAX_TOKENS,
        loop: bool = True, sessions_dir: Path = DEFAULT_SESSIONS, llm_turns: int = DEFAULT_LLM_TURNS,
        bandwidth_mib: int = BANDWIDTH_MIB, log: Callable[[str], None] = lambda s: None) -> dict:
    """Every figure of issue 8 in one result dict (see the module doc); nothing written.

    Raises:
        FileNotFoundError: the model or the sessions are missing.
        ValueError: ``runs`` < 2 or a bad ``llm_turns``.
        BenchError: an LLM worker failed or hung.
    """
    from importlib.metadata import PackageNotFoundError, version

    started = time.time()
    l = settings.llm
    model_id = model or l.model
    minfo = model_info(model_id, getattr(getattr(settings, "models", None), "dir", None))
    if loop:
        check_sessions(sessions_dir)  # before minutes of LLM runs
        if not 0 <= llm_turns <= len(LLM_TURN_TEXTS):
            raise ValueError(f"--llm-turns must be 0..{len(LLM_TURN_TEXTS)}, got {llm_turns}")
    try:
        llama_version = version("llama_cpp_python")
    except PackageNotFoundError:
        llama_version = None
    machine = machine_info()
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    telemetry = Telemetry(settings.board)
    log(f"LLM: {model_id}, {runs} runs per side, {max_tokens} tokens, n_ctx {l.n_ctx}, {l.threads} threads")
    llm = measure_llm(minfo, l.n_ctx, l.threads, max_tokens, runs, l.temperature, l.seed, telemetry, log)
    loop_res = None
    if loop:
        s = settings if model is None else settings.model_copy(
            update={"llm": settings.llm.model_copy(update={"model": model_id})})
        loop_res = measure_loop(s, Path(sessions_dir), llm_turns, log)
    log(f"memory bandwidth: numpy copy of {bandwidth_mib} MiB")
    bw = memory_bandwidth(bandwidth_mib)
    ceiling = bw["gb_per_s"] * GB / minfo["bytes"]
    bw.update({"model_bytes": minfo["bytes"], "ceiling_tokens_per_s": _r(ceiling),
               "decode_fraction_of_ceiling": _r((llm["ours"]["decode_tokens_per_s"] or 0) / ceiling, 3),
               "plain_decode_fraction_of_ceiling": _r((llm["plain"]["decode_tokens_per_s"] or 0) / ceiling, 3)})
    th = llm["throttling"]
    return {
        "what": "edge bench (issue 8): LLM TTFT, decode rate, peak RSS, temperature, power; ours vs plain "
                "llama-cpp-python; memory-bandwidth ceiling; voice loop per stage",
        "date": time.strftime("%Y-%m-%d", time.localtime(started)),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "duration_s": round(time.time() - started, 1),
        "machine": machine,
        "load_average": {"before": [round(x, 2) for x in load_before] if load_before else None,
                         "after": [round(x, 2) for x in os.getloadavg()] if load_before else None},
        "board": settings.board.name if settings.board else None,
        **git_commit(),
        "model": minfo,
        "software": {"llama_cpp_python": llama_version, "python": platform.python_version()},
        "settings": {"runs": runs, "max_tokens": max_tokens, "n_ctx": l.n_ctx, "threads": l.threads,
                     "temperature": l.temperature, "seed": l.seed, "loop": loop,
                     "sessions_dir": str(sessions_dir) if loop else None, "llm_turns": llm_turns if loop else 0,
                     "runs_below_issue_minimum": runs < MIN_RUNS},
        "llm": llm,
        "memory_bandwidth": bw,
        "throttled": th["ours"]["throttled"],
        "loop": loop_res,
        "sensor_problems": sorted(telemetry.problems),
    }


def result_stem(result: dict) -> str:
    """``bench-<date>T<HHMM>-<machine slug>-<model id>``, safe as a file name."""
    when = result["started"][:16].replace(":", "")
    model = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(result["model"]["id"]).name)
    return f"bench-{when}-{machine_slug(result['machine'])}-{model}"


def write_results(result: dict, out_dir: Path) -> tuple[Path, Path]:
    """Write ``<stem>.json`` and ``<stem>.png`` into ``out_dir``; returns both paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = result_stem(result)
    js, png = out_dir / f"{stem}.json", out_dir / f"{stem}.png"
    result = {**result, "chart": png.name}
    js.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    chart(result, png)
    return js, png


def _fmt(x, unit: str = "", nd: int = 1) -> str:
    if x is None:
        return "n/a"
    return f"{x:.{nd}f}{unit}"


def summary_lines(r: dict) -> list[str]:
    """The headline figures as short text lines (chart panel and the terminal)."""
    llm, bw, loop = r["llm"], r["memory_bandwidth"], r.get("loop")
    o, p, q = llm["ours"], llm["plain"], llm["ratio"]
    t = llm["temperature_c"]
    th = llm["throttling"]["ours"]
    lines = [
        f"TTFT median: ours {_fmt(o['ttft_ms'], ' ms')}, plain {_fmt(p['ttft_ms'], ' ms')} (x{_fmt(q['ttft_ms'], '', 2)})",
        f"decode, 2nd half: ours {_fmt(o['decode_tokens_per_s'], ' tok/s')}, plain "
        f"{_fmt(p['decode_tokens_per_s'], ' tok/s')} (x{_fmt(q['decode_tokens_per_s'], '', 2)})",
        f"peak RSS: ours {_fmt(o['peak_rss_mib'], ' MiB')}, plain {_fmt(p['peak_rss_mib'], ' MiB')} "
        f"(x{_fmt(q['peak_rss_mib'], '', 2)})",
        f"bandwidth {_fmt(bw['gb_per_s'], ' GB/s', 2)} / {bw['model_bytes'] / MIB:.1f} MiB = ceiling "
        f"{_fmt(bw['ceiling_tokens_per_s'], ' tok/s')}; decode reaches {_fmt(100 * (bw['decode_fraction_of_ceiling'] or 0), ' %')}",
        f"temperature: {_fmt(t['before'], ' °C')} -> {_fmt(t['after'], ' °C')}; power: "
        f"{_fmt((llm['power_w'] or {}).get('mean_w'), ' W', 2)}",
        f"throttling: {'FLAGGED' if th['throttled'] else 'no'} (2nd half {_fmt(100 * abs(th['drop_fraction'] or 0), ' %')} "
        f"{'below' if (th['drop_fraction'] or 0) >= 0 else 'above'} the 1st; flagged beyond {THROTTLE_DROP:.0%} below)",
    ]
    la = r.get("load_average") or {}
    if la.get("before"):
        lines.append(f"load average (1 min): {la['before'][0]:.2f} before, {la['after'][0]:.2f} after, on "
                     f"{r['machine'].get('cores')} cores (other load makes every figure noisy)")
    if loop:
        w = loop["wake_cpu_ms_per_frame"]
        lines.append(f"wake word CPU: {_fmt(w['mean'], ' ms', 2)} per 80 ms frame (p95 {_fmt(w['p95'], ' ms', 2)}); "
                     f"loop RTF {_fmt(loop['rtf_overall'], '', 3)}")
        for path in ("grammar", "llm"):
            s = loop["paths"][path]
            lines.append(f"{path} path ({s['turns']} turns): ASR RTF {_fmt(s['asr_rtf']['median'], '', 3)}, "
                         f"transcript->intent {_fmt(s['transcript_to_intent_ms']['median'], ' ms')}, "
                         f"->audio {_fmt(s['intent_to_first_audio_ms']['median'], ' ms')}, "
                         f"total {_fmt(s['total_ms']['median'], ' ms')}")
    return lines


def chart(r: dict, path: Path) -> Path:
    """A 2×2 PNG: decode rate per run, TTFT per run, voice-loop stages per path, the summary."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    llm, bw, loop = r["llm"], r["memory_bandwidth"], r.get("loop")
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(2, 2, figsize=(14, 9.5))
    commit = (r.get("commit") or "?")[:10] + ("+dirty" if r.get("dirty") else "")
    m = r["machine"]
    fig.suptitle(f"edge bench {r['date']}: {r['model']['id']} on {m.get('cpu_model')} ({m.get('cores')} cores, "
                 f"{m.get('ram_mib')} MiB), commit {commit}", fontsize=11)
    colors = {"ours": "tab:blue", "plain": "tab:orange"}
    labels = {"ours": "ours (LlamaCppEngine)", "plain": "plain llama-cpp-python"}

    ax = axes[0][0]
    for side in ("ours", "plain"):
        runs = llm[side]["runs"]
        ax.plot([x["run"] + 1 for x in runs], [x["decode_tokens_per_s"] for x in runs], "o-", color=colors[side],
                label=labels[side])
        n = len(runs) // 2
        v = llm[side]["decode_tokens_per_s"]
        if v is not None:
            ax.hlines(v, n + 0.5, len(runs) + 0.5, colors=colors[side], linestyles=":",
                      label=f"{side}: 2nd-half median {v:.1f}")
    ymax = max([x["decode_tokens_per_s"] for s in ("ours", "plain") for x in llm[s]["runs"]] + [1])
    c = bw.get("ceiling_tokens_per_s")
    if c and c < 3 * ymax:
        ax.axhline(c, color="gray", linestyle="--", label=f"bandwidth ceiling {c:.0f}")
        ymax = max(ymax, c)
    elif c:
        ax.text(0.02, 0.04, f"bandwidth ceiling {c:.0f} tok/s (off scale)", transform=ax.transAxes, color="gray")
    ax.axvline(len(llm["ours"]["runs"]) // 2 + 0.5, color="lightgray", linewidth=1)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("decode rate per run (interleaved A B A B)")
    ax.set_xlabel("run")
    ax.set_ylabel("tokens/s")
    ax.set_ylim(bottom=0, top=ymax * 1.35)
    ax.legend(fontsize=8, loc="upper right", ncol=2)
    ax.grid(alpha=0.3)

    ax = axes[0][1]
    for side in ("ours", "plain"):
        runs = llm[side]["runs"]
        ax.plot([x["run"] + 1 for x in runs], [x["ttft_ms"] for x in runs], "o-", color=colors[side],
                label=labels[side])
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("time to first token per run (run 1 = cold prefill)")
    ax.set_xlabel("run")
    ax.set_ylabel("ms (log)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")

    ax = axes[1][0]
    if loop:
        import numpy as np

        stages = ("endpoint_to_transcript_ms", "transcript_to_intent_ms", "intent_to_first_audio_ms", "total_ms")
        names = ("endpoint→transcript", "transcript→intent", "intent→first audio", "total")
        y = np.arange(len(stages))
        h = 0.38
        for k, (lane, col) in enumerate((("grammar", "tab:green"), ("llm", "tab:purple"))):
            s = loop["paths"][lane]
            vals = [s[st]["median"] for st in stages]
            pos = y + (k - 0.5) * h
            ax.barh(pos, [v or 0 for v in vals], height=h, color=col, label=f"{lane} path ({s['turns']} turns)")
            for yy, v, st in zip(pos, vals, stages):
                ax.text(max(v or 0, 0.1) * 1.1, yy, "n/a" if v is None else f"{v:.1f} ms (n={s[st]['n']})",
                        va="center", fontsize=8)
        ax.set_yticks(y, names)
        ax.set_ylim(len(stages) + 0.1, -0.6)  # top to bottom, with an empty band at the bottom for the legend
        ax.set_xscale("log")
        ax.set_xlim(0.1, None)
        xmax = max([loop["paths"][p][st]["median"] or 0 for p in ("grammar", "llm") for st in stages] + [1])
        ax.set_xlim(0.1, xmax * 30)
        w = loop["wake_cpu_ms_per_frame"]
        ax.set_title(f"voice loop, median per stage (wake word {_fmt(w['mean'], ' ms', 2)} CPU per 80 ms frame)")
        ax.set_xlabel("ms (log)")
        ax.legend(fontsize=8, loc="lower right", ncol=2)
        ax.grid(alpha=0.3, axis="x", which="major")
    else:
        ax.text(0.5, 0.5, "voice loop not measured (--no-loop)", ha="center", va="center")
        ax.set_axis_off()

    ax = axes[1][1]
    ax.set_axis_off()
    ax.set_title("summary (ratios: ours ÷ plain)")
    ax.text(0.0, 1.0, "\n".join(_wrap(line, 78) for line in summary_lines(r)), va="top", ha="left", fontsize=8.5,
            family="monospace", transform=ax.transAxes)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _wrap(line: str, width: int) -> str:
    import textwrap

    return "\n  ".join(textwrap.wrap(line, width)) or line


def readme_row(r: dict) -> str:
    """One Markdown table row for the README's Benchmarks section."""
    llm, bw, loop = r["llm"], r["memory_bandwidth"], r.get("loop") or {}
    m = r["machine"]
    paths = loop.get("paths") or {}

    def tot(p):
        return _fmt(((paths.get(p) or {}).get("total_ms") or {}).get("median"), "", 0)

    return (f"| {r['date']} | {m.get('machine')}, {m.get('cpu_model')}, {m.get('cores')} cores | {r['model']['id']} | "
            f"{_fmt(llm['ours']['ttft_ms'], '', 0)} | {_fmt(llm['ours']['decode_tokens_per_s'])} | "
            f"{_fmt(llm['ratio']['decode_tokens_per_s'], '', 2)} | {_fmt(llm['ratio']['ttft_ms'], '', 2)} | "
            f"{_fmt(llm['ours']['peak_rss_mib'], '', 0)} | "
            f"{_fmt(100 * (bw['decode_fraction_of_ceiling'] or 0), ' %', 0)} of {_fmt(bw['ceiling_tokens_per_s'], '', 0)} | "
            f"{_fmt((loop.get('wake_cpu_ms_per_frame') or {}).get('mean'), '', 2)} | "
            f"{_fmt(((paths.get('grammar') or {}).get('asr_rtf') or {}).get('median'), '', 3)} | "
            f"{tot('grammar')} | {tot('llm')} | {'yes' if r.get('throttled') else 'no'} |")


# ================================================================================================
# command line


def register(sub, common) -> None:
    """Add ``edge bench`` to the ``edge`` command's subparsers (``common`` adds --config/--board)."""
    p = sub.add_parser("bench", help="LLM TTFT/decode/memory/heat vs plain llama-cpp-python, bandwidth ceiling, "
                                     "voice loop per stage; JSON + PNG into bench/results/")
    common(p)
    p.add_argument("--model", help="manifest id or .gguf path (default: llm.model of the settings)")
    p.add_argument("--runs", type=int, default=MIN_RUNS,
                   help=f"generations per side, interleaved; the second half is reported (default {MIN_RUNS})")
    p.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS,
                   help=f"tokens per generation, both sides (default {DEFAULT_MAX_TOKENS})")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON on stdout")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the result JSON and PNG (default bench/results)")
    p.add_argument("--no-loop", action="store_true", help="LLM and bandwidth only, not the voice loop")
    p.add_argument("--sessions", default=str(DEFAULT_SESSIONS),
                   help="folder of session WAVs + inventory.csv (default ../shared/audio/sessions)")
    p.add_argument("--llm-turns", type=int, default=DEFAULT_LLM_TURNS,
                   help=f"extra LLM-path turns from text, 0..{len(LLM_TURN_TEXTS)} (default {DEFAULT_LLM_TURNS})")
    p.set_defaults(func=cmd_bench)


def cmd_bench(args) -> int:
    from edge.config import load_settings

    if args.runs < 2:
        raise ValueError(f"--runs must be at least 2 (the second half is reported; issue 8 asks for {MIN_RUNS}), "
                         f"got {args.runs}")
    if args.max_tokens < 2:
        raise ValueError(f"--max-tokens must be at least 2 (a decode rate needs two tokens), got {args.max_tokens}")
    settings = load_settings(args.config, args.board)
    if settings.llm.engine == "none" and not args.model:
        raise ValueError("llm.engine is none in the settings: pass --model NAME to benchmark a model")

    def log(msg: str) -> None:
        print(f"[bench] {msg}", file=sys.stderr, flush=True)

    result = run(settings, model=args.model, runs=args.runs, max_tokens=args.max_tokens, loop=not args.no_loop,
                 sessions_dir=Path(args.sessions), llm_turns=args.llm_turns, log=log)
    js, png = write_results(result, Path(args.out))
    result["chart"] = png.name
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        for line in summary_lines(result):
            print(line)
        print(f"README row:\n{readme_row(result)}")
    log(f"wrote {js} and {png}")
    return 0
