"""ctypes binding of Rockchip's RKLLM runtime (``librkllmrt.so``), header ``rkllm.h`` version 1.3.0.

Every type below mirrors the header one to one, in header order, with the header's exact widths
(``bool``, ``int8_t``, ``uint8_t``, ``int32_t``, ``size_t``, ``float``; C enums are ``int``). The
runtime reads these structs by raw offset, so a shifted field is a crash or a silently wrong
sampler, never an error message: :data:`LAYOUT` lists every struct and member, and the tests compare
``sizeof``/``offsetof`` against Rockchip's real header kept beside this module (``drivers/npu/rkllm.h``,
release v1.3.0 of ``airockchip/rknn-llm``, licence in ``drivers/npu/LICENSE.rkllm``) compiled with the
host's g++ and with aarch64-linux-gnu-g++ run under qemu (``tests/test_rkllm_header.py``, which also
checks that every struct, member and function of the header is mirrored), and against a C stand-in
library (``tests/test_rkllm.py``). A new runtime release is one header to drop in and that test to run.

What 1.3.0 changed against 1.2.x (1.2.0 and 1.2.2 headers of the same repository):

  - ``RKLLMParam``: ``img_start``/``img_end``/``img_content`` removed, ``ignore_eos_token`` added
    after ``skip_special_token``;
  - ``rkllm_init(LLMHandle*, RKLLMParam*, RKLLMCallback*)``: the callback is now a *struct* of
    (result, tokenizer, embed) callbacks with their userdata, not a bare function pointer;
  - ``RKLLMInferParam`` gained ``sampling_params`` (``RKLLMSamplingParam*``, new) and
    ``max_new_tokens`` (per run);
  - ``RKLLMMultiModelInput`` became ``RKLLMMultiModalInput`` with nested ``image`` and ``video``
    structs (1.3.1 adds an ``audio`` struct at the end; not mirrored here).

  Unchanged since 1.2.1/1.2.2: ``LLMResultCallback`` is ``int (*)(RKLLMResult*, void* userdata,
  LLMCallState)`` (return 0 = continue, 1 = pause), ``rkllm_clear_kv_cache(handle, int
  keep_system_prompt, int* start_pos, int* end_pos)``, ``RKLLMPerfStat`` at the end of
  ``RKLLMResult``.

Version check: librkllmrt exports no version function up to 1.3.x; it prints ``I rkllm:
rkllm-runtime version: %s, rknpu driver version: %s, platform: %s`` from ``rkllm_init`` with the
version as a separate string literal (format string seen in ``strings -a`` of a 1.2.1b1 runtime).
:func:`read_runtime_version` therefore reads it from the ``.so`` bytes before the library is ever
called, and :class:`RkllmLibrary` refuses anything but 1.3.x with :class:`RkllmVersionError`:
1.1, 1.2 and 1.3 lay out ``RKLLMParam``, ``RKLLMInput`` and ``RKLLMInferParam`` differently and
pass the callback differently, so calling a 1.2 runtime through this binding would corrupt memory.
"""
from __future__ import annotations

import ctypes
import enum
import os
import re
from pathlib import Path

from edge.errors import EdgeError

# ---------------------------------------------------------------- versions and SoCs

HEADER_VERSION = "1.3.0"
"""The ``rkllm.h`` this module mirrors."""

REQUIRED_SERIES = (1, 3)
"""Runtimes whose (major, minor) equals this are accepted; patch releases keep the layout."""

# RKLLM "Support Platform" (rknn-llm README, 1.2.2): RK3588 series, RK3576, RK3562 (since 1.2.0,
# CHANGELOG), RV1126B (since 1.2.1, CHANGELOG). RK3582 is a cut-down RK3588S that runs it
# (airockchip/rknn-llm issue #59).
SUPPORTED_SOCS = ("rk3588", "rk3588s", "rk3582", "rk3576", "rk3562", "rv1126b")
# RK3566/RK3568 have an RKNPU2 NPU (rknpu2 README "Support Platform") that RKNN runs on, but RKLLM
# has never listed them; RKNN models for them are built separately (rknn-toolkit-lite2 examples).
RKNN_ONLY_SOCS = ("rk3566", "rk3568")

