"""Our engine path against plain llama-cpp-python, side by side: one child process per side
(:mod:`edge.ops.bench.worker`), both loaded at once, runs interleaved ours, plain, ours, plain, …"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
from typing import TYPE_CHECKING, Callable

from edge.errors import EdgeError
from edge.ops.bench.defaults import check_runs
from edge.ops.bench.stats import MIB, THROTTLE_DROP, halves, median, ratio, rounded, throttle_check
from edge.paths import CHECKOUT

if TYPE_CHECKING:
    from edge.ops.bench.machine import Telemetry

#: s a worker may take for one load or one generation before it counts as hung (a loaded
#: 2-core machine decodes SmolLM2-135M at ~1 token/s at worst here).
WORKER_TIMEOUT_S = 900.0
#: The module the child processes run (``python -m``).
WORKER_MODULE = "edge.ops.bench.worker"

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
SIDES = ("ours", "plain")
#: The per-side figures that also get a ratio ours ÷ plain.
RATIO_FIGURES = ("load_ms", "ttft_ms", "ttft_cold_ms", "ttft_warm_ms", "decode_tokens_per_s", "completion_tokens",
                 "peak_rss_mib")


class BenchError(EdgeError):
    """A benchmark step failed (a worker crashed or hung); the message says which and why."""


class Worker:
    """One side in a child process running :data:`WORKER_MODULE` (protocol in its module doc).

    Raises (from the constructor, :meth:`run`, :meth:`close`):
        BenchError: the child exited (its exit code and last stderr lines) or gave no answer
            within ``timeout_s`` seconds (it is killed).
    """

    def __init__(self, side: str, spec: dict, timeout_s: float = WORKER_TIMEOUT_S):
        self.side = side
        self.timeout_s = timeout_s
        self._err = tempfile.TemporaryFile(mode="w+")
        # the child imports this checkout's edge, wherever the benchmark was started from
        env = {**os.environ,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen([sys.executable, "-m", WORKER_MODULE, json.dumps({**spec, "side": side})],
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
        """One generation of ``messages`` (chat dicts); its figures (see the worker's protocol)."""
        try:
            self.proc.stdin.write(json.dumps({"messages": messages}) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:  # the child is gone: _read reports its exit code and stderr
            pass
        return self._read("a generation")

    def close(self) -> dict:
        """Ask the child to quit; its ``bye`` line (last ``peak_rss_bytes``). The child is gone after."""
        try:
            self.proc.stdin.write(json.dumps({"quit": True}) + "\n")
            self.proc.stdin.flush()
            bye = self._read("quit")
            self.proc.wait(timeout=60)
            return bye
        finally:
            self.kill()

    def kill(self) -> None:
        """Kill the child if it still runs; idempotent."""
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
        "load_ms": rounded(ready["load_ms"], 1),
        "ttft_ms": rounded(median(r["ttft_ms"] for r in runs), 1),
        "ttft_cold_ms": rounded(runs[0]["ttft_ms"], 1) if runs else None,
        "ttft_warm_ms": rounded(median(r["ttft_ms"] for r in runs[1:]), 1),
        "decode_tokens_per_s": rounded(median(second)),
        "decode_tokens_per_s_first_half": rounded(median(first)),
        "completion_tokens": rounded(median(r["completion_tokens"] for r in runs), 1),
        "peak_rss_mib": rounded(max(peaks) / MIB, 1) if peaks else None,
        "runs": [{k: (rounded(v, 3) if isinstance(v, float) else v) for k, v in r.items()} for r in runs],
    }


def _interleaved_runs(spec: dict, runs: int, log: Callable[[str], None]) -> tuple[dict, dict, dict]:
    """Load both sides, run them A B A B …; ``(ready, results, bye)``, each keyed by side."""
    workers: dict[str, Worker] = {}
    results: dict[str, list[dict]] = {side: [] for side in SIDES}
    try:
        for side in SIDES:  # loaded one after the other: load times are not shared
            log(f"loading the {side} side in a child process")
            workers[side] = Worker(side, spec)
        for i in range(runs):
            messages = [{"role": "system", "content": BENCH_SYSTEM},
                        {"role": "user", "content": PROMPTS[i % len(PROMPTS)]}]
            for side in SIDES:
                res = workers[side].run(messages)
                res["run"] = i
                results[side].append(res)
            log(f"run {i + 1}/{runs}: ours {results['ours'][-1]['decode_tokens_per_s']:.1f} tok/s, "
                f"plain {results['plain'][-1]['decode_tokens_per_s']:.1f} tok/s")
        byes = {side: w.close() for side, w in workers.items()}
    finally:
        for w in workers.values():
            w.kill()
    return {side: w.ready for side, w in workers.items()}, results, byes


def measure_llm(model: dict, n_ctx: int, threads: int, max_tokens: int, runs: int, temperature: float,
                seed: int, telemetry: Telemetry, log: Callable[[str], None] = lambda s: None,
                n_batch: int = 512) -> dict:
    """Our engine path against plain llama-cpp-python, interleaved, each in its own child process.

    Args:
        model: :func:`edge.ops.bench.machine.model_info` of the GGUF file.
        n_ctx: context window, tokens. threads: CPU threads of each side. max_tokens: per run.
        runs: generations per side (>= 2; issue 8 asks for >= ``MIN_RUNS``).
        temperature, seed: sampling, the same for both sides.
        telemetry: sampled during the runs for temperature and power.
    Returns:
        ``{"settings", "ours", "plain", "ratio", "temperature_c", "power_w", "throttling", "trace"}``.
    Raises:
        ValueError: ``runs`` < 2.
        BenchError: a worker failed or hung.
    """
    check_runs(runs)
    spec = {"model": model["path"], "n_ctx": n_ctx, "threads": threads, "max_tokens": max_tokens,
            "temperature": temperature, "seed": seed, "n_batch": min(n_batch, n_ctx)}
    temp_before = telemetry.temperature_c()
    power_before = telemetry.power_w()
    telemetry.start()
    try:
        ready, results, byes = _interleaved_runs(spec, runs, log)
    finally:
        telemetry.stop()
    temp_after = telemetry.temperature_c()
    power_after = telemetry.power_w()
    sides = {s: _side_summary(ready[s], results[s], byes[s]) for s in SIDES}
    temps = [t for _, t, _ in telemetry.trace if t is not None]
    power = telemetry.power_summary()
    if power is not None:
        power["before_w"], power["after_w"] = rounded(power_before, 3), rounded(power_after, 3)
        tps = sides["ours"]["decode_tokens_per_s"]
        power["joules_per_token"] = rounded(power["mean_w"] / tps, 4) if tps else None
    return {
        "settings": {**{k: v for k, v in spec.items() if k != "model"}, "runs": runs,
                     "order": "interleaved: ours, plain, ours, plain, ...", "system_prompt": BENCH_SYSTEM,
                     "prompts": list(PROMPTS)},
        "ours": sides["ours"],
        "plain": sides["plain"],
        "ratio": {f: ratio(sides["ours"][f], sides["plain"][f]) for f in RATIO_FIGURES},
        "temperature_c": {"before": rounded(temp_before, 1), "after": rounded(temp_after, 1),
                          "max_during": rounded(max(temps), 1) if temps else None},
        "power_w": power,
        "throttling": {**{side: throttle_check([r["decode_tokens_per_s"] for r in results[side]]) for side in SIDES},
                       "threshold": THROTTLE_DROP},
        "trace": [list(t) for t in telemetry.trace],
    }
