"""edge models add (edge.models.local): installing a model from local media after checking it, and
each damaged input of case C12 refused before anything loads it, with the check that failed named.
The GGUF is the real SmolLM2 file from the venv; the manifest is a copy in tmp_path."""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
import yaml

from edge.cli import main as cli_main
from edge.models import local as mi
from edge.models.manifest import ModelError, load_manifest, resolve

REPO = Path(__file__).resolve().parents[1]
GGUF_ID = "smollm2-135m-instruct-q4_1"


@pytest.fixture(scope="module")
def real_gguf() -> Path:
    return resolve(GGUF_ID)


@pytest.fixture
def manifest(tmp_path, real_gguf) -> Path:
    """A manifest with a pinned local GGUF (the SmolLM2 file's real size and SHA-256), the same
    GGUF without a published hash, and an .rkllm entry without a published hash."""
    f = load_manifest(REPO / "models" / "manifest.yaml").get(GGUF_ID).files[0]
    common = {"kind": "llm", "licence": "Apache-2.0", "repo": "HuggingFaceTB/SmolLM2-135M-Instruct",
              "source": "local media", "installed": False}
    data = {"schema": 1, "models": [], "local_models": [
        {"id": "smol-local", "format": "gguf", "filename": real_gguf.name, "size": f.size, "sha256": f.sha256,
         **common},
        {"id": "smol-unpinned", "format": "gguf", "filename": "smol-unpinned.gguf", "size": None, "sha256": None,
         **common},
        {"id": "npu-model", "format": "rkllm", "filename": "npu-model.rkllm", "size": None, "sha256": None,
         "platform": "rk3588", **common},
    ]}
    p = tmp_path / "manifest.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


@pytest.fixture
def media(tmp_path) -> Path:
    d = tmp_path / "usb"
    d.mkdir()
    return d


@pytest.fixture
def models_dir(tmp_path) -> Path:
    return tmp_path / "models"


def copy_prefix(src: Path, dst: Path, n: int | None = None) -> Path:
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        if n is None:
            shutil.copyfileobj(fin, fout, 1 << 20)
        else:
            fout.write(fin.read(n))
    return dst


def refused(check: str, *args, **kwargs) -> str:
    with pytest.raises(mi.ModelAddError) as ei:
        mi.add(*args, **kwargs)
    assert ei.value.check == check, str(ei.value)
    assert str(ei.value).startswith(f"{check} check failed")
    return str(ei.value)


def installed_files(models_dir: Path) -> list[str]:
    return sorted(p.name for p in models_dir.iterdir()) if models_dir.exists() else []


# ------------------------------------------------------------------------------------ the good path


def test_an_intact_gguf_is_checked_installed_and_loadable(manifest, media, models_dir, real_gguf):
    src = copy_prefix(real_gguf, media / real_gguf.name)
    res = mi.add(src, models_dir=models_dir, manifest_path=manifest)  # id found from the file name
    assert res.entry.id == "smol-local" and res.path == models_dir / real_gguf.name
    assert res.checks == ("id", "missing", "lfs-pointer", "html", "magic", "size", "structure", "sha256")
    assert res.sha256 == hashlib.sha256(res.path.read_bytes()).hexdigest() and not res.pinned_now
    assert installed_files(models_dir) == [real_gguf.name]  # no temporary file left
    assert mi.find_model("smol-local", models_dir, manifest) == res.path

    from edge.llm.base import GenerationRequest, generate
    from edge.llm.llamacpp import LlamaCppEngine

    os.environ["EDGE_MANIFEST"] = str(manifest)
    try:
        eng = LlamaCppEngine("smol-local", n_ctx=256, models_dir=models_dir)
        text, _ = generate(eng, GenerationRequest([{"role": "user", "content": "Hi"}], max_tokens=3))
        eng.close()
    finally:
        del os.environ["EDGE_MANIFEST"]
    assert text


def test_a_model_not_installed_yet_names_the_command(manifest, models_dir):
    with pytest.raises(FileNotFoundError, match="edge models add .*--id npu-model"):
        mi.find_model("npu-model", models_dir, manifest)


# ------------------------------------------------------------------------------------ case C12