# Default places searched for librkllmrt.so (the rknn-llm demos copy it to /usr/lib).
LIBRARY_NAME = "librkllmrt.so"
LIBRARY_DIRS = ("/usr/lib", "/usr/local/lib", "/usr/lib/aarch64-linux-gnu", "/lib")


class RkllmError(EdgeError):
    """The RKLLM runtime cannot be used (missing library or symbol, failed call)."""


class RkllmVersionError(RkllmError):
    """The runtime's version is not the 1.3.x series this binding mirrors, or cannot be read."""


class RkllmSocError(RkllmError):
    """The SoC cannot run RKLLM at all (e.g. RK3566/RK3568, x86_64)."""


_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)([0-9A-Za-z.+-]*)$")


def parse_version(text: str) -> tuple[int, int, int]:
    """``"1.3.0"``, ``"v1.2.1b1"`` → ``(1, 3, 0)``, ``(1, 2, 1)``.

    Raises:
        RkllmVersionError: not a dotted three-part version.
    """
    m = _VERSION_RE.match(text.strip())
    if not m:
        raise RkllmVersionError(f"'{text}' is not a runtime version (expected MAJOR.MINOR.PATCH, e.g. 1.3.0)")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


# Patterns tried on the library's bytes, best first. (1) the log line with the version baked in;
# (2) a bare NUL-terminated "1.x.y" literal (RKLLM runtimes are all 1.x; the "0.9.x" literals next
# to it are the RKNPU driver minimum, major 0, and are not candidates).
_LOGLINE_RE = re.compile(rb"rkllm-runtime version[:\s]+v?(\d+\.\d+\.\d+[0-9A-Za-z]*)")
_BARE_RE = re.compile(rb"(?<=\x00)v?(1\.\d{1,2}\.\d{1,3}(?:[ab]\d+|rc\d+)?)(?=\x00)")


def read_runtime_version(library: str | os.PathLike[str]) -> str:
    """The runtime version of a ``librkllmrt.so`` read from its bytes, without loading it.

    Returns:
        e.g. ``"1.3.0"``.
    Raises:
        RkllmError: the file does not exist.
        RkllmVersionError: no version string, or several different candidates (then pass the
            version explicitly after reading the ``rkllm-runtime version:`` line the runtime prints).
    """
    path = Path(library)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise RkllmError(f"{path}: cannot read the RKLLM runtime library ({e.strerror})") from None
    m = _LOGLINE_RE.search(data)
    if m:
        return m.group(1).decode()
    found = sorted({v.decode() for v in _BARE_RE.findall(data)})
    if len(found) == 1:
        return found[0]
    if not found:
        raise RkllmVersionError(
            f"{path}: no RKLLM runtime version string found in the library; is it librkllmrt.so? "
            f"If it is, run any RKLLM demo once, read the 'rkllm-runtime version:' line it prints and "
            f"pass that version explicitly (runtime_version=...)")
    raise RkllmVersionError(
        f"{path}: several version-like strings in the library ({', '.join(found)}); cannot tell the "
        f"runtime version. Read the 'rkllm-runtime version:' line an RKLLM demo prints and pass it "
        f"explicitly (runtime_version=...)")


def check_runtime_version(version: str, library: str | os.PathLike[str] | None = None) -> None:
    """Accept a 1.3.x runtime; refuse everything else.

    Raises:
        RkllmVersionError: naming the found and the required version, and the fix.
    """
    found = parse_version(version)
    if found[:2] != REQUIRED_SERIES:
        where = f"{library}: " if library else ""
        raise RkllmVersionError(
            f"{where}RKLLM runtime {version} found, {REQUIRED_SERIES[0]}.{REQUIRED_SERIES[1]}.x required "
            f"(this binding mirrors rkllm.h {HEADER_VERSION}; RKLLMParam, RKLLMInput, RKLLMInferParam and "
            f"the rkllm_init callback differ between 1.1, 1.2 and 1.3). Install librkllmrt.so from "
            f"rknn-llm release-v{HEADER_VERSION} and use .rkllm models converted with rkllm-toolkit 1.3.x")


