"""C07 permissions: the service user without access to the sound device or the NPU device node, and
an open-file limit of 1024. The start-up check (``edge doctor``) names the missing group, permission
or limit and the fix; the NPU stage falls back to the CPU instead of dying.

Real parts: ``edge doctor`` on fake /etc, /dev, /proc trees (tests/fakeroot.py) for the accounts and
device modes of a board; a real process whose RLIMIT_NOFILE is 1024; the RKLLM stand-in (compiled
from C here) behind a character device node (made with mknod, numbers of /dev/null, group ``video``)
that the process really cannot open. Tests run as root here, and root ignores file modes; util-linux
``setpriv`` drops CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH from the child, which then obeys the node's
mode like the ``edge`` user would.
"""
from __future__ import annotations

import grp
import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests import fakeroot
from tests.helpers import REPO
from tests.test_doctor import BOARD, lib_dir, run, tree  # noqa: F401  (fixtures)
from tests.test_llm_chain import STUB

# ------------------------------------------------------------------ the start-up check (edge doctor)

CASES = [
    # what is wrong, check, words in the message, words in the fix
    ("not in the NPU group", "user", "not in group(s) render", "usermod -aG render edge"),
    ("not in the NPU group", "permissions",
     "/dev/dri/renderD129 (crw-rw---- group render): user edge cannot read and write", "usermod -aG render edge"),
    ("not in the audio group", "user", "not in group(s) audio", "usermod -aG audio edge"),
    ("not in the audio group", "permissions", "/dev/snd/pcmC0D0c (crw-rw---- group audio): user edge cannot",
     "usermod -aG audio edge"),
    ("sound node not group-readable", "permissions", "/dev/snd/pcmC0D0c (crw------- group audio)",
     "chmod g+rw /dev/snd/pcmC0D0c"),
    ("open-file limit 1024", "nofile", "is 1024, below 65536", "LimitNOFILE=65536"),
]


def _break(kind: str, root: Path) -> None:
    if kind == "not in the NPU group":
        fakeroot.accounts(root, edge_groups=("audio",))
    elif kind == "not in the audio group":
        fakeroot.accounts(root, edge_groups=("render",))
    elif kind == "sound node not group-readable":
        os.chmod(root / "dev/snd/pcmC0D0c", 0o600)
    elif kind == "open-file limit 1024":
        fakeroot.limits(root, nofile_soft=1024, nofile_hard=4096)


@pytest.mark.parametrize("kind, check, msg, fix", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_the_start_up_check_names_the_group_permission_or_limit_and_the_fix(tree, kind, check, msg, fix):
    root, _ = tree
    assert run(root, [check])[check].status in ("ok", "warn")  # passes before the damage
    _break(kind, root)
    r = run(root, [check])[check]
    assert r.status == "fail", r.line()
    assert msg in r.message, r.message
    assert fix in r.fix, r.fix


def test_a_missing_service_user_fails_with_the_install_command(tree):
    root, _ = tree
    fakeroot.accounts(root, with_user=False)
    res = run(root, ["user", "permissions"])
    assert res["user"].status == "fail" and res["user"].fix == f"edge install --board {BOARD} (creates the user and its groups)"
    assert res["permissions"].status == "fail"


def _nofile(n: int):
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    return limit


def _doctor_nofile(limit: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edge.cli", "doctor", "--board", "x86-dev", "--check", "nofile",
                           "--json", "--no-audio-probe"], cwd=REPO, capture_output=True, text=True, timeout=120,
                          preexec_fn=_nofile(limit))


def test_a_real_process_with_1024_open_files_fails_the_check():
    r = _doctor_nofile(1024)
    assert r.returncode == 1, r.stdout + r.stderr
    (res,) = json.loads(r.stdout)["checks"]
    assert res["status"] == "fail" and "RLIMIT_NOFILE) is 1024, below 65536" in res["message"]
    assert "LimitNOFILE=65536" in res["fix"] and "ulimit -n 65536" in res["fix"]


# ------------------------------------------------------------------ the NPU stage falls back to the CPU

CHAIN = r"""
import json, sys
from edge.llm.base import GenerationRequest
from edge.llm.chain import EngineChain, StepSpec
model, lib, group, nodes = sys.argv[1], sys.argv[2], sys.argv[3], tuple(a for a in sys.argv[4:] if a)
npu = StepSpec("rkllm", model, 1024, lib=lib, timeout_s=5.0, smoke_timeout_s=5.0, soc="rk3588",
               npu_nodes=nodes, npu_group=group)
cpu = StepSpec("llamacpp", "smollm2-135m-instruct-q4_1", 512)
chain = EngineChain([npu, cpu]).start()
text, stats = chain.generate(GenerationRequest([{"role": "user", "content": "What is a hammer?"}],
                                               max_tokens=4, temperature=0.0))
print(json.dumps({"status": chain.status(), "engine": stats.extra["engine"], "text": text}))
chain.close()
"""


