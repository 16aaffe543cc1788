"""Settings: one YAML file validated at start into frozen pydantic models.

Order of merging, later wins: the package defaults (``edge/defaults.yaml``), a board config
(``board-configs/NAME.yaml``, when the user config names ``board:`` or ``--board`` is given), the
user's ``--config`` file. Unknown keys and out-of-range values are refused with a message that
names the file, the key and the allowed values.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULTS = PACKAGE_DIR / "defaults.yaml"
BOARD_DIR = PACKAGE_DIR.parent / "board-configs"


class ConfigError(ValueError):
    """A configuration file that does not validate; the message names file, key and fix."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StoreSettings(_Frozen):
    path: Path = Field(description="SQLite database file")


class AudioSettings(_Frozen):
    input_device: int | str | None = Field(None, description="capture device index or name; None = default")
    chunk_samples: int = Field(1024, ge=64, le=65536, description="samples per device read")


class WakeModel(_Frozen):
    name: str = Field(description="openWakeWord model name (manifest id without _v0.1) or an .onnx path")
    threshold: float = Field(0.5, gt=0.0, lt=1.0, description="score above which the wake word triggers")


class WakeSettings(_Frozen):
    models: list[WakeModel] = Field(min_length=1)
    refractory_ms: int = Field(2000, ge=0, le=60000, description="ms after a trigger with no new trigger")


class EndpointSettings(_Frozen):
    vad_threshold: float = Field(0.5, gt=0.0, lt=1.0, description="Silero VAD speech probability")
    trailing_silence_ms: int = Field(700, ge=80, le=10000, description="ms of silence that end an utterance")
    max_utterance_ms: int = Field(10000, ge=500, le=60000, description="ms, hard cap on one utterance")
    no_speech_timeout_ms: int = Field(5000, ge=500, le=60000, description="ms after the wake word without speech")


class WhisperSettings(_Frozen):
    model: str = "whisper-tiny-en"
    compute_type: Literal["int8", "int8_float32", "float32"] = "int8"
    beam_size: int = Field(1, ge=1, le=10)
    threads: int = Field(2, ge=1, le=64)


class VoskSettings(_Frozen):
    model: str = "vosk-ko"
    sample_rate: int = Field(16000, description="Hz; the pipeline's frame rate")
    command_mode: bool = Field(False, description="recognise only the inventory's phrases plus [unk]")


class AsrSettings(_Frozen):
    engine: Literal["whisper", "vosk"] = "whisper"
    bias: bool = Field(True, description="bias recognition toward the inventory's words")
    whisper: WhisperSettings = WhisperSettings()
    vosk: VoskSettings = VoskSettings()


class LlmSettings(_Frozen):
    engine: Literal["llamacpp", "none"] = "llamacpp"
    model: str = "smollm2-135m-instruct-q4_1"
    n_ctx: int = Field(2048, ge=256, le=131072, description="context window in tokens; always explicit")
    max_tokens: int = Field(48, ge=1, le=4096, description="answer budget in tokens")
    threads: int = Field(2, ge=1, le=64)
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    seed: int = 7


class TtsSettings(_Frozen):
    engine: Literal["pyttsx3"] = "pyttsx3"
    voice: str | None = None
    rate_wpm: int = Field(170, ge=60, le=450, description="words per minute")


class BoardSettings(_Frozen):
    model_config = ConfigDict(extra="allow", frozen=True)
    name: str = "unknown"


class Settings(_Frozen):
    language: Literal["en", "zh"] = "en"
    output_dir: Path = Path("out")
    board: BoardSettings | None = None
    store: StoreSettings
    audio: AudioSettings = AudioSettings()
    wake: WakeSettings
    endpoint: EndpointSettings = EndpointSettings()
    asr: AsrSettings = AsrSettings()
    llm: LlmSettings = LlmSettings()
    tts: TtsSettings = TtsSettings()


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _read_yaml(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found; pass an existing file to --config") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings, got {type(data).__name__}")
    return data


def _describe(e: ValidationError, sources: str) -> str:
    lines = [f"invalid configuration ({sources}):"]
    for err in e.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key; remove it or check its spelling (see edge/defaults.yaml for all keys)"
        lines.append(f"  {key}: {msg} (got {err.get('input')!r})")
    return "\n".join(lines)


def board_path(name: str) -> Path:
    """``board-configs/NAME.yaml``; raises :class:`ConfigError` listing the boards when missing."""
    p = BOARD_DIR / f"{name}.yaml"
    if not p.exists():
        known = ", ".join(sorted(q.stem for q in BOARD_DIR.glob("*.yaml")))
        raise ConfigError(f"board '{name}': no file {p}; known boards: {known}")
    return p


def load_settings(path: str | Path | None = None, board: str | None = None,
                  overrides: dict[str, Any] | None = None) -> Settings:
    """Defaults ← board config ← ``path`` ← ``overrides`` → validated :class:`Settings`.

    Raises:
        ConfigError: unreadable file, bad YAML, unknown key or a value out of its range; the message
            names the files merged and each failing key with the allowed values.
    """
    data = _read_yaml(DEFAULTS)
    sources = [str(DEFAULTS)]
    user = _read_yaml(Path(path)) if path else {}
    if isinstance(user.get("board"), str):  # a board *name* selects the file; its mapping is kept
        board = board or user["board"]
        user = {k: v for k, v in user.items() if k != "board"}
    if board:
        bp = board_path(board)
        data = _merge(data, _read_yaml(bp))
        sources.append(str(bp))
    if path:
        data = _merge(data, user)
        sources.append(str(path))
    if overrides:
        data = _merge(data, overrides)
    try:
        return Settings.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_describe(e, " <- ".join(sources))) from None