def check_soc(soc: str) -> str:
    """Normalise a SoC name and refuse those that cannot run RKLLM.

    Args:
        soc: e.g. ``"RK3588"``, ``"rk3576"``, ``"rk3566"``, ``"x86_64"`` (board config ``board.soc``).
    Returns:
        the lower-case name.
    Raises:
        RkllmSocError: RK3566/RK3568 (RKNN only), or not a Rockchip SoC with an RKLLM runtime.
    """
    name = soc.strip().lower().replace("-", "").replace("_", "")
    if name in SUPPORTED_SOCS:
        return name
    supported = ", ".join(s.upper() for s in SUPPORTED_SOCS)
    if name in RKNN_ONLY_SOCS:
        raise RkllmSocError(
            f"SoC {soc}: RKLLM does not run on RK3566/RK3568 (its NPU runs RKNN models only; RKLLM "
            f"supports {supported}); use the llama.cpp engine on this board")
    raise RkllmSocError(f"SoC {soc}: no RKLLM runtime for it (RKLLM supports {supported}); use the llama.cpp engine")


def find_library(extra_dirs: tuple[str, ...] = ()) -> Path:
    """Where ``librkllmrt.so`` is: ``$EDGE_RKLLM_LIB``, then ``extra_dirs``, ``$LD_LIBRARY_PATH``,
    :data:`LIBRARY_DIRS`.

    Raises:
        RkllmError: not found; the message lists the places searched.
    """
    env = os.environ.get("EDGE_RKLLM_LIB")
    if env:
        if Path(env).is_file():
            return Path(env)
        raise RkllmError(f"EDGE_RKLLM_LIB={env}: no such file")
    dirs = list(extra_dirs) + [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d] + list(LIBRARY_DIRS)
    for d in dirs:
        p = Path(d) / LIBRARY_NAME
        if p.is_file():
            return p
    raise RkllmError(f"{LIBRARY_NAME} not found in {', '.join(dirs)}; copy it from rknn-llm release-v{HEADER_VERSION} "
                     f"(rkllm-runtime/Linux/librkllm_api/aarch64/) to /usr/lib or set EDGE_RKLLM_LIB")


# ---------------------------------------------------------------- enums and constants (rkllm.h)

CPU0, CPU1, CPU2, CPU3, CPU4, CPU5, CPU6, CPU7 = (1 << i for i in range(8))
"""``enabled_cpus_mask`` bits (``#define CPU0 (1 << 0)`` … ``CPU7``)."""

LLMHandle = ctypes.c_void_p


class LLMCallState(enum.IntEnum):
    """State passed to the result callback."""

    RKLLM_RUN_NORMAL = 0  # a token is ready in result->text
    RKLLM_RUN_WAITING = 1  # waiting for the rest of a UTF-8 character; no text
    RKLLM_RUN_FINISH = 2  # the run has ended; result->perf holds the figures
    RKLLM_RUN_ERROR = 3  # the run failed


class RKLLMInputType(enum.IntEnum):
    RKLLM_INPUT_PROMPT = 0
    RKLLM_INPUT_TOKEN = 1
    RKLLM_INPUT_EMBED = 2
    RKLLM_INPUT_MULTIMODAL = 3


class RKLLMInferMode(enum.IntEnum):
    RKLLM_INFER_GENERATE = 0
    RKLLM_INFER_GET_LAST_HIDDEN_LAYER = 1
    RKLLM_INFER_GET_LOGITS = 2


_enum = ctypes.c_int  # C enums with values 0..3 are int-sized on LP64 (x86_64, aarch64)

# ---------------------------------------------------------------- structs (header order)


