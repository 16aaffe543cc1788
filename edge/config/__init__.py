"""Settings: one YAML file validated at start into frozen pydantic models.

Order of merging, later wins: the package defaults (``edge/defaults.yaml``), a board config
(``board-configs/NAME.yaml``, when the user config names ``board:`` or ``--board`` is given), the
user's ``--config`` file. Unknown keys and out-of-range values are refused with a message that
names the file, the key and the allowed values.

``$EDGE_SETTINGS_LAYER``, when set, names one more YAML file merged after the board config and
before the ``--config`` file: settings for a whole installation or test run that every command
and child process picks up. The test suite and CI point it at ``tests/small-models.yaml``
(``llm.model``: SmolLM2-135M), so tests of plumbing do not load the 1 GB default model.
"""
from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from edge.config.yamlfile import (  # noqa: F401 - part of this module's interface
    MAX_CONFIG_BYTES,
    MAX_CONFIG_NODES,
    ConfigError,
    expanded_nodes,
    read_yaml,
    yaml_problem,
)
from edge.paths import data_dir

#: Environment variable naming an extra settings file (see the module doc).
LAYER_ENV = "EDGE_SETTINGS_LAYER"
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # edge/, where defaults.yaml is
DEFAULTS = PACKAGE_DIR / "defaults.yaml"
BOARD_DIR = data_dir("board-configs")


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StoreSettings(_Frozen):
    path: Path = Field(description="SQLite database file")
    timezone: str | None = Field(None, description="IANA zone the records' periods (today, last week) are read in; "
                                 "null = the system's")
    week_start: Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] = Field(
        "monday", description="the first day of a week for 'this week' and 'last week'")

    @model_validator(mode="after")
    def _known_zone(self):
        from edge.stock.periods import local_zone
        local_zone(self.timezone)  # a ValueError naming store.timezone and the fix
        return self


class AudioSettings(_Frozen):
    input_device: int | str | None = Field(None, description="capture device index or name; None = default")
    chunk_samples: int = Field(1024, ge=64, le=65536, description="samples per device read")
    # 20 s: the voice loop decodes in its own thread, and on a busy 2-core machine it was measured ~6.1 s
    # behind (256 chunks, 5.9 s at 44.1 kHz, dropped the end of a command); 20 s of 44.1 kHz stereo is 3.4 MiB
    ring_ms: float | None = Field(20000.0, ge=10.0, le=60000.0, description="capture ring buffer in ms; when the "
                                  "consumer falls further behind, the oldest audio is dropped and counted "
                                  "(capture overflows in edge status and /metrics); None: 256 chunks (~5 s at 48 kHz)")
    echo_cancellation: bool = Field(False, description="capture removes the box's own voice: "
                                    "a wake word during a reply is a barge-in")


class WakeModel(_Frozen):
    """A wake-word model (edge.stages.wake); no engine: the one its name means (wake_engines.default_engine)."""

    name: str = Field(description="stock model (micro: okay_nabu, hey_mycroft, alexa, hey_jarvis; openwakeword: "
                      "hey_mycroft, alexa, hey_jarvis, hey_rhasspy), a model added with `edge models add`, or a path")
    engine: Literal["micro", "openwakeword"] | None = Field(None, description="micro (pymicro-wakeword) or openwakeword")
    threshold: float | None = Field(None, gt=0.0, lt=1.0, description="score above which the wake word triggers; "
                                    "null = the model's own (micro: its JSON's probability_cutoff; openwakeword: 0.5)")

    @model_validator(mode="after")
    def _engine_installed(self):
        from edge.stages.wake_engines import default_engine, engine_missing

        object.__setattr__(self, "engine", self.engine or default_engine(self.name))
        if missing := engine_missing(self.engine):
            raise ValueError(f"wake model {self.name!r}: {missing}")
        return self


class WakeCheckSettings(_Frozen):
    """The second stage (edge.stages.wake_check): Whisper checks the phrase of a detection."""

    models: list[str] = Field(["okay_nabu"], description="wake words checked (their phrase: a microWakeWord JSON's "
                              "wake_word, else the name with spaces); [] = no check")
    window_ms: int = Field(2000, ge=500, le=5000, description="ms of audio up to the detection that Whisper checks")
    hold_ms: int = Field(480, ge=0, le=1000, description="ms a detection waits for its score to stop rising "
                         "(the end of the phrase) before the check")
    quiet_db: float = Field(40.0, ge=0.0, le=60.0, description="a window at least this quiet (loudest over quietest "
                            "20 ms, dB) is decided by Whisper alone; in a noisier one a score >= alone_above wakes")
    threshold: float | None = Field(0.1, gt=0.0, le=1.0, description="first-stage threshold of a checked word "
                                    "(below its wake.models threshold: Whisper guards it); null = the model's own")
    alone_above: float | None = Field(0.7, gt=0.0, le=1.0, description="first-stage score that wakes in a noisy "
                                      "window whatever Whisper heard; null = Whisper decides everywhere")
    model: str | None = Field(None, description="Whisper model of the check; null = asr.whisper.model (shared "
                              "with the recognizer when it runs in this process)")


