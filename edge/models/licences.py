"""Which models the settings use, and whether a commercial product may ship them.

Every model in ``models/manifest.yaml`` carries ``licence`` and ``commercial_use`` (true: the licence
lets a product ship it; false: it does not; null: unknown), and a wake word ``trademark`` when its
phrase is someone else's name (a licence grants no trademark rights: Apache-2.0 section 6).
:func:`in_use` maps the settings to those entries: the configured wake words (by engine), their
front end (openWakeWord's melspectrogram and embedding models; microWakeWord's front end,
pymicro-features, is code without weights), the VAD, the recogniser, the LLM and the sentence
encoder. ``edge models list``, ``edge doctor`` (check ``licences``) and the console's status page
show it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from edge.models.manifest import Manifest, ModelEntry, ModelError, load_manifest

__all__ = ["InUse", "in_use", "wake_manifest_id", "problems"]

#: the VAD and the paraphrase matcher's encoder (edge/stages/vad.py, edge/models/embed.py)
VAD_ID = "silero-vad"
ENCODER_ID = "all-minilm-l6-v2"
OWW_FEATURES = ("oww-melspectrogram", "oww-embedding")


def wake_manifest_id(name: str, engine: str) -> str | None:
    """The manifest id of a stock wake model (``micro-okay-nabu``, ``wake-hey-mycroft``), or None for
    an own model (a path, or one added with ``edge models add``)."""
    if "/" in name or name.endswith((".json", ".tflite", ".onnx")):
        return None
    return f"{'micro' if engine == 'micro' else 'wake'}-{name.replace('_', '-')}"


@dataclass(frozen=True)
class InUse:
    """One model the settings use: ``role`` (wake word, wake-word features, VAD, recognizer, LLM,
    sentence encoder), ``name`` as configured, and its manifest entry (None: not in the manifest,
    e.g. an own wake word or a local file)."""

    role: str
    name: str
    entry: ModelEntry | None

    @property
    def shippable(self) -> str:
        """``yes`` | ``no`` | ``unknown`` | ``own`` (not in the manifest: the integrator's own model)."""
        return self.entry.shippable if self.entry is not None else "own"

    def to_dict(self) -> dict:
        e = self.entry
        return {"role": self.role, "name": self.name, "id": e.id if e else None, "licence": e.licence if e else None,
                "commercial_use": e.commercial_use if e else None, "may_ship": self.shippable,
                "trademark": e.trademark if e else ""}


def in_use(settings, manifest: Manifest | None = None) -> list[InUse]:
    """The models ``settings`` (:class:`edge.config.Settings`) use, with their manifest entries.

    Raises:
        ModelError: the manifest cannot be read.
    """
    m = manifest if manifest is not None else load_manifest()
    by_id = {e.id: e for e in m.models}
    out = []
    for w in settings.wake.models:
        mid = wake_manifest_id(w.name, w.engine)
        out.append(InUse("wake word", f"{Path(w.name).stem} ({w.engine})", by_id.get(mid) if mid else None))
    if any(w.engine == "openwakeword" for w in settings.wake.models):
        out += [InUse("wake-word features", i, by_id.get(i)) for i in OWW_FEATURES]
    out.append(InUse("VAD", VAD_ID, by_id.get(VAD_ID)))
    asr = settings.asr.whisper.model if settings.asr.engine == "whisper" else settings.asr.vosk.model
    out.append(InUse("recognizer", str(asr), by_id.get(str(asr))))
    if settings.llm.engine != "none":
        out.append(InUse("LLM", settings.llm.model, by_id.get(settings.llm.model)))
    if settings.nlu.paraphrase:
        out.append(InUse("sentence encoder", ENCODER_ID, by_id.get(ENCODER_ID)))
    return out


def problems(settings, manifest: Manifest | None = None) -> list[str]:
    """What stands between the configured wake words and a commercial product: a non-commercial or
    unknown licence, or a phrase that is someone else's name. Empty when there is nothing to say."""
    try:
        used = in_use(settings, manifest)
    except ModelError as e:
        return [str(e)]
    out = []
    for u in used:
        if u.role not in ("wake word", "wake-word features") or u.entry is None:
            continue
        if u.entry.commercial_use is not True:
            out.append(f"{u.role} {u.name} is {u.entry.licence} ({'non-commercial' if u.entry.commercial_use is False else 'licence unknown'}): not for a commercial product")
        if u.entry.trademark:
            out.append(f"wake word {u.name} is another's name: {u.entry.trademark}")
    return out