class RKLLMExtendParam(ctypes.Structure):
    _fields_ = [
        ("base_domain_id", ctypes.c_int32),
        ("embed_flash", ctypes.c_int8),  # 1 = look word embeddings up from flash
        ("enabled_cpus_num", ctypes.c_int8),
        ("enabled_cpus_mask", ctypes.c_uint32),  # CPU0..CPU7 bits
        ("n_batch", ctypes.c_uint8),  # 1 = no batching
        ("use_cross_attn", ctypes.c_int8),
        ("reserved", ctypes.c_uint8 * 104),
    ]


class RKLLMParam(ctypes.Structure):
    _fields_ = [
        ("model_path", ctypes.c_char_p),
        ("max_context_len", ctypes.c_int32),  # tokens
        ("max_new_tokens", ctypes.c_int32),
        ("top_k", ctypes.c_int32),
        ("n_keep", ctypes.c_int32),  # KV cache entries kept when the window shifts
        ("top_p", ctypes.c_float),
        ("temperature", ctypes.c_float),
        ("repeat_penalty", ctypes.c_float),
        ("frequency_penalty", ctypes.c_float),
        ("presence_penalty", ctypes.c_float),
        ("mirostat", ctypes.c_int32),
        ("mirostat_tau", ctypes.c_float),
        ("mirostat_eta", ctypes.c_float),
        ("skip_special_token", ctypes.c_bool),
        ("ignore_eos_token", ctypes.c_bool),
        ("is_async", ctypes.c_bool),
        ("extend_param", RKLLMExtendParam),
    ]


class RKLLMLoraAdapter(ctypes.Structure):
    _fields_ = [
        ("lora_adapter_path", ctypes.c_char_p),
        ("lora_adapter_name", ctypes.c_char_p),
        ("scale", ctypes.c_float),
    ]


class RKLLMEmbedInput(ctypes.Structure):
    _fields_ = [("embed", ctypes.POINTER(ctypes.c_float)), ("n_tokens", ctypes.c_size_t)]


class RKLLMTokenInput(ctypes.Structure):
    _fields_ = [("input_ids", ctypes.POINTER(ctypes.c_int32)), ("n_tokens", ctypes.c_size_t)]


class RKLLMImageInput(ctypes.Structure):
    """The anonymous ``image`` struct inside ``RKLLMMultiModalInput`` (named here for ctypes)."""

    _fields_ = [
        ("image_embed", ctypes.POINTER(ctypes.c_float)),
        ("n_image_tokens", ctypes.c_size_t),
        ("n_image", ctypes.c_size_t),
        ("image_start", ctypes.c_char_p),
        ("image_end", ctypes.c_char_p),
        ("image_content", ctypes.c_char_p),
        ("image_width", ctypes.c_size_t),
        ("image_height", ctypes.c_size_t),
    ]


class RKLLMVideoInput(ctypes.Structure):
    """The anonymous ``video`` struct inside ``RKLLMMultiModalInput``."""

    _fields_ = [
        ("video_embed", ctypes.POINTER(ctypes.c_float)),
        ("n_frame_tokens", ctypes.c_size_t),
        ("n_frame_per_video", ctypes.c_size_t),
        ("n_video", ctypes.c_size_t),
        ("video_start", ctypes.c_char_p),
        ("video_end", ctypes.c_char_p),
        ("video_content", ctypes.c_char_p),
        ("frame_width", ctypes.c_size_t),
        ("frame_height", ctypes.c_size_t),
    ]


class RKLLMMultiModalInput(ctypes.Structure):
    _fields_ = [("prompt", ctypes.c_char_p), ("image", RKLLMImageInput), ("video", RKLLMVideoInput)]


class _RKLLMInputUnion(ctypes.Union):
    _fields_ = [
        ("prompt_input", ctypes.c_char_p),
        ("embed_input", RKLLMEmbedInput),
        ("token_input", RKLLMTokenInput),
        ("multimodal_input", RKLLMMultiModalInput),
    ]