class WakeSettings(_Frozen):
    models: list[WakeModel] = Field(min_length=1)
    check: WakeCheckSettings = WakeCheckSettings()

    @model_validator(mode="after")
    def _one_model_per_name(self):
        seen = [Path(m.name).stem if m.name.endswith((".onnx", ".json", ".tflite")) else m.name for m in self.models]
        if twice := sorted({n for n in seen if seen.count(n) > 1}):
            raise ValueError(f"wake.models: {', '.join(twice)} configured twice; one engine per wake word")
        return self
    refractory_ms: int = Field(2000, ge=0, le=60000, description="ms after a trigger with no new trigger")
    guard_ms: int = Field(1500, ge=0, le=10000,
                          description="ms after the box stops speaking during which wake words are ignored (C03)")


class EndpointSettings(_Frozen):
    """Where an utterance ends (edge.stages.vad.Endpointer, edge.loop.pipeline). ``semantic``: after
    ``semantic_silence_ms`` the latest transcript is offered to the grammar; a complete command ends
    there, an incomplete one gets ``incomplete_silence_ms``, anything else ``trailing_silence_ms``.
    ``fixed``: always ``trailing_silence_ms`` and no partial decoding (the behaviour before)."""

    mode: Literal["semantic", "fixed"] = Field("semantic", description="semantic endpointing, or the fixed trailing silence")
    vad_threshold: float = Field(0.5, gt=0.0, lt=1.0, description="Silero VAD speech probability")
    vad_adaptive: bool = Field(True, description="normalise the level before the VAD (quiet, distant speakers; "
                               "the noise floor is never lifted above -50 dBFS)")
    vad_release: float = Field(0.15, ge=0.0, lt=0.5, description="inside an utterance a frame is silence only "
                               "below vad_threshold minus this (hysteresis; 0: one threshold)")
    trailing_silence_ms: int = Field(700, ge=80, le=10000, description="ms of silence that end an utterance "
                                     "(semantic mode: when the grammar cannot tell whether the command is complete)")
    semantic_silence_ms: int = Field(250, ge=80, le=5000, description="ms of silence after which the latest "
                                     "transcript is offered to the grammar; a complete command ends here")
    speculate_after_ms: int = Field(80, ge=80, le=5000, description="ms of silence after which the utterance so "
                                    "far is decoded and its reply prepared (semantic mode; 80 = at the first silent "
                                    "frame; each decode in a pause inside a command costs one more decode; above semantic_silence_ms it "
                                    "counts as semantic_silence_ms)")
    incomplete_silence_ms: int = Field(1500, ge=80, le=10000, description="ms of silence an incomplete command "
                                       "(ends on 'of', 'and', a bare number, a filler, an unknown item) may pause")
    partial_interval_ms: int = Field(1000, ge=80, le=10000, description="ms of audio between two partial "
                                     "re-decodes of the growing utterance (whisper)")
    partial_cpu_fraction: float = Field(0.1, ge=0.0, le=1.0, description="share of the audio time partial "
                                        "re-decoding may take (0: no partials); the governor halves it when warm, "
                                        "none when hot")
    max_utterance_ms: int = Field(10000, ge=500, le=60000, description="ms, hard cap on one utterance")
    no_speech_timeout_ms: int = Field(5000, ge=500, le=60000, description="ms after the wake word without speech")


#: The Whisper model by ``language`` when ``asr.whisper.model`` is null: tiny.en for English, the
#: multilingual base for Mandarin (tiny.en knows no other language).
WHISPER_BY_LANGUAGE = {"en": "whisper-tiny-en", "zh": "whisper-base"}


class WhisperSettings(_Frozen):
    model: str | None = Field(None, description="manifest id or a CTranslate2 Whisper directory; null = by "
                              "language (en: whisper-tiny-en, zh: whisper-base)")
    compute_type: Literal["int8", "int8_float32", "float32"] = "int8"
    beam_size: int = Field(1, ge=1, le=10)
    threads: int = Field(2, ge=1, le=64)
    window_s: float = Field(10.0, ge=5.0, le=30.0, description="s of audio the encoder sees: 30 = Whisper's own "
                            "window; shorter is faster for short utterances (an utterance that leaves less than 3 s "
                            "of it free, a transcript that repeats itself, or one the grammar does not take as a "
                            "whole command is decoded again in 30)")


class VoskSettings(_Frozen):
    model: str = "vosk-ko"
    sample_rate: Literal[16000] = Field(16000, description="Hz; always the pipeline's frame rate")
    command_mode: bool = Field(False, description="recognise only the inventory's phrases plus [unk]")


