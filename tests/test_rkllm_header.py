"""The ctypes mirror of RKLLM (drivers/npu/rkllm.py) against Rockchip's real header ``drivers/npu/rkllm.h``
(1.3.0, kept with its licence in drivers/npu/LICENSE.rkllm): every struct and member of the header is in
the mirror, in header order; a C++ probe that includes the header prints ``sizeof``/``offsetof`` of each,
compiled with the host's g++ and with aarch64-linux-gnu-g++ (run under qemu-aarch64-static), and every
figure equals the mirror's; every function of the header is typed in the mirror with its argument count.

The header compiles only as C++ (``#include <cstdint>``). A new runtime release is one file to drop in:
replace drivers/npu/rkllm.h and run this test.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from drivers.npu import rkllm as rk

HEADER = Path(rk.__file__).with_name("rkllm.h")
AARCH64_SYSROOT = "/usr/aarch64-linux-gnu"  # libc6-dev-arm64-cross / libstdc++-12-dev-arm64-cross


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def _members(body: str, prefix: str = "") -> list[str]:
    """Member paths of a struct body in order: nested ``struct {...} name;`` as ``name`` then
    ``name.member``; members of an anonymous union as plain names (C++ reaches them directly)."""
    out: list[str] = []
    pos = 0
    for m in re.finditer(r"(struct|union)\s*\{", body):
        if m.start() < pos:
            continue
        out += _plain(body[pos:m.start()], prefix)
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(body[i], 0)
            i += 1
        inner = body[m.end():i - 1]
        tail = re.match(r"\s*(\w*)\s*;", body[i:])
        name = tail.group(1)
        if name:
            out.append(prefix + name)
            out += _members(inner, prefix + name + ".")
        else:  # anonymous union: its members belong to the enclosing struct
            out += _members(inner, prefix)
        pos = i + tail.end()
    return out + _plain(body[pos:], prefix)


def _plain(chunk: str, prefix: str) -> list[str]:
    names = []
    for decl in chunk.split(";"):
        m = re.search(r"(\w+)\s*(\[\s*\d+\s*\])?\s*$", decl.strip())
        if m and decl.strip():
            names.append(prefix + m.group(1))
    return names


def header_structs() -> dict[str, list[str]]:
    """``{"RKLLMParam": ["model_path", ...], ...}`` read from the header's ``typedef struct {...} NAME;``."""
    text = _strip_comments(HEADER.read_text(encoding="utf-8"))
    out = {}
    for m in re.finditer(r"typedef\s+struct\s*\{", text):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        name = re.match(r"\s*(\w+)\s*;", text[i:]).group(1)
        out[name] = _members(text[m.end():i - 1])
    return out


def header_functions() -> dict[str, int]:
    """``{"rkllm_init": 3, ...}``: every function the header declares and its number of arguments."""
    text = _strip_comments(HEADER.read_text(encoding="utf-8"))
    out = {}
    for m in re.finditer(r"^\s*[\w\s\*]+?\b(rkllm_\w+)\s*\(([^)]*)\)\s*;", text, re.M):
        args = m.group(2).strip()
        out[m.group(1)] = 0 if args in ("", "void") else args.count(",") + 1
    return out


def probe_source() -> str:
    """C++ that prints ``NAME SIZE`` / ``NAME.MEMBER OFFSET`` for every entry of the mirror's layout."""
    lines = ['#include <cstdio>', '#include <cstddef>', '#include "rkllm.h"', "int main() {"]
    for name, (_, members) in rk.LAYOUT.items():
        lines.append(f'  std::printf("%s %zu\\n", "{name}", sizeof({name}));')
        for mem in members:
            lines.append(f'  std::printf("%s %zu\\n", "{name}.{mem}", (size_t)offsetof({name}, {mem}));')
    return "\n".join(lines + ["  return 0;", "}", ""])


def _compile(cxx: str, tmp_path: Path, tag: str) -> Path:
    src = tmp_path / f"probe_{tag}.cpp"
    src.write_text(probe_source())
    exe = tmp_path / f"probe_{tag}"
    r = subprocess.run([cxx, "-std=c++11", "-Wall", "-Werror", "-I", str(HEADER.parent), "-o", str(exe), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return exe


def _parse(out: str) -> dict[str, int]:
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


def test_the_header_is_the_1_3_0_release_with_its_licence():
    text = HEADER.read_text(encoding="utf-8")
    assert "#include <cstdint>" in text and "RKLLMCallback* callback" in text  # 1.3.0: the callback struct
    note = HEADER.with_name("LICENSE.rkllm").read_text(encoding="utf-8")
    assert "Copyright (c) Rockchip Electronics Co., Ltd." in note and "release v1.3.0" in note


def test_every_struct_and_member_of_the_header_is_mirrored_in_order():
    structs = header_structs()
    assert len(structs) == HEADER.read_text().count("typedef struct"), sorted(structs)
    mirrored = {name: list(members) for name, (_, members) in rk.LAYOUT.items()}
    assert mirrored == structs


def test_every_function_of_the_header_is_typed_with_its_argument_count():
    typed = {name: len(argtypes) for name, _, argtypes in rk._FUNCTIONS}
    assert typed == header_functions()


def test_host_compiled_header_layout_equals_the_ctypes_mirror(tmp_path):
    cxx = shutil.which("g++")
    if cxx is None:
        pytest.skip("g++ is not installed (scripts/setup.sh installs build-essential)")
    out = _parse(subprocess.run([str(_compile(cxx, tmp_path, "host"))], capture_output=True, text=True,
                                check=True, timeout=60).stdout)
    ours = rk.layout()
    assert set(out) == set(ours) and len(ours) > 59
    assert {k: (ours[k], v) for k, v in out.items() if ours[k] != v} == {}


def test_aarch64_compiled_header_layout_under_qemu_equals_the_ctypes_mirror(tmp_path):
    cxx, qemu = shutil.which("aarch64-linux-gnu-g++"), shutil.which("qemu-aarch64-static")
    if cxx is None or qemu is None:
        pytest.skip("aarch64-linux-gnu-g++ or qemu-aarch64-static missing (scripts/setup.sh installs "
                    "g++-aarch64-linux-gnu and qemu-user-static)")
    exe = _compile(cxx, tmp_path, "aarch64")
    assert b"\x7fELF" == exe.read_bytes()[:4] and exe.read_bytes()[18] == 183  # e_machine EM_AARCH64
    r = subprocess.run([qemu, "-L", AARCH64_SYSROOT, str(exe)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = _parse(r.stdout)
    ours = rk.layout()  # the board is LP64 like this host: the same ctypes figures must hold there
    assert set(out) == set(ours)
    assert {k: (ours[k], v) for k, v in out.items() if ours[k] != v} == {}
