"""Offline model bundles: ``edge models bundle`` → ``edge models install`` round trip with real models
(SmolLM2 GGUF through llama.cpp, ONNX through onnxruntime); a bundle with one corrupted member, a
path-traversal member, a symlink member, and a model that fails its smoke inference are all refused
with ``current`` left where it was."""
from __future__ import annotations

import hashlib
import io
import os
import struct
import tarfile
from pathlib import Path

import pytest
import yaml

from edge.cli import main
from edge.models import manifest as models
from edge.models.bundle import BundleError, build_bundle, current_target, install_bundle

SMALL = ["silero-vad", "wake-hey-rhasspy"]  # ~2 MB of ONNX
LLM = "smollm2-135m-instruct-q4_1"


@pytest.fixture(scope="module")
def small_tar(tmp_path_factory):
    out = tmp_path_factory.mktemp("b") / "small.tar"
    build_bundle("x86-dev", out, SMALL)
    return out


def _rewrite(src: Path, dst: Path, change) -> Path:
    """Copy a tar member by member; ``change(info, data) -> (info, data) | None`` may edit or drop one."""
    with tarfile.open(src) as tin, tarfile.open(dst, "w", format=tarfile.PAX_FORMAT) as tout:
        for m in tin.getmembers():
            data = tin.extractfile(m).read() if m.isfile() else b""
            res = change(m, data)
            if res is None:
                continue
            m, data = res
            tout.addfile(m, io.BytesIO(data) if m.isfile() else None)
    return dst


def _leftovers(models_dir: Path) -> list[str]:
    return sorted(p.name for p in models_dir.iterdir() if p.name.startswith(".") or p.name.endswith(".part"))


def test_round_trip_with_the_llm_and_onnx_models(tmp_path, capsys):
    out = tmp_path / "x86-dev.tar"
    assert main(["models", "bundle", "--board", "x86-dev", str(out), "--model", LLM, "--model", "silero-vad"]) == 0
    with tarfile.open(out) as tar:
        names = set(tar.getnames())
        sums = tar.extractfile("SHA256SUMS").read().decode().splitlines()
    assert {"bundle.yaml", "manifest.yaml", "SHA256SUMS",
            f"models/{LLM}/SmolLM2-135M-Instruct.Q4_1.gguf", "models/silero-vad/resources/models/silero_vad.onnx"} <= names
    assert len(sums) == len(names) - 1  # every member but SHA256SUMS itself
    src = models.resolve(LLM)
    assert f"{models.sha256_file(src)}  models/{LLM}/SmolLM2-135M-Instruct.Q4_1.gguf" in sums

    mdir = tmp_path / "models"
    assert main(["models", "install", str(out), "--models-dir", str(mdir)]) == 0
    io_ = capsys.readouterr()
    bid = current_target(mdir)
    assert bid and bid.startswith("bundle-x86-dev-") and f"current -> {bid} (was none)" in io_.out
    assert f"{LLM}: llama.cpp generated 1 token" in io_.err and "silero-vad: onnxruntime session loaded" in io_.err
    # the installed manifest resolves into the bundle folder and verifies
    m = models.load_manifest(mdir / "current" / "manifest.yaml")
    p = models.resolve(LLM, m)
    assert p.resolve().is_relative_to((mdir / bid).resolve())
    assert all(c.ok for c in models.verify(None, m))
    assert _leftovers(mdir) == []
    # installing it again changes nothing
    assert main(["models", "install", str(out), "--models-dir", str(mdir)]) == 0
    assert "already the current model set" in capsys.readouterr().out


def test_a_new_bundle_switches_and_the_old_set_stays(tmp_path, small_tar):
    mdir = tmp_path / "models"
    first = install_bundle(small_tar, mdir)
    other = tmp_path / "other.tar"
    build_bundle("x86-dev", other, ["silero-vad"])
    second = install_bundle(other, mdir)
    assert second.previous == first.bundle_id and current_target(mdir) == second.bundle_id
    assert (mdir / first.bundle_id / "manifest.yaml").exists()  # kept for a rollback
    assert os.readlink(mdir / "current") == second.bundle_id  # relative link