class AsrWorkerSettings(_Frozen):
    """Where the recognizer runs (edge.stages.asr.worker): ``inline`` in the caller's process, or
    ``process``: in a worker process whose resident memory the governor's memory watch follows
    utterance by utterance, recycled between utterances when over its budget or growing steadily."""

    wyoming: Literal["process", "inline"] = Field(
        "process", description="the Wyoming asr service; inline = the stages' own recognizer (beside the voice loop, the loop's)")
    loop: Literal["process", "inline"] = Field("inline", description="the voice loop's recognizer (partials and speculation included)")
    budget_mib: float | None = Field(None, gt=0.0, le=1048576.0,
                                     description="MiB of anonymous resident memory (RssAnon + RssShmem) the worker may hold; null = no fixed budget")
    growth_mib: float | None = Field(256.0, gt=0.0, le=1048576.0,
                                     description="MiB the worker may grow past its anonymous RSS at the end of warm-up; null = no such budget")
    leak_kib_per_call: float = Field(1.0, gt=0.0, le=1048576.0,
                                     description="KiB per utterance of steady growth over the window that counts as a leak")
    leak_min_mib: float = Field(2.0, ge=0.0, le=1048576.0,
                                description="MiB a leak must have grown since warm-up before it is one (an arena "
                                "that grows in a few steps and stays flat is not)")
    window: int = Field(45, ge=3, le=100000, description="utterances the leak rule looks back over")
    warmup: int = Field(10, ge=0, le=100000, description="utterances before either rule applies (caches settle)")
    start_timeout_s: float = Field(180.0, gt=0.0, le=3600.0, description="s for a worker to load its model")


class AsrSettings(_Frozen):
    engine: Literal["whisper", "vosk"] = "whisper"
    bias: bool = Field(True, description="bias recognition toward the inventory's words")
    whisper: WhisperSettings = WhisperSettings()
    vosk: VoskSettings = VoskSettings()
    worker: AsrWorkerSettings = AsrWorkerSettings()


class LlmStep(_Frozen):
    """One engine of the LLM fallback chain (edge.llm.chain), tried in list order."""

    engine: Literal["rkllm", "llamacpp", "grammar"]
    model: str | None = Field(None, description="manifest id or a .gguf/.rkllm path; none for grammar; "
                                               "llamacpp: null = llm.model (the CPU step follows the one setting)")
    n_ctx: int | None = Field(None, ge=256, le=131072, description="context window in tokens; rkllm: required; "
                                                                   "llamacpp: null = llm.n_ctx")
    threads: int | None = Field(None, ge=1, le=64, description="llamacpp: CPU threads; null = llm.threads")
    lib: str | None = Field(None, description="rkllm: path of librkllmrt.so; null = the loader's search path")
    timeout_s: float | None = Field(None, gt=0.0, le=3600.0,
                                    description="s without a token before the step counts as hung; null = rkllm 60, llamacpp 300")

    @model_validator(mode="after")
    def _model_and_n_ctx_needed(self):
        if self.engine == "rkllm":
            if not self.model:
                raise ValueError(f"engine {self.engine} needs a model (manifest id or file path)")
            if self.n_ctx is None:
                raise ValueError(f"engine {self.engine} needs an explicit n_ctx in tokens, e.g. n_ctx: 2048")
        return self


class LlmSettings(_Frozen):
    engine: Literal["llamacpp", "none"] = "llamacpp"
    model: str = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    n_ctx: int = Field(2048, ge=256, le=131072, description="context window in tokens; always explicit")
    max_tokens: int = Field(48, ge=1, le=4096, description="answer budget in tokens")
    threads: int = Field(2, ge=1, le=64)
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    seed: int = 7
    chain: list[LlmStep] = Field([], description="fallback chain, first healthy engine serves; empty = engine/model/n_ctx then grammar")
    cooldown_s: float = Field(60.0, ge=0.0, le=86400.0, description="s after a failure before a higher engine is probed again")
    smoke_timeout_s: float = Field(60.0, gt=0.0, le=3600.0, description="s for each engine's one-token smoke inference")
    grounded: bool = Field(True, description="a question the templates do not take is answered through the box's "
                           "tools (stock, places, low stock, records, documents, a calculator), never in the model's "
                           "own words; false = the model's free answer (edge.stages.grounded)")
    prefix_states: int = Field(2, ge=0, le=16, description="llamacpp: system-prompt KV states kept for a faster first token")
    npu_lock: str | None = Field(None, description="rkllm: the lock file that keeps NPU jobs of every edge process apart; "
                                 "null = $EDGE_NPU_LOCK, else /run/lock/edge-npu.lock")


