"""The start-up check of every configured model file: there, readable, and the right kind of file.

:func:`check_configured` looks at each model the settings name (``asr.whisper.model`` or
``asr.vosk.model``; ``llm.model``, each ``llm.chain[i].model`` and ``governor.smaller_models[i]``)
before anything is loaded, and returns one :class:`ModelProblem` per bad one, naming the key, the
path, the check that failed and why:

``missing``     neither an existing path nor an installed model id.
``hidden``      under systemd (``$INVOCATION_ID``), the path is under ``/home``, ``/root`` or ``/run/user``
                and that folder is empty for this process: the unit's ``ProtectHome=`` hides it
                (``/tmp``: ``PrivateTmp=``).
``permission``  the file or a folder on its way cannot be read by this process: its owner, group and
                mode and this process's uid are named.
``lfs-pointer``, ``html``  a Git LFS pointer or a saved HTML page instead of the model.
``magic``       not the format the key needs (GGUF ``b"GGUF"`` + version; a CTranslate2 ``model.bin``
                header; a non-zero ``.rkllm`` header), or a folder where a file is needed or back.
``size``        a manifest model whose file has another size than the manifest says; a GGUF whose
                tensor table is cut off.

Nothing is hashed (``edge models verify`` and ``edge doctor`` check SHA-256); a check reads the first
:data:`edge.models.manifest.HEAD_BYTES` of each file and its size, so it costs milliseconds.
"""
from __future__ import annotations

import grp
import os
import pwd
from dataclasses import dataclass
from pathlib import Path

from edge.models.local import check_gguf_header, check_gguf_structure, check_rkllm_header, find_model
from edge.models.manifest import (
    HEAD_BYTES,
    LFS_PREFIX,
    ModelError,
    check_magic,
    is_html,
    lfs_info,
    load_manifest,
    package_dir,
    resolve,
)

__all__ = ["ModelProblem", "check_configured", "check_model", "PROTECTED"]

#: Folders a hardened unit hides from the service, and the unit setting that does it.
PROTECTED = {"/home": "ProtectHome=", "/root": "ProtectHome=", "/run/user": "ProtectHome=", "/tmp": "PrivateTmp="}


@dataclass(frozen=True)
class ModelProblem:
    """One configured model that cannot be used: ``key`` (settings key), ``model`` (as configured),
    ``path`` (what was looked at), ``check`` (see the module docstring), ``why`` (with the fix)."""

    key: str
    model: str
    path: str
    check: str
    why: str

    def __str__(self) -> str:
        return f"{self.key}: {self.path}: {self.check} check failed: {self.why}"


def _who(st: os.stat_result) -> str:
    try:
        owner = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        owner = "?"
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = "?"
    return f"owner {owner} (uid {st.st_uid}), group {group} (gid {st.st_gid}), mode {st.st_mode & 0o7777:04o}"


def _hidden(p: Path) -> str | None:
    """The unit setting that hides ``p`` from this process: we run as a systemd service (it sets
    ``$INVOCATION_ID``), ``p`` lies in a folder such a setting hides, and that folder is empty or
    cannot be listed here."""
    if not os.environ.get("INVOCATION_ID"):
        return None
    for top, setting in PROTECTED.items():
        if p.is_relative_to(top) and p != Path(top):
            try:
                empty = not any(Path(top).iterdir())
            except OSError:
                empty = True
            if empty:
                return setting
    return None


def _unreadable(p: Path) -> str | None:
    """Why this process cannot read ``p`` (a folder on the way not searchable, the file not
    readable), or None."""
    for d in reversed(p.parents):
        if d.exists() and not os.access(d, os.X_OK):
            return f"the folder {d} cannot be entered by uid {os.geteuid()}: {_who(d.stat())}"
    if p.exists() and not os.access(p, os.R_OK):
        kind = "folder" if p.is_dir() else "file"
        return (f"the {kind} cannot be read by uid {os.geteuid()} (this service): {_who(p.stat())}; fix: "
                f"chgrp edge {p} && chmod g+r{'x' if p.is_dir() else ''} {p}, or copy it under /var/lib/edge/models")
    return None


def _head(p: Path) -> bytes:
    with open(p, "rb") as f:
        return f.read(HEAD_BYTES)