def test_one_corrupted_member_is_refused_and_nothing_switches(tmp_path, small_tar):
    mdir = tmp_path / "models"
    other = tmp_path / "other.tar"
    build_bundle("x86-dev", other, ["silero-vad"])
    good = install_bundle(other, mdir)  # the set in use
    before = sorted(p.name for p in mdir.iterdir())

    def flip(m, data):
        if m.name.endswith("hey_rhasspy_v0.1.onnx"):
            b = bytearray(data)
            b[len(b) // 2] ^= 0x01  # one bit, same size, same magic: only the SHA-256 can tell
            return m, bytes(b)
        return m, data

    corrupt = _rewrite(small_tar, tmp_path / "corrupt.tar", flip)
    with pytest.raises(BundleError) as e:
        install_bundle(corrupt, mdir)
    assert e.value.check == "sha256" and "hey_rhasspy_v0.1.onnx" in str(e.value)
    assert current_target(mdir) == good.bundle_id
    assert sorted(p.name for p in mdir.iterdir()) == before  # no new folder, no staging left
    # the same bundle undamaged installs fine afterwards
    assert install_bundle(small_tar, mdir).previous == good.bundle_id


def test_cli_refusal_says_nothing_switched(tmp_path, small_tar, capsys):
    mdir = tmp_path / "models"
    install_bundle(small_tar, mdir)
    trunc = tmp_path / "trunc.tar"
    trunc.write_bytes(small_tar.read_bytes()[: small_tar.stat().st_size // 2])
    assert main(["models", "install", str(trunc), "--models-dir", str(mdir)]) == 2  # a user error
    err = capsys.readouterr().err
    assert err.startswith("edge: models install: refused, nothing switched: member:") and err.count("\n") == 1


def _tar_with(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    with tarfile.open(path, "w") as t:
        for ti, data in members:
            t.addfile(ti, io.BytesIO(data) if ti.isfile() else None)
    return path


def _file(name, data):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    return ti, data


@pytest.mark.parametrize("evil", ["../../escaped.txt", "/etc/escaped.txt", "models/../../escaped.txt"])
def test_path_traversal_is_refused_before_anything_is_written(tmp_path, evil):
    payload = b"owned"
    sums = f"{hashlib.sha256(payload).hexdigest()}  {evil}\n"
    tar = _tar_with(tmp_path / "evil.tar", [_file("bundle.yaml", b"id: bundle-x-1\n"), _file(evil, payload),
                                             _file("SHA256SUMS", sums.encode())])
    mdir = tmp_path / "a" / "b" / "models"
    with pytest.raises(BundleError) as e:
        install_bundle(tar, mdir)
    assert e.value.check == "member" and "outside" in str(e.value)
    assert not any(p.name == "escaped.txt" for p in tmp_path.rglob("*"))
    assert list(mdir.iterdir()) == []


def test_symlink_member_is_refused(tmp_path):
    link = tarfile.TarInfo("models/x/weights.gguf")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/shadow"
    tar = _tar_with(tmp_path / "link.tar", [_file("bundle.yaml", b"id: bundle-x-1\n"), (link, b"")])
    with pytest.raises(BundleError) as e:
        install_bundle(tar, tmp_path / "models")
    assert e.value.check == "member" and "symlink" in str(e.value)


def test_a_model_that_fails_its_smoke_inference_is_not_switched_to(tmp_path, small_tar):
    """A GGUF that passes size, SHA-256 and magic checks but that llama.cpp cannot load."""
    fake_dir = tmp_path / "fake"
    fake_dir.mkdir()
    gguf = fake_dir / "broken.gguf"
    gguf.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 0))  # a valid, empty GGUF: no architecture, no tensors
    raw = yaml.safe_load(models.default_manifest_path().read_text())
    raw["models"].append({"id": "broken-llm", "kind": "llm", "package": "none==0", "path": "broken.gguf",
                          "licence": "MIT", "source": "test", "root": str(fake_dir),
                          "files": models.describe_files(gguf)})
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(yaml.safe_dump(raw))
    out = tmp_path / "broken.tar"
    build_bundle("x86-dev", out, ["broken-llm"], manifest)

    mdir = tmp_path / "models"
    good = install_bundle(small_tar, mdir)
    with pytest.raises(BundleError) as e:
        install_bundle(out, mdir)
    assert e.value.check == "smoke" and "broken-llm" in str(e.value)
    assert current_target(mdir) == good.bundle_id
    assert sorted(p.name for p in mdir.iterdir()) == sorted([good.bundle_id, "current"])


def test_a_damaged_source_model_is_never_bundled(tmp_path):
    src = models.resolve("silero-vad")
    bad_root = tmp_path / "damaged"
    dest = bad_root / "resources/models/silero_vad.onnx"
    dest.parent.mkdir(parents=True)
    dest.write_bytes(src.read_bytes()[:-10])  # truncated
    raw = yaml.safe_load(models.default_manifest_path().read_text())
    for m in raw["models"]:
        if m["id"] == "silero-vad":
            m["root"] = str(bad_root)
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(yaml.safe_dump(raw))
    with pytest.raises(BundleError) as e:
        build_bundle("x86-dev", tmp_path / "out.tar", ["silero-vad"], manifest)
    assert e.value.check == "source" and "size" in str(e.value)
    assert not (tmp_path / "out.tar").exists()


@pytest.mark.parametrize("content", [b"", b"<html>not a bundle</html>", b"\x1f\x8b cut gzip"])
def test_a_file_that_is_not_a_tar_is_refused_in_one_line(tmp_path, content):
    bad = tmp_path / "bundle.tar"
    bad.write_bytes(content)
    with pytest.raises(BundleError) as e:
        install_bundle(bad, tmp_path / "models")
    msg = str(e.value)
    assert e.value.check == "member" and "is not a tar file" in msg and "edge models bundle" in msg
    assert "\n" not in msg
    assert not (tmp_path / "models" / "current").exists()