class TtsSettings(_Frozen):
    engine: Literal["pyttsx3", "kokoro"] | None = Field(None, description="pyttsx3 (espeak-ng) | kokoro (Kokoro-82M, "
                                                      "Mandarin only); null = by language: zh kokoro when installed, "
                                                      "else pyttsx3")
    voice: str | None = None
    rate_wpm: int = Field(170, ge=60, le=450, description="words per minute")
    timeout_base_s: float = Field(5.0, gt=0, le=120, description="s allowed per reply before the speech engine is restarted")
    timeout_per_char_s: float = Field(0.05, ge=0, le=5, description="extra s allowed per character of the reply")
    start_timeout_s: float = Field(30.0, gt=0, le=900, description="s for the speech engine's worker process to start "
                                   "(Kokoro: at least 180)")


class CpuCluster(_Frozen):
    """CPUs of one kind (one or more cpufreq policies). On big.LITTLE boards the LLM runs on the
    ``big`` cores and audio + wake word on a ``little`` one (edge.governor.threads.thread_plan)."""

    name: str
    cores: list[Annotated[int, Field(ge=0, le=4095)]] = Field(min_length=1, description="CPU numbers, as in /sys/devices/system/cpu/cpuN")
    kind: Literal["big", "little", "uniform"] = "uniform"


class SensorSettings(_Frozen):
    """Where the governor reads the board's signals (drivers/sensors). Each path is an absolute
    path as on the board, joined under ``root``; ``null`` = the board has no such signal."""

    root: Path = Field(Path("/"), description="prefix for every path below (a fake tree's folder in tests)")
    meminfo: str = "/proc/meminfo"
    stat: str = "/proc/stat"
    cpu_pressure: str | None = Field("/proc/pressure/cpu", description="the kernel's CPU pressure (PSI) file")
    cpufreq: str | None = "/sys/devices/system/cpu/cpufreq"
    thermal: str | None = "/sys/class/thermal"
    thermal_zones: list[str] = Field([], description="thermal zone types to watch; empty = every zone")
    npu_load: str | None = Field(None, description="rknpu debugfs load file, e.g. /sys/kernel/debug/rknpu/load")
    npu_devfreq: str | None = Field(None, description="NPU devfreq directory, e.g. /sys/class/devfreq/fdab0000.npu")
    hwmon: str | None = "/sys/class/hwmon"


class DialogSettings(_Frozen):
    follow_up_window_ms: int = Field(5000, ge=500, le=30000,
                                     description="ms to answer an ask-back or read-back without a wake word")


class BoardSettings(_Frozen):
    model_config = ConfigDict(extra="allow", frozen=True)
    name: str = "unknown"
    cpu_clusters: list[CpuCluster] = Field([], description="empty = every online CPU, one uniform cluster")
    sensors: SensorSettings = SensorSettings()


class GovernorSettings(_Frozen):
    """Resource governor (edge.governor): memory admission, compute reserve, thermal levels,
    LLM idle unload. Temperatures in °C, times in s."""

    power_mode: Literal["performance", "balanced", "powersave"] = "balanced"
    mem_fraction: float = Field(0.70, gt=0.0, le=1.0, description="weights + KV cache + pipeline <= this share of MemTotal")
    cpu_fraction: float = Field(0.70, gt=0.0, le=1.0, description="LLM threads <= this share of the cores")
    cpu_pressure_pct: float = Field(50.0, gt=0.0, le=100.0,
                                    description="1 LLM thread while the CPU pressure (PSI some avg10) is at or above this %")
    pipeline_overhead_mib: int = Field(460, ge=0, le=65536, description="MiB for wake/VAD/ASR/TTS + llama.cpp buffers")
    kv_cache_type: Literal["f16", "q8_0", "q4_0"] = "f16"
    min_n_ctx: int = Field(512, ge=64, le=131072, description="n_ctx is halved down to this floor to fit")
    smaller_models: list[str] = Field([], description="fallback LLMs (manifest ids or .gguf paths), largest first")
    warm_c: float = Field(75.0, ge=20.0, le=150.0, description="warm threshold for zones without passive trips")
    hot_c: float = Field(85.0, ge=20.0, le=150.0, description="hot threshold for zones without 2 passive trips")
    hysteresis_c: float = Field(5.0, ge=0.0, le=50.0, description="step down only below threshold - this")
    dwell_s: float = Field(30.0, ge=0.0, le=3600.0, description="s below the lower threshold before a step down")
    warm_token_pacing_ms: int = Field(20, ge=0, le=1000, description="ms pause between tokens when warm")
    warm_max_tokens_scale: float = Field(0.5, gt=0.0, le=1.0, description="answer budget factor when warm")
    cooling_notice: str = "I'm cooling down, so I can only do stock commands for now."
    idle_unload_s: float = Field(600.0, ge=0.0, description="unload the LLM after this long unused; 0 = never")

    @model_validator(mode="after")
    def _hot_above_warm(self):
        if self.hot_c <= self.warm_c:
            raise ValueError(f"hot_c ({self.hot_c} °C) must be above warm_c ({self.warm_c} °C)")
        return self


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    h = host.strip().strip("[]").lower()
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


