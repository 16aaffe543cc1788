"""C24 hardened unit, and model files checked before use.

The service is started the way the hardened unit starts it, rebuilt from kernel parts: a private mount
namespace where the whole filesystem is read-only except the state and cache folders
(``ProtectSystem=strict`` + ``ReadWritePaths=``), ``/home`` an empty tmpfs (``ProtectHome=``), a
private network namespace (``PrivateNetwork=``), an unprivileged uid without capabilities
(``DynamicUser=``: ``setpriv`` to uid 65534), ``HOME=/nonexistent``, ``INVOCATION_ID`` set as systemd
sets it. A Python audit hook (``sitecustomize``) in every Python process of the service records each
socket connect / name lookup and each file opened for writing.

Right behaviour: one model under /home, one mode 0600 owned by another user, one missing: the start-up
check names each bad path and why (hidden by ProtectHome, permission with owner and mode, missing)
and exits with a status listed in the unit's ``RestartPreventExitStatus`` (no restart storm); with
only the LLM missing it starts degraded and answers by voice; nothing is written outside the state
and cache folders; no network connection is ever attempted.

Model files (issue point 5): an HTML page, a Git LFS pointer, a 0-byte file, a cut GGUF, a folder
without ``model.bin`` given as the Whisper or LLM model are refused naming the key and the check,
never a CTranslate2 traceback or a memory message.
"""
from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from edge.config import load_settings
from edge.models.manifest import resolve
from edge.models.startup import check_configured
from tests.helpers import INVENTORY, REPO, SESSION_WAKE, SESSIONS

UNIT = REPO / "systemd" / "edge.service"
NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                                reason="namespaces and setpriv need root")

AUDIT_HOOK = '''
import os, sys
_log = os.environ.get("EDGE_AUDIT_LOG")
if _log:
    _fd = os.open(_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    os.write(_fd, f"start {os.getpid()} {sys.argv[:2]!r}\\n".encode())
    _W = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    def _hook(event, args):
        line = None
        if event == "socket.connect":
            line = f"connect {getattr(args[0], 'family', '?')} {args[1]!r}"
        elif event == "socket.getaddrinfo":
            line = f"getaddrinfo {args[0]!r}"
        elif event == "open" and args[0] is not None and not isinstance(args[0], int):
            mode, flags = args[1], args[2] or 0
            if (isinstance(mode, str) and any(c in mode for c in "wax+")) or flags & _W:
                line = f"write {os.fsdecode(args[0])}"
        if line:
            os.write(_fd, (line + "\\n").encode())
    sys.addaudithook(_hook)
'''

SANDBOX = r'''
set -e
mount --make-rprivate /
mount --bind "$STATE" "$STATE"
mount --bind "$CACHE" "$CACHE"
mount --bind "$AUDIT" "$AUDIT"
mount -t tmpfs -o ro,mode=0755 tmpfs /home
if [ -n "$PYHOME" ]; then  # the interpreter lives under /root here (pyenv): /root hidden, it kept
    mkdir -p "$PYKEEP" && mount --bind "$PYHOME" "$PYKEEP"
    mount -t tmpfs -o mode=0755 tmpfs /root && mkdir -p "$PYHOME" && mount --bind "$PYKEEP" "$PYHOME"
fi
mount -o remount,bind,ro /
exec setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all --bounding-set=-all -- "$@"
'''


@pytest.fixture
def box(tmp_path):
    """State and cache folders owned by the service's uid, outside root's private pytest folder."""
    base = Path(tempfile.mkdtemp(prefix="edge-c24-", dir="/tmp"))
    os.chmod(base, 0o755)
    state, cache, hooks = base / "state", base / "cache", base / "hooks"
    for d in (state, cache, hooks, base / "audit"):
        d.mkdir()
    os.chmod(base / "audit", 0o777)
    os.chown(state, NOBODY, NOBODY)
    os.chown(cache, NOBODY, NOBODY)
    (hooks / "sitecustomize.py").write_text(AUDIT_HOOK)
    home = Path(tempfile.mkdtemp(prefix="edge-c24-", dir="/home"))  # real files, hidden by the sandbox
    yield base, state, cache, hooks, home
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(home, ignore_errors=True)