def _file_problem(p: Path, fmt: str, head: bytes, want_size: int | None) -> tuple[str, str] | None:
    """(check, why) for a file that should be ``fmt`` (gguf | rkllm | ctranslate2), or None."""
    size = p.stat().st_size
    if head.startswith(LFS_PREFIX):
        return "lfs-pointer", f"{lfs_info(head)}, not the model ({size} bytes); fetch the file itself (git lfs pull)"
    if is_html(head):
        return "html", f"an HTML page ({size} bytes) starting {head[:24]!r}, not the model; download it again"
    if fmt == "gguf":
        ok, what = check_gguf_header(head)
    elif fmt == "rkllm":
        ok, what = check_rkllm_header(head)
    else:
        ok, expected, actual = check_magic(fmt, head)
        what = f"expected {expected}, got {actual}"
    if not ok:
        return "magic", f"not a {fmt} file: {what}"
    if want_size is not None and size != want_size:
        return "size", f"{size} bytes, the manifest says {want_size}; the file is cut off or another version"
    if fmt == "gguf":
        ok, what = check_gguf_structure(p)
        if not ok:
            return "size", what
    return None


def _manifest_size(p: Path) -> int | None:
    """The manifest's size for the installed file ``p``, when ``p`` is one of its files."""
    try:
        manifest = load_manifest()
    except ModelError:
        return None
    real = p.resolve()
    for entry in manifest.models:
        try:
            base = package_dir(entry)
        except ModelError:
            continue
        for f in entry.files:
            if (base / f.path).resolve() == real:
                return f.size
    return None


def check_model(key: str, model: str, fmt: str, models_dir: str | None = None) -> ModelProblem | None:
    """The problem with the model ``model`` configured at ``key``, or None when it can be used.

    ``fmt``: ``gguf``, ``rkllm`` (a file), ``ctranslate2`` (a Whisper folder with ``model.bin``),
    ``folder`` (a vosk model: only there and readable)."""
    raw = Path(model).expanduser()
    looks_like_path = raw.is_absolute() or "/" in model or raw.suffix in (".gguf", ".rkllm")
    if looks_like_path:
        p = raw
    else:
        try:
            p = find_model(model, models_dir) if fmt in ("gguf", "rkllm") else resolve(model)
        except (ModelError, FileNotFoundError) as e:
            return ModelProblem(key, model, model, "missing", f"{e}; see 'edge models list'")
    why = _unreadable(p)
    if why:
        return ModelProblem(key, model, str(p), "permission", why)
    if not p.exists():
        setting = _hidden(p)
        if setting:
            return ModelProblem(key, model, str(p), "hidden", (
                f"does not exist for this process: the service unit's {setting} hides "
                f"{next(t for t in PROTECTED if p.is_relative_to(t))} from it; fix: copy the model under "
                f"/var/lib/edge/models and point {key} there"))
        return ModelProblem(key, model, str(p), "missing", f"no such file or folder; fix: point {key} at the model")
    if fmt == "folder":
        return None if p.is_dir() else ModelProblem(key, model, str(p), "magic", "a file, but a model folder is needed")
    target = p / "model.bin" if fmt == "ctranslate2" and p.is_dir() else p
    if target.is_dir() or not target.exists():
        what = "a folder" if target.is_dir() else f"a folder without {target.name}"
        need = "a CTranslate2 Whisper folder (model.bin, config.json)" if fmt == "ctranslate2" else f"a .{fmt} file"
        return ModelProblem(key, model, str(target), "magic", f"{what}, but {need} is needed")
    try:
        found = _file_problem(target, fmt, _head(target), _manifest_size(target))
    except OSError as e:
        return ModelProblem(key, model, str(target), "permission", f"cannot be read: {e}")
    return None if found is None else ModelProblem(key, model, str(target), *found)


def _llm_format(model: str, engine: str) -> str:
    return "rkllm" if engine == "rkllm" or str(model).endswith(".rkllm") else "gguf"


def check_configured(settings) -> tuple[list[ModelProblem], list[ModelProblem]]:
    """``(speech, llm)``: the problems of the speech-recognition model (the box cannot listen without
    it) and of the LLM models (the box can, on the grammar path), each as :class:`ModelProblem`."""
    mdir = getattr(settings.models, "dir", None)
    if settings.asr.engine == "whisper":
        speech = [check_model("asr.whisper.model", settings.asr.whisper.model, "ctranslate2", mdir)]
    else:
        speech = [check_model("asr.vosk.model", settings.asr.vosk.model, "folder", mdir)]
    llm = []
    if settings.llm.chain:
        for i, step in enumerate(settings.llm.chain):
            if step.engine == "llamacpp" and not step.model:  # the chain's CPU step is llm.model
                llm.append(check_model("llm.model", settings.llm.model, "gguf", mdir))
            elif step.engine != "grammar" and step.model:
                llm.append(check_model(f"llm.chain[{i}].model", step.model, _llm_format(step.model, step.engine), mdir))
    elif settings.llm.engine != "none":
        llm.append(check_model("llm.model", settings.llm.model, "gguf", mdir))
    for i, m in enumerate(settings.governor.smaller_models):
        llm.append(check_model(f"governor.smaller_models[{i}]", m, "gguf", mdir))
    return [p for p in speech if p], [p for p in llm if p]