class ApiSettings(_Frozen):
    """The local HTTP API (``edge serve``, edge.service.api.app)."""

    host: str = Field("127.0.0.1", description="bind address; anything but loopback requires api.token")
    port: int = Field(11435, ge=1, le=65535, description="TCP port (Ollama's own is 11434)")
    token: str | None = Field(None, min_length=16, description="bearer token every request must carry; required off loopback")
    queue_size: int = Field(4, ge=1, le=1000, description="requests waiting behind the running generation; one more gets 503")
    model_name: str = Field("edge", description="the model name the API reports")
    stock_model_name: str = Field("edge-stock", min_length=1, description="the model name of the box's grounded "
                                  "dialog (answers from the stock, records and documents; edge.service.api.stock)")
    stock_writes: bool = Field(False, description="the grounded dialog model may log, move, count and undo (with the "
                               "same guards and read-backs as a voice turn) for requests that carry api.token; "
                               "false = read only")
    max_tokens: int = Field(256, ge=1, le=8192, description="answer budget when a request sets none, in tokens")
    allowed_hosts: list[str] = Field([], description="names and addresses clients use to reach the box (Host "
                                     "header) besides loopback and api.host, e.g. [box.local, 192.168.1.20]; any "
                                     "other Host is refused (no DNS rebinding)")
    max_body_bytes: int = Field(2 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024, description="bytes of one request "
                                "body; a longer one is 413 before it is read (the console's inventory form needs 2 MiB)")
    max_messages: int = Field(1000, ge=1, le=100_000, description="chat messages in one request; more is 413")
    max_prompt_chars: int = Field(131_072, ge=256, le=16 * 1024 * 1024, description="characters of one request's "
                                  "messages (system, prompt and history together); more is 413")
    max_predict: int = Field(4096, ge=1, le=1_000_000, description="the most tokens a request may ask for "
                             "(num_predict, max_tokens); more is 400")

    @model_validator(mode="after")
    def _token_off_loopback(self):
        if not is_loopback(self.host) and not self.token:
            raise ValueError(
                f"api.host {self.host!r} is not a loopback address, so api.token is required: set api.token to a "
                f"long random string (python -c 'import secrets; print(secrets.token_urlsafe(32))') or bind "
                f"api.host to 127.0.0.1")
        return self


def wyoming_address(uri: str) -> tuple[str, str, int | None]:
    """``tcp://HOST:PORT`` → ``("tcp", HOST, PORT)``; ``unix:///PATH`` → ``("unix", PATH, None)``.

    Port 0 asks the system for a free port (tests). Raises:
        ValueError: another scheme, no host or no port; the message shows the accepted forms.
    """
    u = urlparse(uri)
    if u.scheme == "unix" and u.path:
        return "unix", u.path, None
    try:
        port = u.port
    except ValueError:
        port = None
    if u.scheme != "tcp" or not u.hostname or port is None:
        raise ValueError(f"wyoming.uri {uri!r}: expected tcp://HOST:PORT (e.g. tcp://127.0.0.1:10700) "
                         f"or unix:///PATH/TO/SOCKET")
    return "tcp", u.hostname, port


class WyomingSettings(_Frozen):
    """The Wyoming protocol server for Home Assistant (``edge wyoming``, edge.service.wyoming).
    With a ``wyoming:`` section in the config (``wyoming: {}`` for these defaults) the live service
    (``edge run`` live, ``edge.service``) serves it too, sharing its loaded stages.

    Wyoming has no authentication: any client that reaches the address can use the services and
    change stock records through ``handle``, so only loopback is allowed unless ``allow_lan``."""

    uri: str = Field("tcp://127.0.0.1:10700", description="tcp://HOST:PORT or unix:///PATH to listen on; "
                     "a non-loopback host requires wyoming.allow_lan")
    allow_lan: bool = Field(False, description="allow a non-loopback address (no authentication: trusted LAN only)")
    max_clients: int = Field(32, ge=1, le=1024, description="connections served at once; one more gets an "
                             "'error' event (code busy) and is closed")
    wake_streams: int = Field(1, ge=1, le=8, description="wake-word audio streams analysed at once (one "
                              "wake-word detector each); one more gets an 'error' event (code busy)")
    idle_timeout_s: float = Field(300.0, gt=0.0, le=86400.0, description="s a connection may wait between "
                                  "events before it is closed")
    header_timeout_s: float = Field(10.0, gt=0.0, le=600.0, description="s a stalled client may hold its "
                                    "slot: for a header line to end once it started, for a new connection's "
                                    "whole first event, for audio inside an open audio stream, for the client "
                                    "to take an answer; then it is closed, freeing its slot")
    frame_timeout_s: float = Field(10.0, gt=0.0, le=600.0, description="s for the data and payload an event's "
                                   "header announces to arrive; a length that lies closes the connection")
    zeroconf: bool = Field(False, description="announce _wyoming._tcp on the LAN (mDNS) for Home Assistant's "
                           "discovery; needs a non-loopback wyoming.uri (and so wyoming.allow_lan)")

    @model_validator(mode="after")
    def _loopback_unless_allowed(self):
        scheme, host, _ = wyoming_address(self.uri)
        if scheme == "tcp" and not is_loopback(host) and not self.allow_lan:
            raise ValueError(
                f"wyoming.uri {self.uri!r} is not a loopback address and Wyoming has no authentication: "
                f"set wyoming.allow_lan: true to serve the LAN (a trusted network only, firewall the port) "
                f"or use tcp://127.0.0.1:PORT")
        if self.zeroconf and (scheme != "tcp" or is_loopback(host)):
            raise ValueError(f"wyoming.zeroconf announces the box on the LAN, but wyoming.uri {self.uri!r} is not "
                             f"reachable from it: listen on tcp://0.0.0.0:10700 (with wyoming.allow_lan: true) or "
                             f"set wyoming.zeroconf: false")
        return self


