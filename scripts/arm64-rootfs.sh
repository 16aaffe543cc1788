#!/usr/bin/env bash
# An arm64 Debian 12 (bookworm) root file system to run aarch64 Python under qemu-aarch64-static on
# an x86 machine, with Rockchip's real RKNN runtime in it:
#   - debootstrap --foreign --variant=minbase --include=python3.11,... then `dpkg-deb -x`
#     of every downloaded package instead of the second stage (which would need binfmt_misc or a chroot);
#   - /opt/rknn: rknn-toolkit-lite2 2.5.0 (RKNNLite), onnxruntime and numpy (the versions of the project's
#     venv) with their dependencies: aarch64 wheels for CPython 3.11 resolved and installed by the host's
#     pip (--platform manylinux_2_17..2_36_aarch64 --only-binary=:all:, so nothing newer than bookworm's
#     glibc 2.36);
#   - /usr/lib/librknnrt.so: the real runtime 1.5.2 from the aarch64 wheel rknpu==1.5.2 (RKNNLite 2.5.0
#     loads only this path).
# Cached in $EDGE_ARM64_CACHE (default ~/.cache/edge-arm64): a second run prints the path at once.
# Usage: scripts/arm64-rootfs.sh      -> prints the root file system's path on stdout (progress on stderr)
# Needs: debootstrap, qemu-user-static, dpkg-deb (scripts/setup.sh installs them on x86), network to the
# Debian mirror in apt's sources and to PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=${EDGE_ARM64_CACHE:-$HOME/.cache/edge-arm64}
PY=${PYTHON:-$ROOT/.venv/bin/python}
SUITE=bookworm
# Debian packages: the interpreter and the shared libraries the product's aarch64 wheels link against
# (libgomp1: onnxruntime/ctranslate2; libstdc++6; libsndfile1: soundfile; espeak-ng: the replies' voice;
# libportaudio2: live audio), the Debian packages `edge doctor` (check packages) looks for.
DEBS=python3.11,libpython3.11,libstdc++6,libgomp1,libsndfile1,espeak-ng,libespeak-ng1,libportaudio2,ca-certificates
# The RKNN side (pyproject.toml extra "rk"), onnxruntime and numpy at the venv's versions (the CPU path).
RKNN_WHEELS=("rknn-toolkit-lite2==2.5.0" "rknpu==1.5.2" "onnxruntime==1.32.0" "numpy==2.4.6")
# manylinux tags up to the board image's glibc (bookworm: 2.36); pip picks the newest wheel that fits
PLATFORMS=(--platform manylinux2014_aarch64)
for v in $(seq 17 36); do PLATFORMS+=(--platform "manylinux_2_${v}_aarch64"); done
KEY="$SUITE-$( { printf '%s\n' "$DEBS" "${RKNN_WHEELS[@]}"; cat "$0"; } | sha256sum | cut -c1-12)"  # this script too
ROOTFS=$CACHE/rootfs-$KEY
say() { printf '[arm64-rootfs] %s\n' "$*" >&2; }

if [ -f "$ROOTFS/.edge-rootfs-ok" ]; then echo "$ROOTFS"; exit 0; fi
for tool in debootstrap dpkg-deb qemu-aarch64-static; do
  command -v "$tool" >/dev/null || { say "$tool is missing: run scripts/setup.sh (apt-get install debootstrap qemu-user-static)"; exit 3; }
done
mkdir -p "$CACHE"
# one builder at a time (a test run and the arm64 check started together would share $TMP): the second
# waits for the first, then finds the root finished
exec 9>"$CACHE/rootfs.lock"
flock 9
if [ -f "$ROOTFS/.edge-rootfs-ok" ]; then echo "$ROOTFS"; exit 0; fi
MIRROR=${EDGE_DEBIAN_MIRROR:-$( { cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true; } |
                                awk '/^URIs:/ || /^deb / {print $2}' | grep -v security | head -1)}
[ -n "$MIRROR" ] || MIRROR=http://deb.debian.org/debian
TMP=$ROOTFS.part
rm -rf "$TMP"
say "debootstrap --foreign arm64 $SUITE from $MIRROR into $TMP"
debootstrap --foreign --arch=arm64 --variant=minbase --include="$DEBS" "$SUITE" "$TMP" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
  || { tail -20 "$CACHE/debootstrap.log" >&2; exit 1; }
say "unpacking $(ls "$TMP"/var/cache/apt/archives/*.deb | wc -l) packages with dpkg-deb -x"
# each unpacked package is also recorded in dpkg's database as installed (what the second stage's
# dpkg --install would leave), so `edge doctor`'s package check reads the image as on a board
mkdir -p "$TMP/var/lib/dpkg"
for deb in "$TMP"/var/cache/apt/archives/*.deb; do
  dpkg-deb -x "$deb" "$TMP"
  { dpkg-deb -f "$deb" | sed '/^Package:/a Status: install ok installed'; echo; } >>"$TMP/var/lib/dpkg/status"
done
rm -rf "$TMP/var/cache/apt/archives/"*.deb "$TMP/debootstrap"
# What qemu-user does not emulate, laid under the root (qemu -L serves a path from there when it exists):
# - /proc/cpuinfo: qemu 7.2 passes the host's x86 one through, and onnxruntime's cpuinfo crashes on it
#   (SIGSEGV at import); an RK3588 big core's (Cortex-A76, part 0xd0b) lines instead.
# - /proc/device-tree/compatible of a ROCK 5B, and /dev/dri/renderD129 as a plain file: RKNNLite's
#   init_runtime refuses without them before it calls librknnrt; with them the real runtime runs
#   rknn_init and fails as on a board without the rknpu driver ("failed to open rknpu module").
mkdir -p "$TMP/proc/device-tree" "$TMP/dev/dri"
for i in 0 1 2 3; do
  printf 'processor\t: %s\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x4\nCPU part\t: 0xd0b\nCPU revision\t: 0\n\n' "$i"
done >"$TMP/proc/cpuinfo"
printf 'radxa,rock-5b\0rockchip,rk3588\0' >"$TMP/proc/device-tree/compatible"
: >"$TMP/dev/dri/renderD129"

say "aarch64 wheels for CPython 3.11 into /opt/rknn: ${RKNN_WHEELS[*]}"
"$PY" -m pip --disable-pip-version-check -q install --only-binary=:all: "${PLATFORMS[@]}" --python-version 3.11 \
  --implementation cp --target "$TMP/opt/rknn" --cache-dir "$CACHE/pip" "${RKNN_WHEELS[@]}" \
  > "$CACHE/pip-rknn.log" 2>&1 || { cat "$CACHE/pip-rknn.log" >&2; exit 1; }
cp "$TMP"/opt/rknn/rknpu.libs/librknnrt-*.so "$TMP/usr/lib/librknnrt.so"

say "check: aarch64 python3.11 imports numpy, onnxruntime and RKNNLite under qemu"
qemu-aarch64-static -L "$TMP" "$TMP/usr/bin/python3.11" -c \
  "import sys; sys.path.insert(0, '/opt/rknn'); import numpy, onnxruntime; from rknnlite.api import RKNNLite"
touch "$TMP/.edge-rootfs-ok"
mv "$TMP" "$ROOTFS"
echo "$ROOTFS"
