"""edge.governor.memwatch.MemoryWatch on RSS traces shaped like the recognizer worker's: a decoder's
working memory swinging by megabytes from call to call, an arena that grows in a few steps after
warm-up and stays flat, and a steady leak."""
from __future__ import annotations

import random

from edge.governor.memwatch import MIB, MemoryWatch, anon_rss_of, rss_of

BASE = 200 * MIB


def swings(n: int, seed: int = 7) -> list[int]:
    """Per-call working memory on top of the resident model: 0 to 6 MiB, mostly low."""
    rnd = random.Random(seed)
    return [int(rnd.random() ** 3 * 6 * MIB) for _ in range(n)]


def first_recycle(watch: MemoryWatch, trace: list[int]) -> int | None:
    for i, rss in enumerate(trace):
        if watch.observe(rss) is not None:
            return i
    return None


def test_an_arena_that_grows_in_steps_after_warm_up_then_stays_flat_is_not_a_leak():
    # 0.5 MiB in three steps over 45 calls (what a worker under CPU contention did here), then flat
    steps = [0] * 60 + [170 * 1024] * 15 + [340 * 1024] * 15 + [512 * 1024] * 2000
    trace = [BASE + s + w for s, w in zip(steps, swings(len(steps)), strict=True)]
    assert first_recycle(MemoryWatch(), trace) is None
    # the same steps without the total-growth rule are taken for a leak: the rule is what holds it
    assert first_recycle(MemoryWatch(min_growth_bytes=0), trace) is not None


def test_a_steady_leak_of_a_few_kib_per_call_is_recycled_once_it_has_taken_the_minimum_growth():
    leak = 16 * 1024
    trace = [BASE + i * leak + w for i, w in enumerate(swings(3000))]
    at = first_recycle(MemoryWatch(), trace)
    assert at is not None
    grown = at * leak
    assert 2 * MIB <= grown <= 4 * MIB, grown / MIB  # soon after 2 MiB have leaked, not much later


def test_over_the_budget_is_recycled_at_once_after_warm_up():
    watch = MemoryWatch(budget_bytes=BASE + 8 * MIB, warmup=10)
    trace = [BASE] * 20 + [BASE + 9 * MIB]
    assert first_recycle(watch, trace) == 20
    watch.reset()
    assert watch.baseline is None and watch.floor is None and watch.calls == 0


def status_tree(tmp_path, pid: int, **kib: int):
    """A fake ``/proc`` with ``<pid>/status`` holding the given ``kB`` lines."""
    d = tmp_path / "proc" / str(pid)
    d.mkdir(parents=True)
    lines = ["Name:\tpython3", "State:\tS (sleeping)"] + [f"{k}:\t{v:8d} kB" for k, v in kib.items()]
    (d / "status").write_text("\n".join(lines) + "\n")
    return tmp_path / "proc"


def test_the_watch_reads_anonymous_memory_and_falls_back_to_vmrss_on_old_kernels(tmp_path):
    proc = status_tree(tmp_path, 41, VmRSS=211368, RssAnon=153732, RssFile=57632, RssShmem=4)
    assert rss_of(41, proc) == 211368 * 1024
    assert anon_rss_of(41, proc) == (153732 + 4) * 1024  # the libraries' file pages left out
    old = status_tree(tmp_path / "old", 42, VmRSS=190000)  # before Linux 4.5: no RssAnon line
    assert anon_rss_of(42, old) == 190000 * 1024
    assert rss_of(43, proc) is None and anon_rss_of(43, proc) is None  # a process that is gone