class ModelsSettings(_Frozen):
    dir: Path = Field(Path("data/models"), description="where 'edge models add' installs models from local media")


class ServiceSettings(_Frozen):
    """The live service (edge.service.supervisor): how long to wait for a capture device and how to pace retries."""

    capture_retry_initial_s: float = Field(1.0, gt=0.0, le=600.0, description="s before the first retry to open the capture device")
    capture_retry_max_s: float = Field(5.0, gt=0.0, le=3600.0, description="s, cap of the doubling retry delay")
    capture_timeout_s: float = Field(5.0, gt=0.0, le=600.0, description="s without audio before the device counts as lost")
    smoke_inference: bool = Field(True, description="one LLM token before READY=1")
    state_file: Path | None = Field(None, description="the service state file read by edge status and /metrics "
                                   "(edge.service.runstate); default: service-state.json next to the store")
    state_interval_s: float = Field(5.0, gt=0.0, le=3600.0, description="s between state file writes from the audio loop")


class NluSettings(_Frozen):
    """The understanding (edge.stages.nlu): the paraphrase path and the site's own phrasings."""

    paraphrase: bool = Field(True, description="sentence-embedding paraphrase path between the templates and the "
                             "LLM (all-MiniLM-L6-v2, ~90 MB, 10-40 ms per utterance; English)")
    paraphrase_threshold: float = Field(0.45, ge=0.0, le=1.0, description="least cosine similarity to the nearest "
                                        "exemplar sentence")
    paraphrase_margin: float = Field(0.0, ge=0.0, le=1.0, description="least lead over the second intent's score")
    intents_dir: Path | None = Field(None, description="folder of the site's intent template files (*.yaml, Home "
                                     "Assistant's format); null = 'intents' beside the --config file, if any")


class DocsSettings(_Frozen):
    """Answers from the site's documents (edge.stages.docs): where the index is, when to decline."""

    index: Path | None = Field(None, description="SQLite file of the documents' index; null = docs.db next to the store")
    threshold: float = Field(0.5, ge=0.0, le=1.0, description="below this confidence of the best passage the box "
                             "says it does not find it in the documents")
    top_k: int = Field(3, ge=1, le=20, description="passages retrieved (and given to a generating LLM)")
    answer: Literal["auto", "extractive", "generated"] = Field("auto", description="auto: generated by an LLM "
                                                                "of 1.5B parameters or more, else extractive")
    embeddings: bool = Field(True, description="sentence embeddings beside BM25 when the encoder is installed")

    def index_path(self, store_path: Path) -> Path:
        """``index``, else ``docs.db`` in the store's folder."""
        return self.index if self.index is not None else Path(store_path).parent / "docs.db"


#: What a site or box id may look like (they are parts of MQTT topics and of record identities);
#: the same rule as edge.stock.schema.BOX_ID_PATTERN.
SITE_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"


