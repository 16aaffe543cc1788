"""A whole fake board root for ``edge doctor`` / ``edge install`` tests: what ``tests/fakesys.py`` lays
out (``/proc/meminfo``, ``/proc/stat``, cpufreq, thermal zones with trips, NPU devfreq and load) plus
the rest the doctor reads:

- ``etc/passwd``, ``etc/group``: the service user ``edge`` (uid 999) in ``audio`` (gid 29, Debian's) and
  ``render`` (gid 105);
- ``dev/snd/{controlC0,pcmC0D0c,pcmC0D0p}``: real character device nodes (``mknod``, ALSA major 116),
  ``root:audio 0660``; ``dev/dri/renderD129`` (DRM major 226, minor 129) ``root:render 0660``;
- ``proc/self/limits`` (Max open files 65536), ``proc/asound/cards`` (an ES8316 card);
- ``sys/module/rknpu/version`` (``0.9.8``);
- ``usr/lib/librknnrt.so`` / ``usr/lib/librkllmrt.so``: stand-in vendor libraries compiled with gcc,
  carrying the version strings the real ones carry (see ``drivers/system.py``);
- ``var/lib/dpkg/status`` with espeak-ng and libportaudio2 installed; ``var/lib/edge``.

``healthy(root, board)`` builds a tree on which every check passes; tests then break one thing.
Device nodes need ``CAP_MKNOD`` (root); the tests run as root here and in CI.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

try:
    from fakesys import FakeSys, rk3588, x86_dev
except ImportError:  # tests/ imported as a package
    from tests.fakesys import FakeSys, rk3588, x86_dev

AUDIO_GID = 29      # Debian's static gid for audio (base-passwd)
RENDER_GID = 105
EDGE_UID = 999
ALSA_MAJOR = 116    # Documentation/admin-guide/devices.txt
DRM_MAJOR = 226

_LIB_C = """
/* stand-in for a Rockchip runtime library: exports one function and carries the version string
   the real library carries, so `edge doctor` can read it out of the bytes */
__attribute__((used)) static const char version_text[] = "%s";
const char *%s_version_text(void) { return version_text; }
"""


def compile_lib(out: Path, name: str, version_line: str) -> Path:
    """gcc -shared a library ``out`` whose bytes contain ``version_line``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_suffix(".c")
    src.write_text(_LIB_C % (version_line, name))
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise RuntimeError("gcc is needed to build the stand-in vendor libraries (apt-get install build-essential)")
    subprocess.run([gcc, "-shared", "-fPIC", "-O0", "-o", str(out), str(src)], check=True, capture_output=True)
    src.unlink()
    return out


def char_node(path: Path, major: int, minor: int, mode: int = 0o660, gid: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mknod(path, mode | stat.S_IFCHR, os.makedev(major, minor))
    os.chown(path, 0, gid)
    os.chmod(path, mode)
    return path


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def accounts(root: Path, *, edge_groups=("audio", "render"), with_user: bool = True) -> None:
    """``etc/passwd`` and ``etc/group``; ``edge_groups`` lists the groups the user is a member of."""
    users = ["root:x:0:0:root:/root:/bin/bash"]
    if with_user:
        users.append(f"edge:x:{EDGE_UID}:{EDGE_UID}:edge voice assistant:/var/lib/edge:/usr/sbin/nologin")
    write(root, "etc/passwd", "\n".join(users) + "\n")
    groups = {"root": 0, "audio": AUDIO_GID, "render": RENDER_GID, "edge": EDGE_UID}
    lines = []
    for name, gid in groups.items():
        members = "edge" if with_user and name in edge_groups else ""
        lines.append(f"{name}:x:{gid}:{members}")
    write(root, "etc/group", "\n".join(lines) + "\n")


def limits(root: Path, nofile_soft: int = 65536, nofile_hard: int = 65536) -> None:
    write(root, "proc/self/limits",
          "Limit                     Soft Limit           Hard Limit           Units     \n"
          "Max cpu time              unlimited            unlimited            seconds   \n"
          f"Max open files            {nofile_soft:<20} {nofile_hard:<20} files     \n"
          "Max locked memory         8388608              8388608              bytes     \n")


def dpkg(root: Path, installed=("espeak-ng", "libportaudio2")) -> None:
    paras = []
    for name in ("espeak-ng", "libportaudio2", "libc6"):
        status = "install ok installed" if name in installed or name == "libc6" else "deinstall ok config-files"
        paras.append(f"Package: {name}\nStatus: {status}\nArchitecture: arm64\nVersion: 1.0-test\n"
                     f"Description: stand-in\n multi-line description\n")
    write(root, "var/lib/dpkg/status", "\n".join(paras))


def sound(root: Path, mode: int = 0o660) -> None:
    write(root, "proc/asound/cards", " 0 [rockchipes8316]: rockchip_es8316 - rockchip-es8316\n"
                                     "                      rockchip-es8316\n")
    for name, minor in (("controlC0", 0), ("pcmC0D0c", 24), ("pcmC0D0p", 16)):
        char_node(root / "dev/snd" / name, ALSA_MAJOR, minor, mode, AUDIO_GID)


def npu_node(root: Path, mode: int = 0o660, gid: int = RENDER_GID, path: str = "dev/dri/renderD129") -> None:
    char_node(root / path, DRM_MAJOR, 129, mode, gid)


def runtimes(root: Path, lib_dir: Path, rknn: str = "2.3.2", rkllm: str = "1.3.0") -> None:
    """Copy stand-in libraries (built once into ``lib_dir``) with these versions into ``usr/lib``."""
    for name, line in (("librknnrt", f"librknnrt version: {rknn} (429f97ae6b@2025-04-09T09:09:27)"),
                       ("librkllmrt", f"rkllm-runtime version: {rkllm}")):
        built = lib_dir / f"{name}-{line.split(':')[1].split()[0]}.so"
        if not built.exists():
            compile_lib(built, name, line)
        (root / "usr/lib").mkdir(parents=True, exist_ok=True)
        shutil.copy(built, root / "usr/lib" / f"{name}.so")


def healthy(root: Path, board: str, lib_dir: Path) -> FakeSys:
    """A tree on which every doctor check passes for ``board`` (``rk3588-rock5b`` or ``x86-dev``)."""
    if board.startswith("rk3588"):
        fs = rk3588(root, total_mib=16384, available_mib=12000)
        write(root, "sys/module/rknpu/version", "0.9.8\n")
        npu_node(root)
        runtimes(root, lib_dir)
    else:
        fs = x86_dev(root)
    accounts(root)
    limits(root)
    dpkg(root)
    sound(root)
    (root / "var/lib/edge").mkdir(parents=True, exist_ok=True)
    return fs