class RKLLMInput(ctypes.Structure):
    _anonymous_ = ("_u",)  # the header's anonymous union: prompt_input etc. are direct members
    _fields_ = [
        ("role", ctypes.c_char_p),  # "user", or "tool" for a function result
        ("enable_thinking", ctypes.c_bool),
        ("input_type", _enum),  # RKLLMInputType
        ("_u", _RKLLMInputUnion),
    ]


class RKLLMLoraParam(ctypes.Structure):
    _fields_ = [("lora_adapter_name", ctypes.c_char_p)]


class RKLLMPromptCacheParam(ctypes.Structure):
    _fields_ = [("save_prompt_cache", ctypes.c_int), ("prompt_cache_path", ctypes.c_char_p)]


class RKLLMCrossAttnParam(ctypes.Structure):
    _fields_ = [
        ("encoder_k_cache", ctypes.POINTER(ctypes.c_float)),
        ("encoder_v_cache", ctypes.POINTER(ctypes.c_float)),
        ("encoder_mask", ctypes.POINTER(ctypes.c_float)),
        ("encoder_pos", ctypes.POINTER(ctypes.c_int32)),
        ("num_tokens", ctypes.c_int),
    ]


class RKLLMSamplingParam(ctypes.Structure):
    _fields_ = [
        ("top_k", ctypes.c_int32),
        ("top_p", ctypes.c_float),
        ("temperature", ctypes.c_float),
        ("repeat_penalty", ctypes.c_float),
        ("frequency_penalty", ctypes.c_float),
        ("presence_penalty", ctypes.c_float),
        ("mirostat", ctypes.c_int32),
        ("mirostat_tau", ctypes.c_float),
        ("mirostat_eta", ctypes.c_float),
    ]


class RKLLMInferParam(ctypes.Structure):
    _fields_ = [
        ("mode", _enum),  # RKLLMInferMode
        ("lora_params", ctypes.POINTER(RKLLMLoraParam)),
        ("prompt_cache_params", ctypes.POINTER(RKLLMPromptCacheParam)),
        ("sampling_params", ctypes.POINTER(RKLLMSamplingParam)),  # NULL = the init-time sampling
        ("keep_history", ctypes.c_int),  # 0 = each run starts from an empty KV cache
        ("max_new_tokens", ctypes.c_int32),
    ]


class RKLLMResultLastHiddenLayer(ctypes.Structure):
    _fields_ = [
        ("hidden_states", ctypes.POINTER(ctypes.c_float)),
        ("embd_size", ctypes.c_int),
        ("num_tokens", ctypes.c_int),
    ]


class RKLLMResultLogits(ctypes.Structure):
    _fields_ = [("logits", ctypes.POINTER(ctypes.c_float)), ("vocab_size", ctypes.c_int), ("num_tokens", ctypes.c_int)]


class RKLLMPerfStat(ctypes.Structure):
    _fields_ = [
        ("prefill_time_ms", ctypes.c_float),
        ("prefill_tokens", ctypes.c_int),
        ("generate_time_ms", ctypes.c_float),
        ("generate_tokens", ctypes.c_int),
        ("memory_usage_mb", ctypes.c_float),  # VmHWM during inference, MiB
    ]


class RKLLMResult(ctypes.Structure):
    _fields_ = [
        ("text", ctypes.c_char_p),
        ("token_id", ctypes.c_int32),
        ("last_hidden_layer", RKLLMResultLastHiddenLayer),
        ("logits", RKLLMResultLogits),
        ("perf", RKLLMPerfStat),
    ]


LLMResultCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(RKLLMResult), ctypes.c_void_p, _enum)
"""``int (*)(RKLLMResult* result, void* userdata, LLMCallState state)``; return 0 to continue,
1 to pause. Called on the thread that called ``rkllm_run``."""
LLMTokenizerCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32,
                                        ctypes.POINTER(ctypes.c_int32), ctypes.c_int32)
LLMGetEmbedCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32),
                                       ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64)