@pytest.fixture(scope="module")
def npu_rig(tmp_path_factory):
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is not installed (apt-get install build-essential)")
    d = tmp_path_factory.mktemp("c07")
    so = d / "librkllmrt.so"
    r = subprocess.run([gcc, "-shared", "-fPIC", "-O1", "-std=gnu11", '-DRKLLM_STUB_VERSION="1.3.0"', "-o", str(so),
                        str(STUB)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    model = d / "qwen2.5-3b-instruct_w8a8_rk3588.rkllm"
    model.write_bytes(b"stand-in model: the stub only opens it\n")
    node = d / "renderD129"  # stands in for /dev/dri/renderD129
    try:
        os.mknod(node, stat.S_IFCHR | 0o660, os.makedev(1, 3))  # the numbers of /dev/null: opening is harmless
        os.chown(node, -1, grp.getgrnam("video").gr_gid)
    except (PermissionError, KeyError) as e:
        pytest.skip(f"cannot make a character device node owned by group video here: {e}")
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root and util-linux 'setpriv' is missing: root would ignore the node's mode")
        prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
    return so, model, node, prefix


def _chain(rig, mode: int, check_nodes: bool, group: str = "video") -> tuple[dict, str]:
    so, model, node, prefix = rig
    os.chmod(node, mode)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RKLLM_STUB_")}
    env.update(RKLLM_STUB_MODE="stream", RKLLM_STUB_TOKENS="On| the| NPU.", RKLLM_STUB_NPU_NODE=str(node))
    r = subprocess.run([*prefix, sys.executable, "-c", CHAIN, str(model), str(so), group, str(node) if check_nodes else ""],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]  # never dies
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def test_with_access_to_the_node_the_npu_answers(npu_rig):
    out, _ = _chain(npu_rig, 0o660, check_nodes=True)
    assert out["engine"] == "rkllm" and out["text"] == "On the NPU."
    assert out["status"][0]["state"] == "healthy"


def test_without_access_the_npu_step_says_which_group_and_the_cpu_answers(npu_rig):
    out, _ = _chain(npu_rig, 0o000, check_nodes=True)
    npu, cpu = out["status"][:2]
    assert (npu["engine"], npu["state"], cpu["engine"], cpu["active"]) == ("rkllm", "unhealthy", "llamacpp", True)
    assert "cannot open the NPU device node" in npu["reason"] and "Permission denied" in npu["reason"]
    assert "group video" in npu["reason"] and "usermod -aG video" in npu["reason"]
    assert "SupplementaryGroups=video" in npu["reason"]
    assert out["engine"] == "llamacpp" and out["text"]


def test_a_board_config_naming_the_wrong_group_gets_the_node_s_real_group_in_the_fix(npu_rig):
    out, _ = _chain(npu_rig, 0o000, check_nodes=True, group="render")
    reason = out["status"][0]["reason"]
    assert "usermod -aG video" in reason and "the board config names group render, the node has group video" in reason


def test_without_the_check_the_runtime_itself_fails_init_and_the_cpu_still_answers(npu_rig):
    """Where the board config names no node: the runtime's own open fails in rkllm_init (the stand-in
    opens RKLLM_STUB_NPU_NODE as librkllmrt opens the rknpu node); the chain moves down all the same."""
    out, err = _chain(npu_rig, 0o000, check_nodes=False)
    assert "E rkllm: failed to open the rknpu device" in err and "Permission denied" in err
    assert out["status"][0]["state"] == "unhealthy" and "rkllm_init failed" in out["status"][0]["reason"]
    assert out["engine"] == "llamacpp" and out["text"]


def test_the_node_check_takes_the_first_character_device_and_names_a_missing_driver(tmp_path):
    from drivers.npu.node import NpuAccessError, check_node

    first = tmp_path / "renderD129"
    first.mkdir()  # a directory where the node should be: skipped, named if nothing else works
    plain = tmp_path / "card1"
    plain.write_bytes(b"")  # a regular file: not an NPU
    alt = tmp_path / "rknpu"
    try:
        os.mknod(alt, stat.S_IFCHR | 0o660, os.makedev(1, 3))
    except PermissionError as e:
        pytest.skip(f"mknod refused: {e}")
    assert check_node([first, plain, tmp_path / "accel0", alt], "render") == alt
    with pytest.raises(NpuAccessError, match=r"none of .*renderD129, .*card1, .*accel0 is a character device; found "
                       r"instead: .*renderD129 \(drwx.*card1 \(-rw.*is the rknpu driver loaded"):
        check_node([first, plain, tmp_path / "accel0"])