def test_c12_gguf_cut_in_half_fails_the_size_check(manifest, media, models_dir, real_gguf):
    src = copy_prefix(real_gguf, media / real_gguf.name, real_gguf.stat().st_size // 2)
    msg = refused("size", src, "smol-local", models_dir, manifest_path=manifest)
    assert f"expected {real_gguf.stat().st_size} bytes" in msg and "truncated" in msg
    assert installed_files(models_dir) == []


def test_c12_gguf_cut_in_half_without_a_known_size_fails_the_structure_check(manifest, media, models_dir,
                                                                            real_gguf):
    src = copy_prefix(real_gguf, media / "smol-unpinned.gguf", real_gguf.stat().st_size // 2)
    msg = refused("structure", src, "smol-unpinned", models_dir, trust_on_first_use=True, manifest_path=manifest)
    assert "truncated" in msg
    assert installed_files(models_dir) == []


def test_c12_empty_file_fails_the_magic_check(manifest, media, models_dir):
    src = media / "SmolLM2-135M-Instruct.Q4_1.gguf"
    src.write_bytes(b"")
    assert "empty file (0 bytes)" in refused("magic", src, models_dir=models_dir, manifest_path=manifest)


def test_c12_html_page_saved_as_gguf_fails_the_html_check(manifest, media, models_dir):
    src = media / "SmolLM2-135M-Instruct.Q4_1.gguf"
    src.write_text("<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>Please log in</body></html>\n")
    assert "HTML page" in refused("html", src, models_dir=models_dir, manifest_path=manifest)


def test_c12_git_lfs_pointer_fails_the_lfs_check(manifest, media, models_dir):
    src = media / "SmolLM2-135M-Instruct.Q4_1.gguf"
    src.write_text("version https://git-lfs.github.com/spec/v1\n"
                   "oid sha256:b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53\n"
                   "size 98362432\n")
    msg = refused("lfs-pointer", src, models_dir=models_dir, manifest_path=manifest)
    assert "Git LFS pointer" in msg and "size 98362432" in msg and "git lfs pull" in msg


def test_c12_rkllm_with_a_zeroed_header_fails_the_magic_check(manifest, media, models_dir):
    src = media / "npu-model.rkllm"
    src.write_bytes(bytes(4096) + os.urandom(4096))
    msg = refused("magic", src, models_dir=models_dir, trust_on_first_use=True, manifest_path=manifest)
    assert "all zero" in msg
    assert installed_files(models_dir) == []


def test_c12_gguf_with_other_bytes_fails_the_sha256_check_and_leaves_nothing(manifest, media, models_dir,
                                                                           real_gguf):
    src = copy_prefix(real_gguf, media / real_gguf.name)
    with open(src, "r+b") as fh:  # one byte of tensor data: header, size and structure still pass
        fh.seek(real_gguf.stat().st_size - 1000)
        b = fh.read(1)
        fh.seek(-1, 1)
        fh.write(bytes([b[0] ^ 0xFF]))
    msg = refused("sha256", src, models_dir=models_dir, manifest_path=manifest)
    assert "expected SHA-256 b179c952" in msg
    assert installed_files(models_dir) == []  # the temporary copy was removed, nothing renamed in


def test_a_wrong_format_magic_fails(manifest, media, models_dir):
    src = media / "SmolLM2-135M-Instruct.Q4_1.gguf"
    src.write_bytes(b"GGML" + bytes(100))
    assert "not b'GGUF'" in refused("magic", src, models_dir=models_dir, manifest_path=manifest)


# ----------------------------------------------------------------------------- trust on first use


def rkllm_file(path: Path, tail: bytes) -> Path:
    path.write_bytes(b"RKLLM\x00\x01\x03" + bytes(range(56)) + tail)
    return path


def test_an_unpublished_hash_needs_trust_on_first_use_then_is_pinned(manifest, media, models_dir):
    src = rkllm_file(media / "npu-model.rkllm", b"\x11" * 4000)
    msg = refused("trust", src, models_dir=models_dir, manifest_path=manifest)
    assert "--trust-on-first-use" in msg and installed_files(models_dir) == []
    res = mi.add(src, models_dir=models_dir, trust_on_first_use=True, manifest_path=manifest)
    assert res.pinned_now and res.checks[-1] == "trust"
    pins = mi.load_pins(models_dir)
    assert pins["npu-model"]["sha256"] == res.sha256 and pins["npu-model"]["size"] == 4064
    assert pins["npu-model"]["head"] == src.read_bytes()[:16].hex()
    # the pin now holds: another file under the same id is refused even with --trust-on-first-use
    (media / "other").mkdir()
    other = rkllm_file(media / "other" / "npu-model.rkllm", b"\x22" * 4000)
    msg = refused("sha256", other, "npu-model", models_dir, trust_on_first_use=True, manifest_path=manifest)
    assert res.sha256 in msg
    assert (models_dir / "npu-model.rkllm").read_bytes() == src.read_bytes()  # the installed file is untouched


def test_the_file_name_must_match_an_entry_or_an_id_be_given(manifest, media, models_dir, real_gguf):
    src = media / "random-name.gguf"
    src.write_bytes(b"GGUF")
    msg = refused("id", src, models_dir=models_dir, manifest_path=manifest)
    assert "pass --id" in msg and "smol-local" in msg
    assert "unknown local model id" in refused("id", src, "nope", models_dir, manifest_path=manifest)


# ------------------------------------------------------------------------------------- CLI, data


def test_cli_models_add(monkeypatch, manifest, media, models_dir, capsys):
    monkeypatch.setenv("EDGE_MANIFEST", str(manifest))
    bad = media / "npu-model.rkllm"
    bad.write_bytes(bytes(128))
    assert cli_main(["models", "add", str(bad), "--models-dir", str(models_dir), "--trust-on-first-use"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"edge: {bad}: not installed: magic check failed") and err.count("\n") == 1
    good = rkllm_file(media / "npu-model.rkllm", b"\x33" * 100)
    assert cli_main(["models", "add", str(good), "--id", "npu-model", "--models-dir", str(models_dir),
                     "--trust-on-first-use"]) == 0
    out = capsys.readouterr().out
    assert "installed npu-model" in out and "pinned" in out and (models_dir / "npu-model.rkllm").is_file()


def test_a_models_dir_that_is_a_file_is_a_one_line_error(monkeypatch, manifest, media, tmp_path, capsys):
    monkeypatch.setenv("EDGE_MANIFEST", str(manifest))
    blocker = tmp_path / "models-file"
    blocker.write_text("x")
    src = rkllm_file(media / "npu-model.rkllm", b"\x33" * 100)
    with pytest.raises(ModelError, match="a file, not a folder"):
        mi.add(src, "npu-model", blocker, trust_on_first_use=True, manifest_path=manifest)
    assert cli_main(["models", "add", str(src), "--models-dir", str(blocker), "--trust-on-first-use"]) == 2
    err = capsys.readouterr().err
    assert err == f"edge: {src}: not installed: {blocker}: a file, not a folder; --models-dir (settings " \
                  f"models.dir) names the folder the models go in\n"
    assert blocker.read_text() == "x"


def test_repo_manifest_lists_the_board_models():
    entries = {m.id: m for m in mi.load_local_models(REPO / "models" / "manifest.yaml")}
    assert {"qwen2.5-3b-instruct-q4_k_m", "qwen2.5-1.5b-instruct-q4_k_m", "qwen2.5-3b-instruct-w8a8-rk3588",
            "qwen2.5-3b-instruct-w4a16-rk3576"} <= set(entries)
    for m in entries.values():
        assert m.source == "local media" and m.installed is False and m.repo and m.licence and m.note
        if m.format == "gguf":
            assert m.pinned and len(m.sha256) == 64 and m.size > 500_000_000
        else:
            assert m.platform in ("rk3588", "rk3576") and m.quantization in ("w8a8", "w4a16")
            assert m.sha256 is None or m.pinned
    assert entries["qwen2.5-3b-instruct-q4_k_m"].licence == "LicenseRef-Qwen-Research"
    assert entries["qwen2.5-1.5b-instruct-q4_k_m"].licence == "Apache-2.0"
    assert entries["qwen2.5-3b-instruct-w8a8-rk3588"].platform == "rk3588"
    assert entries["qwen2.5-3b-instruct-w4a16-rk3576"].quantization == "w4a16"


@pytest.mark.parametrize("mutate, match", [
    (lambda e: e.update(format="onnx"), "format"),
    (lambda e: e.update(sha256="abc"), "sha256"),
    (lambda e: e.update(size=-5), "size"),
    (lambda e: e.pop("repo"), "repo"),
])
def test_a_malformed_local_entry_is_refused(tmp_path, manifest, mutate, match):
    data = yaml.safe_load(manifest.read_text())
    mutate(data["local_models"][0])
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(ModelError, match=match):
        mi.load_local_models(p)