class RKLLMCallback(ctypes.Structure):
    _fields_ = [
        ("result_callback", LLMResultCallback),
        ("result_userdata", ctypes.c_void_p),
        ("tokenizer_callback", LLMTokenizerCallback),  # NULL = the model's own tokenizer
        ("tokenizer_userdata", ctypes.c_void_p),
        ("embed_callback", LLMGetEmbedCallback),  # NULL = the model's own embedding table
        ("embed_userdata", ctypes.c_void_p),
    ]


# struct name -> (ctypes type, member paths in header order; a dotted path enters a nested struct)
LAYOUT: dict[str, tuple[type, tuple[str, ...]]] = {
    "RKLLMExtendParam": (RKLLMExtendParam, ("base_domain_id", "embed_flash", "enabled_cpus_num",
                                            "enabled_cpus_mask", "n_batch", "use_cross_attn", "reserved")),
    "RKLLMParam": (RKLLMParam, ("model_path", "max_context_len", "max_new_tokens", "top_k", "n_keep", "top_p",
                                "temperature", "repeat_penalty", "frequency_penalty", "presence_penalty",
                                "mirostat", "mirostat_tau", "mirostat_eta", "skip_special_token",
                                "ignore_eos_token", "is_async", "extend_param")),
    "RKLLMLoraAdapter": (RKLLMLoraAdapter, ("lora_adapter_path", "lora_adapter_name", "scale")),
    "RKLLMEmbedInput": (RKLLMEmbedInput, ("embed", "n_tokens")),
    "RKLLMTokenInput": (RKLLMTokenInput, ("input_ids", "n_tokens")),
    "RKLLMMultiModalInput": (RKLLMMultiModalInput, (
        "prompt", "image", "image.image_embed", "image.n_image_tokens", "image.n_image", "image.image_start",
        "image.image_end", "image.image_content", "image.image_width", "image.image_height",
        "video", "video.video_embed", "video.n_frame_tokens", "video.n_frame_per_video", "video.n_video",
        "video.video_start", "video.video_end", "video.video_content", "video.frame_width",
        "video.frame_height")),
    "RKLLMInput": (RKLLMInput, ("role", "enable_thinking", "input_type", "prompt_input", "embed_input",
                                "token_input", "multimodal_input")),
    "RKLLMLoraParam": (RKLLMLoraParam, ("lora_adapter_name",)),
    "RKLLMPromptCacheParam": (RKLLMPromptCacheParam, ("save_prompt_cache", "prompt_cache_path")),
    "RKLLMCrossAttnParam": (RKLLMCrossAttnParam, ("encoder_k_cache", "encoder_v_cache", "encoder_mask",
                                                  "encoder_pos", "num_tokens")),
    "RKLLMSamplingParam": (RKLLMSamplingParam, ("top_k", "top_p", "temperature", "repeat_penalty",
                                                "frequency_penalty", "presence_penalty", "mirostat",
                                                "mirostat_tau", "mirostat_eta")),
    "RKLLMInferParam": (RKLLMInferParam, ("mode", "lora_params", "prompt_cache_params", "sampling_params",
                                          "keep_history", "max_new_tokens")),
    "RKLLMResultLastHiddenLayer": (RKLLMResultLastHiddenLayer, ("hidden_states", "embd_size", "num_tokens")),
    "RKLLMResultLogits": (RKLLMResultLogits, ("logits", "vocab_size", "num_tokens")),
    "RKLLMPerfStat": (RKLLMPerfStat, ("prefill_time_ms", "prefill_tokens", "generate_time_ms",
                                      "generate_tokens", "memory_usage_mb")),
    "RKLLMResult": (RKLLMResult, ("text", "token_id", "last_hidden_layer", "logits", "perf")),
    "RKLLMCallback": (RKLLMCallback, ("result_callback", "result_userdata", "tokenizer_callback",
                                      "tokenizer_userdata", "embed_callback", "embed_userdata")),
}