class MqttSettings(_Frozen):
    """The site's MQTT broker (Mosquitto) for live events and Home Assistant (edge.site.mqtt).

    Topics: ``edge/<site>/<box>/status`` (retained ``online``/``offline``, the last will),
    ``edge/<site>/<box>/movement`` (one JSON message per record, QoS 1: consumers drop duplicates
    by ``gid``), ``edge/<site>/<box>/stock/<sku>`` (retained JSON stock state as this box sees it),
    ``edge/<site>/<box>/alert`` (negative stock).
    """

    host: str = Field(min_length=1, description="broker host name or address (checked against its TLS certificate)")
    port: int = Field(None, ge=1, le=65535, description="TCP port; unset: 8883 with TLS, else 1883")
    username: str | None = Field(None, description="broker user; its password in password_file")
    password_file: Path | None = Field(None, description="file with the broker password, mode 600; "
                                       "relative: in $CREDENTIALS_DIRECTORY (systemd LoadCredential=)")
    tls: bool = Field(None, description="TLS to the broker, its certificate verified; unset: on when "
                      "a tls_*_file is set")
    tls_ca_file: Path | None = Field(None, description="CA certificate (PEM) to verify the broker; null with tls: "
                                     "the system's CAs; relative: in $CREDENTIALS_DIRECTORY")
    tls_cert_file: Path | None = Field(None, description="client certificate (PEM) when the broker requires one "
                                       "(require_certificate true); relative: in $CREDENTIALS_DIRECTORY")
    tls_key_file: Path | None = Field(None, description="the client certificate's private key (PEM), mode 600 or "
                                      "400; relative: in $CREDENTIALS_DIRECTORY")
    keepalive_s: int = Field(30, ge=5, le=3600, description="s between MQTT pings; the last will fires after 1.5x this")
    discovery: bool = Field(False, description="publish Home Assistant MQTT discovery for stock and low-stock sensors")
    discovery_prefix: str = Field("homeassistant", min_length=1, description="Home Assistant's discovery topic prefix")
    low_stock_at: int = Field(0, ge=0, description="the low-stock binary sensor is on when the item is low "
                              "(edge.stock.low: out, below zero, at its reorder level) and, above 0, also at or below this quantity")

    @model_validator(mode="before")
    @classmethod
    def _tls_defaults(cls, data):
        # tls follows the TLS files unless given; the port follows tls unless given
        if isinstance(data, dict):
            data = dict(data)
            if data.get("tls") is None:
                data["tls"] = any(data.get(k) is not None for k in ("tls_ca_file", "tls_cert_file", "tls_key_file"))
            if data.get("port") is None:
                data["port"] = 8883 if data["tls"] else 1883
        return data

    @model_validator(mode="after")
    def _tls_consistent(self):
        files = [k for k in ("tls_ca_file", "tls_cert_file", "tls_key_file") if getattr(self, k) is not None]
        if files and not self.tls:
            raise ValueError(f"site.mqtt.tls is false but {', '.join(files)} is set; fix: set tls: true, or remove "
                             f"{files[0]} for a plain connection")
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError("site.mqtt: tls_cert_file and tls_key_file go together; fix: set both (the client "
                             "certificate and its private key) or neither")
        return self


class SiteSettings(_Frozen):
    """A site of several boxes sharing one stock through the site's PostgreSQL (edge.site).

    The database password never goes into ``dsn``: it is read from ``password_file`` (a file only
    the service user may read; a relative name is looked up in ``$CREDENTIALS_DIRECTORY``, where
    systemd's ``LoadCredential=`` puts it). TLS is libpq's: ``sslmode=verify-full sslrootcert=FILE``
    in ``dsn``.
    """

    name: str = Field("site", pattern=SITE_ID_PATTERN, description="the site's id (MQTT topics edge/<site>/<box>/...)")
    box: str = Field(pattern=SITE_ID_PATTERN, description="this box's id, unique on the site, e.g. goods-in")
    dsn: str = Field(min_length=1, description="libpq connection string of the site database without the password, "
                     "e.g. 'host=10.0.0.5 dbname=edge user=edge sslmode=verify-full sslrootcert=/etc/edge/site-ca.pem'")
    password_file: Path | None = Field(None, description="file holding the database password, mode 600 or 400; "
                                       "relative: in $CREDENTIALS_DIRECTORY (systemd LoadCredential=)")
    connect_timeout_s: int = Field(3, ge=1, le=60, description="s to wait for the database to answer a connection")
    io_timeout_s: float = Field(10.0, gt=0.0, le=600.0, description="s one push or pull transaction may take before "
                                "the connection counts as stalled and is cut (a switch that drops packets)")
    poll_ms: int = Field(200, ge=10, le=60000, description="ms between looks for new local records to push")
    pull_every_s: float = Field(10.0, gt=0.0, le=3600.0, description="s between pulls without a NOTIFY wake-up")
    retry_max_s: float = Field(30.0, gt=0.0, le=3600.0, description="s, cap of the doubling reconnect delay when offline")
    batch: int = Field(500, ge=1, le=100000, description="records per push or pull transaction")
    mqtt: MqttSettings | None = Field(None, description="the site's MQTT broker; null = no MQTT events")

    @model_validator(mode="after")
    def _no_password_in_dsn(self):
        if re.search(r"(^|\s)password\s*=|://[^/@:]*:[^/@]*@", self.dsn):
            raise ValueError("site.dsn holds a password: remove it from the DSN and put it, alone, in a file named "
                             "by site.password_file (chmod 600, owned by the service user)")
        return self