def run_hardened(box, config: str, *args) -> tuple[subprocess.CompletedProcess, list[str]]:
    base, state, cache, hooks, _ = box
    cfg = base / "edge.yaml"
    cfg.write_text(config)
    os.chmod(cfg, 0o644)
    audit = base / "audit" / "audit.log"  # the test's own record, writable in the sandbox
    audit.write_text("")
    os.chmod(audit, 0o666)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8", "INVOCATION_ID": "c24test",
           "PYTHONDONTWRITEBYTECODE": "1",  # as the unit sets it: the code's folder is read-only there
           "PYTHONPATH": f"{hooks}:{REPO}", "EDGE_AUDIT_LOG": str(audit), "XDG_CACHE_HOME": str(cache),
           "STATE": str(state), "CACHE": str(cache), "AUDIT": str(audit.parent)}
    if Path(sys.base_prefix).is_relative_to("/root"):  # ProtectHome hides /root; a board's venv is in /opt
        env.update(PYHOME=sys.base_prefix, PYKEEP=str(base / "python"))
    cmd = ["unshare", "--mount", "--net", "--", "sh", "-c", SANDBOX, "sandbox",
           sys.executable, "-m", "edge.cli", *args, "--config", str(cfg)]
    r = subprocess.run(cmd, cwd=state, env=env, capture_output=True, text=True, timeout=300)
    return r, audit.read_text().splitlines()


def assert_contained(box, audit: list[str], processes: int = 1) -> None:
    _, state, cache, _, _ = box
    assert sum(a.startswith("start ") for a in audit) >= processes, audit  # the hook ran in each
    assert [a for a in audit if a.startswith(("connect", "getaddrinfo")) and "AF_UNIX" not in a] == [], audit
    allowed = (str(state), str(cache), "/dev/null", "/dev/shm")
    assert [a for a in audit if a.startswith("write ") and not a[6:].startswith(allowed)] == [], audit


def unit_prevents_restart(status: int) -> bool:
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.read(UNIT)
    return str(status) in cp["Service"].get("RestartPreventExitStatus", "").split()


@needs_root
def test_bad_model_paths_are_each_named_and_the_exit_stops_restarts(box):
    base, state, cache, _, home = box
    (home / "whisper").mkdir()  # a real model folder, but under /home
    for f in resolve("whisper-tiny-en").iterdir():
        shutil.copy(f, home / "whisper" / f.name)
    secret = base / "private.gguf"  # another user's file, mode 0600
    shutil.copy(resolve("smollm2-135m-instruct-q4_1"), secret)
    os.chmod(secret, 0o600)
    missing = state / "models" / "qwen-1.5b.gguf"
    cfg = (f"board: x86-dev\n{SESSION_WAKE}store: {{path: {state / 'edge.db'}}}\noutput_dir: {state / 'out'}\n"
           f"asr: {{whisper: {{model: {home / 'whisper'}}}}}\nllm: {{model: {secret}}}\n"
           f"governor: {{smaller_models: [{missing}]}}\n")
    r, audit = run_hardened(box, cfg, "run", "--input", str(SESSIONS / "query_m8_bolts.wav"))
    assert r.returncode == 2 and unit_prevents_restart(r.returncode), (r.returncode, r.stderr[-3000:])
    assert "Traceback" not in r.stderr, r.stderr
    err = r.stderr
    assert f"asr.whisper.model: {home / 'whisper'}: hidden check failed" in err and "ProtectHome=" in err, err
    line = next(x for x in err.splitlines() if x.strip().startswith("llm.model:"))
    assert "permission" in line and "owner root (uid 0)" in line and "mode 0600" in line and f"uid {NOBODY}" in line, line
    assert f"governor.smaller_models[0]: {missing}: missing" in err, err
    assert_contained(box, audit)
    assert not (state / "edge.db").exists()  # refused before the store was touched


@needs_root
def test_only_the_llm_missing_starts_degraded_and_answers_by_voice(box):
    base, state, cache, _, home = box
    shutil.copy(resolve("smollm2-135m-instruct-q4_1"), home / "model.gguf")
    shutil.copy(INVENTORY, base / "inventory.csv")
    cfg = (f"board: x86-dev\n{SESSION_WAKE}store: {{path: {state / 'edge.db'}}}\noutput_dir: {state / 'out'}\n"
           f"models: {{dir: {state / 'models'}}}\nllm: {{model: {home / 'model.gguf'}}}\n"
           "governor: {smaller_models: []}\n")  # no smaller model to fall back on: degraded
    r, audit = run_hardened(box, cfg, "run", "--input", str(SESSIONS / "query_m8_bolts.wav"),
                            "--inventory", str(base / "inventory.csv"), "--json")
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"llm.model: {home / 'model.gguf'}: hidden check failed" in r.stderr, r.stderr
    assert "starting degraded without the LLM" in r.stderr
    events = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    replies = [e["text"] for e in events if e["type"] == "reply"]
    assert len(replies) == 1 and "140" in replies[0], events  # the voice path is up
    assert_contained(box, audit, processes=2)  # the service and its speech worker
    assert f"write {state / 'out' / 'events.jsonl'}" in audit  # the hook does see the writes