def _offset(cls: type, path: str) -> int:
    off = 0
    for part in path.split("."):
        off += getattr(cls, part).offset
        cls = dict(cls._fields_).get(part)  # None past a member reached through the anonymous union
    return off


def layout() -> dict[str, int]:
    """``{"RKLLMParam": sizeof, "RKLLMParam.model_path": offsetof, ...}`` in bytes, for every
    struct and member in :data:`LAYOUT`, as this Python process lays them out."""
    out: dict[str, int] = {}
    for name, (cls, members) in LAYOUT.items():
        out[name] = ctypes.sizeof(cls)
        for m in members:
            out[f"{name}.{m}"] = _offset(cls, m)
    return out


# ---------------------------------------------------------------- the library

# (name, restype, argtypes) for every function of rkllm.h 1.3.0
_FUNCTIONS = (
    ("rkllm_createDefaultParam", RKLLMParam, []),
    ("rkllm_init", ctypes.c_int, [ctypes.POINTER(LLMHandle), ctypes.POINTER(RKLLMParam), ctypes.POINTER(RKLLMCallback)]),
    ("rkllm_load_lora", ctypes.c_int, [LLMHandle, ctypes.POINTER(RKLLMLoraAdapter)]),
    ("rkllm_load_prompt_cache", ctypes.c_int, [LLMHandle, ctypes.c_char_p]),
    ("rkllm_release_prompt_cache", ctypes.c_int, [LLMHandle]),
    ("rkllm_destroy", ctypes.c_int, [LLMHandle]),
    ("rkllm_run", ctypes.c_int, [LLMHandle, ctypes.POINTER(RKLLMInput), ctypes.POINTER(RKLLMInferParam), ctypes.c_void_p]),
    ("rkllm_run_async", ctypes.c_int, [LLMHandle, ctypes.POINTER(RKLLMInput), ctypes.POINTER(RKLLMInferParam),
                                       ctypes.c_void_p]),
    ("rkllm_abort", ctypes.c_int, [LLMHandle]),
    ("rkllm_is_running", ctypes.c_int, [LLMHandle]),
    ("rkllm_clear_kv_cache", ctypes.c_int, [LLMHandle, ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                            ctypes.POINTER(ctypes.c_int)]),
    ("rkllm_get_kv_cache_size", ctypes.c_int, [LLMHandle, ctypes.POINTER(ctypes.c_int)]),
    ("rkllm_set_chat_template", ctypes.c_int, [LLMHandle, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]),
    ("rkllm_set_function_tools", ctypes.c_int, [LLMHandle, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]),
    ("rkllm_set_cross_attn_params", ctypes.c_int, [LLMHandle, ctypes.POINTER(RKLLMCrossAttnParam)]),
)