class Settings(_Frozen):
    language: Literal["en", "zh"] = Field("en", description="en | zh: the grammar, the Whisper model and its "
                                          "prompt (asr.whisper.model null), the replies' language and voice")
    output_dir: Path = Path("out")
    board: BoardSettings | None = None
    store: StoreSettings
    audio: AudioSettings = AudioSettings()
    wake: WakeSettings
    endpoint: EndpointSettings = EndpointSettings()
    asr: AsrSettings = AsrSettings()
    llm: LlmSettings = LlmSettings()
    tts: TtsSettings = TtsSettings()
    api: ApiSettings = ApiSettings()
    wyoming: WyomingSettings | None = None  # a section (even {}): the live service serves Wyoming too
    models: ModelsSettings = ModelsSettings()
    dialog: DialogSettings = DialogSettings()
    governor: GovernorSettings = GovernorSettings()
    service: ServiceSettings = ServiceSettings()
    site: SiteSettings | None = None
    docs: DocsSettings = DocsSettings()
    nlu: NluSettings = NluSettings()

    @model_validator(mode="before")
    @classmethod
    def _whisper_by_language(cls, data: Any) -> Any:
        """``asr.whisper.model`` null (the default) → the language's model (:data:`WHISPER_BY_LANGUAGE`);
        a Mandarin box naming the English-only tiny.en is refused with the fix."""
        if not isinstance(data, dict):
            return data
        lang = data.get("language", "en")
        asr = data.get("asr") if isinstance(data.get("asr"), dict) else {}
        w = asr.get("whisper") if isinstance(asr.get("whisper"), dict) else {}
        model = w.get("model")
        if model is None and lang in WHISPER_BY_LANGUAGE:
            return {**data, "asr": {**asr, "whisper": {**w, "model": WHISPER_BY_LANGUAGE[lang]}}}
        if lang != "en" and asr.get("engine", "whisper") == "whisper" and model == WHISPER_BY_LANGUAGE["en"]:
            raise ValueError(f"asr.whisper.model {model} is English-only and language is {lang}: set asr.whisper.model "
                             f"to null (picks {WHISPER_BY_LANGUAGE.get(lang)}) or to a multilingual Whisper model")
        return data


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _describe(e: ValidationError, sources: str) -> str:
    lines = [f"invalid configuration ({sources}):"]
    for err in e.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key; remove it or check its spelling (see edge/defaults.yaml for all keys)"
        lines.append(f"  {key}: {msg}{_shown(err['loc'], err.get('input'))}")
    return "\n".join(lines)


#: Settings whose values are never echoed in an error (they end up on stderr and in the journal).
SECRET_KEYS = ("token", "password", "dsn", "secret")


def _shown(loc: tuple, value: Any) -> str:
    """`` (got VALUE)`` for an error message, unless the value is a secret or a whole section."""
    if isinstance(value, (dict, list)) or any(s in str(p).lower() for p in loc for s in SECRET_KEYS):
        return ""
    return f" (got {value!r})"


def board_path(name: str) -> Path:
    """``board-configs/NAME.yaml``; raises :class:`ConfigError` listing the boards when missing."""
    p = BOARD_DIR / f"{name}.yaml"
    if not p.exists():
        known = ", ".join(sorted(q.stem for q in BOARD_DIR.glob("*.yaml")))
        raise ConfigError(f"board '{name}': no file {p}; known boards: {known}")
    return p


def load_settings(path: str | Path | None = None, board: str | None = None,
                  overrides: dict[str, Any] | None = None) -> Settings:
    """Defaults ← board config ← ``$EDGE_SETTINGS_LAYER`` ← ``path`` ← ``overrides`` → validated :class:`Settings`.

    Raises:
        ConfigError: unreadable file, bad YAML, unknown key or a value out of its range; the message
            names the files merged and each failing key with the allowed values.
    """
    data = read_yaml(DEFAULTS)
    sources = [str(DEFAULTS)]
    user = read_yaml(Path(path)) if path else {}
    if isinstance(user.get("board"), str):  # a board *name* selects the file; its mapping is kept
        board = board or user["board"]
        user = {k: v for k, v in user.items() if k != "board"}
    elif (isinstance(user.get("board"), dict) and isinstance(user["board"].get("name"), str)
          and (BOARD_DIR / f"{user['board']['name']}.yaml").exists()):
        # board: {name: NAME, ...} naming a board config: that board's file, then these fields
        # (a name with no file is a board described in full here, as before)
        board = board or user["board"]["name"]
    if board:
        bp = board_path(board)
        data = _merge(data, read_yaml(bp))
        sources.append(str(bp))
    layer = os.environ.get(LAYER_ENV)
    if layer:  # an installation's or a test run's settings (module doc)
        data = _merge(data, read_yaml(Path(layer)))
        sources.append(f"{layer} (${LAYER_ENV})")
    if path:
        data = _merge(data, user)
        sources.append(str(path))
    if overrides:
        data = _merge(data, overrides)
    if path and isinstance(data.get("nlu", {}), dict) and not (data.get("nlu") or {}).get("intents_dir"):
        site_intents = Path(path).parent / "intents"  # the site's phrasings beside its config
        if site_intents.is_dir():
            data = _merge(data, {"nlu": {"intents_dir": str(site_intents)}})
    try:
        return Settings.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_describe(e, " <- ".join(sources))) from None