def test_the_unit_prevents_restarts_on_the_start_up_checks_status():
    assert unit_prevents_restart(2)


# -- model files checked before use ---------------------------------------------------------------------

def _html(p: Path) -> Path:
    p.write_text("<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>…</body></html>\n")
    return p


def _bad_files(d: Path) -> dict[str, tuple[Path, str]]:
    gguf = resolve("smollm2-135m-instruct-q4_1")
    half = d / "half.gguf"
    with open(gguf, "rb") as src, open(half, "wb") as dst:
        dst.write(src.read(gguf.stat().st_size // 2))
    lfs = d / "lfs.gguf"
    lfs.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:" + "ab" * 32 + "\nsize 123456\n")
    (d / "empty.gguf").write_bytes(b"")
    return {"html": (_html(d / "page.gguf"), "html"), "lfs": (lfs, "lfs-pointer"),
            "empty": (d / "empty.gguf", "magic"), "half": (half, "size")}


@pytest.mark.parametrize("kind", ["html", "lfs", "empty", "half"])
def test_a_broken_llm_file_is_refused_naming_the_key_and_the_check(tmp_path, kind):
    path, check = _bad_files(tmp_path)[kind]
    for key, over in (("llm.model", {"llm": {"model": str(path)}}),
                      ("llm.chain[0].model", {"llm": {"chain": [{"engine": "llamacpp", "model": str(path), "n_ctx": 1024}]}})):
        speech, llm = check_configured(load_settings(board="x86-dev", overrides=over))
        assert speech == [] and [(p.key, p.check) for p in llm] == [(key, check)], llm


def _whisper_copy(d: Path) -> Path:
    w = d / "whisper"
    w.mkdir()
    for f in resolve("whisper-tiny-en").iterdir():
        os.symlink(f, w / f.name)
    return w


@pytest.mark.parametrize("kind", ["html file", "html model.bin", "random model.bin", "no model.bin"])
def test_a_broken_whisper_model_is_refused_naming_the_key_and_the_check(tmp_path, kind):
    if kind == "html file":
        path, check = _html(tmp_path / "whisper.html"), "html"
    else:
        path = _whisper_copy(tmp_path)
        (path / "model.bin").unlink()
        if kind == "html model.bin":
            _html(path / "model.bin")
        elif kind == "random model.bin":
            (path / "model.bin").write_bytes(os.urandom(4096))
        check = {"html model.bin": "html", "random model.bin": "magic", "no model.bin": "magic"}[kind]
    speech, _ = check_configured(load_settings(board="x86-dev", overrides={"asr": {"whisper": {"model": str(path)}}}))
    assert [(p.key, p.check) for p in speech] == [("asr.whisper.model", check)], speech


def test_the_installed_models_pass_and_a_good_copy_passes(tmp_path):
    assert check_configured(load_settings(board="x86-dev")) == ([], [])
    over = {"asr": {"whisper": {"model": str(_whisper_copy(tmp_path))}},
            "llm": {"model": str(resolve("smollm2-135m-instruct-q4_1"))}}
    assert check_configured(load_settings(board="x86-dev", overrides=over)) == ([], [])


def test_edge_run_with_an_html_page_as_whisper_model_is_one_message_not_a_traceback(tmp_path):
    page = _html(tmp_path / "model.html")
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"board: x86-dev\n{SESSION_WAKE}store: {{path: {tmp_path / 'edge.db'}}}\nllm: {{engine: none}}\n"
                   f"asr: {{whisper: {{model: {page}}}}}\n")
    r = subprocess.run([sys.executable, "-m", "edge.cli", "run", "--input", str(SESSIONS / "query_m8_bolts.wav"),
                        "--config", str(cfg), "--output-dir", str(tmp_path / "out")], cwd=REPO, capture_output=True,
                       text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"asr.whisper.model: {page}: html check failed" in r.stderr, r.stderr