class RkllmLibrary:
    """``librkllmrt.so`` opened after its version and the SoC were checked, every function typed.

    Methods are the header's functions without the ``rkllm_`` prefix; they return the C status
    code (0 = success) unless said otherwise, and never raise on a non-zero code: the caller
    decides what a failure means.

    Args:
        path: the ``.so``; default :func:`find_library`.
        soc: when given, checked with :func:`check_soc` first.
        runtime_version: skip reading the version from the file (use the version the runtime
            prints); still checked.
    Raises:
        RkllmSocError, RkllmVersionError: see :func:`check_soc`, :func:`check_runtime_version`.
        RkllmError: the file is missing, cannot be loaded, or lacks a 1.3.0 function.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, soc: str | None = None,
                 runtime_version: str | None = None):
        if soc is not None:
            check_soc(soc)
        self.path = Path(path) if path is not None else find_library()
        if not self.path.is_file():
            raise RkllmError(f"{self.path}: RKLLM runtime library not found")
        self.version = runtime_version or read_runtime_version(self.path)
        check_runtime_version(self.version, self.path)
        try:
            self.cdll = ctypes.CDLL(str(self.path))
        except OSError as e:
            raise RkllmError(f"{self.path}: cannot load the RKLLM runtime: {e}") from None
        for name, restype, argtypes in _FUNCTIONS:
            try:
                fn = getattr(self.cdll, name)
            except AttributeError:
                raise RkllmError(f"{self.path}: no symbol {name}; not an RKLLM {HEADER_VERSION} runtime") from None
            fn.restype, fn.argtypes = restype, argtypes

    def create_default_param(self) -> RKLLMParam:
        """``rkllm_createDefaultParam()``: the runtime's defaults, returned by value."""
        return self.cdll.rkllm_createDefaultParam()

    def init(self, param: RKLLMParam, callback: RKLLMCallback) -> tuple[int, LLMHandle]:
        """``rkllm_init(&handle, &param, &callback)`` → ``(status, handle)``. Keep ``callback``
        and the Python callable in it alive until :meth:`destroy`: the runtime keeps the pointer."""
        handle = LLMHandle()
        rc = self.cdll.rkllm_init(ctypes.byref(handle), ctypes.byref(param), ctypes.byref(callback))
        return rc, handle

    def run(self, handle: LLMHandle, rkllm_input: RKLLMInput, infer_param: RKLLMInferParam,
            userdata: int | None = None) -> int:
        """``rkllm_run``: blocks until the run ends; the callback runs on this thread."""
        return self.cdll.rkllm_run(handle, ctypes.byref(rkllm_input), ctypes.byref(infer_param), userdata)

    def run_async(self, handle: LLMHandle, rkllm_input: RKLLMInput, infer_param: RKLLMInferParam,
                  userdata: int | None = None) -> int:
        """``rkllm_run_async``: returns at once; keep the arguments alive until FINISH/ERROR."""
        return self.cdll.rkllm_run_async(handle, ctypes.byref(rkllm_input), ctypes.byref(infer_param), userdata)

    def abort(self, handle: LLMHandle) -> int:
        """``rkllm_abort``: ask a running generation to stop; callable from any thread."""
        return self.cdll.rkllm_abort(handle)

    def is_running(self, handle: LLMHandle) -> bool:
        """``rkllm_is_running`` (which returns 0 *while* a task runs) as a bool."""
        return self.cdll.rkllm_is_running(handle) == 0

    def clear_kv_cache(self, handle: LLMHandle, keep_system_prompt: bool,
                       start_pos: list[int] | None = None, end_pos: list[int] | None = None) -> int:
        """``rkllm_clear_kv_cache``; ``start_pos``/``end_pos`` (one per batch, [start, end)) or
        both ``None`` to clear everything (then ``keep_system_prompt`` applies)."""
        if (start_pos is None) != (end_pos is None):
            raise ValueError("clear_kv_cache: give both start_pos and end_pos, or neither")
        sp = ep = None
        if start_pos is not None:
            sp = (ctypes.c_int * len(start_pos))(*start_pos)
            ep = (ctypes.c_int * len(end_pos))(*end_pos)
        return self.cdll.rkllm_clear_kv_cache(handle, int(bool(keep_system_prompt)), sp, ep)

    def get_kv_cache_size(self, handle: LLMHandle, n_batch: int = 1) -> tuple[int, list[int]]:
        """``rkllm_get_kv_cache_size`` → ``(status, positions per batch)``."""
        sizes = (ctypes.c_int * n_batch)()
        rc = self.cdll.rkllm_get_kv_cache_size(handle, sizes)
        return rc, list(sizes)

    def set_chat_template(self, handle: LLMHandle, system_prompt: str, prompt_prefix: str, prompt_postfix: str) -> int:
        """``rkllm_set_chat_template``; three empty strings turn the runtime's own chat wrapping off."""
        return self.cdll.rkllm_set_chat_template(handle, system_prompt.encode(), prompt_prefix.encode(),
                                                 prompt_postfix.encode())

    def destroy(self, handle: LLMHandle) -> int:
        """``rkllm_destroy``: frees the model; the handle is invalid afterwards."""
        return self.cdll.rkllm_destroy(handle)
