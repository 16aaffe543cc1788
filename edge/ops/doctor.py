"""``edge doctor``: the box checks itself, one line per check, and says how to fix each failure.

    edge doctor [--json] [--root DIR] [--board NAME] [--user edge] [--no-audio-probe]

The board: ``--board``, else ``board:`` in the config, else the board config whose ``compatible``
holds one of the device tree's root compatible strings, else the generic config of the CPU
architecture (``x86-dev``, ``generic-aarch64``); the report names the one chosen and how, and lists
the board configs. ``--json`` prints one JSON object, a refusal included (exit status 2).

Checks, in order (:data:`CHECKS`); each gives ``ok``, ``warn`` or ``fail``, and a ``fix`` for a
failure. The exit status is 1 when any check fails, else 0.

``packages``     Debian packages (espeak-ng, libportaudio2) from the dpkg database, Python packages.
``image``        the OS image against the board config's ``board.image``: ``/etc/os-release`` (another OS warns),
                 glibc from ``libc.so.6`` (older than the image's fails: the resolved wheels may not load),
                 the Python running edge (older than 3.10 fails, another than the image's warns).
``user``         the service user exists and is in ``audio`` and the NPU node's group (case C07).
``audio``        capture devices and their native rates (PortAudio, ``drivers.audio.devices.list_devices``)
                 and the board's expected ALSA cards in ``/proc/asound/cards``.
``devices``      ``/dev/snd`` capture nodes; the NPU node (``board.npu.device_node``).
``permissions``  the service user can read and write ``/dev/snd/*`` and the NPU node (case C07: names
                 the node, its owner group and mode, and the missing group).
``npu-driver``   the rknpu driver version (``board.npu.driver_version_paths``) ≥ ``min_driver_version``.
``runtimes``     librknnrt / librkllmrt version strings (read from the .so bytes) against the version the
                 board's models were converted with (``board.npu.runtimes[].model_version``), major.minor.
``nofile``       the open-file limit (``/proc/self/limits``) ≥ 65536 (the unit's ``LimitNOFILE``).
``thermal``      every board thermal zone is present and its temperature readable.
``models``       the board's recommended models: magic, size, SHA-256 (``edge.models.manifest.verify``).
``licences``     the configured models' licences (``edge.models.licences``); a warning when a wake word is
                 non-commercial or someone else's name.
``memory``       the estimate (LLM weights + KV cache + pipeline) against MemAvailable minus the 30 % reserve.
``disk``         free space where the data lives (``/var/lib/edge``).
``store``        the store's integrity; a rebuild after corruption (``edge.stock.recovery``) is a warning.
``unit``         the installed unit (when there is one) sets LimitNOFILE and has the board drop-in.

Every path is read under ``root`` (default ``/``), so the tests run the doctor on fake ``/sys``,
``/proc``, ``/dev``, ``/etc`` trees in a temp folder. The PortAudio probe looks at the real machine;
it runs only when ``probe_audio`` is set (the default for ``root=/``).
"""
from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import stat
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from drivers import system
from drivers.audio.devices import list_devices
from drivers.sensors.meminfo import read_meminfo
from drivers.sensors.thermal import read_zones
from edge.boards import MEMORY_RESERVE, BoardChoice, BoardSpec, board_names, detect_board, load_board
from edge.config import load_settings
from edge.errors import UserError
from edge.governor.admission import estimate
from edge.llm.shape import ModelShapeError
from edge.models import licences
from edge.models import manifest as models
from edge.models.local import find_model
from edge.models.startup import check_configured
from edge.stock import recovery as store_recovery

STATUSES = ("ok", "warn", "fail")
#: Debian packages the loop needs at run time: TTS voice and PortAudio (pyaudio links against it).
DEB_PACKAGES = ("espeak-ng", "libportaudio2")
#: Python distributions the service imports at run time (name as pip knows it).
PIP_PACKAGES = ("pyaudio", "llama_cpp_python", "pymicro-wakeword", "pymicro-features", "openwakeword", "faster-whisper",
                "onnxruntime", "pyttsx3")
DEFAULT_USER = "edge"
DATA_DIR = "/var/lib/edge"
UNIT_PATH = "/etc/systemd/system/edge.service"
DROPIN_PATH = "/etc/systemd/system/edge.service.d/10-board.conf"
#: Free disk below this (MiB) at the data folder fails: the store, reply WAVs and one model bundle
#: being unpacked beside the current one (the default models are ~200 MiB).
MIN_FREE_DISK_MIB = 1024
MIB = 1 << 20
#: The oldest Python edge runs on (pyproject.toml ``requires-python``).
MIN_PYTHON = (3, 10)


class DoctorError(UserError):
    """The doctor cannot run as asked (an unknown ``--check`` name); the message lists the known ones."""


@dataclass(frozen=True)
class CheckResult:
    """One line of the report: ``name`` (one of :data:`CHECKS`), ``status`` (ok | warn | fail),
    ``message`` (what was found) and ``fix`` (what to do; always set on ``fail``)."""

    name: str
    status: str
    message: str
    fix: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        fix = f"  -> fix: {self.fix}" if self.fix and self.status != "ok" else ""
        return f"{self.status.upper():<5} {self.name:<12} {self.message}{fix}"


@dataclass
class Doctor:
    """The context every check reads.

    Args:
        root: folder the board's paths are read under (``/`` on the board).
        board: the board's :class:`~edge.boards.BoardSpec`.
        settings: the merged :class:`~edge.config.Settings` (LLM model, n_ctx, governor figures).
        user: the service user (``edge``).
        manifest: model manifest path (default: ``$EDGE_MANIFEST`` or the repo's).
        probe_audio: ask PortAudio for capture devices (real hardware; off for fake trees).
        min_free_disk_mib: the ``disk`` threshold, MiB.
        list_devices: the PortAudio device lister (``drivers.audio.devices.list_devices``).
    """

    root: Path
    board: BoardSpec
    settings: object
    user: str = DEFAULT_USER
    manifest: Path | None = None
    probe_audio: bool = True
    min_free_disk_mib: int = MIN_FREE_DISK_MIB
    list_devices: Callable[[], list[dict]] | None = None
    _audio: tuple[list[dict] | None, str] | None = field(default=None, repr=False)

    # -- shared look-ups -----------------------------------------------------------------------
    def account(self):
        return system.read_account(self.root, self.user)

    def capture_devices(self) -> tuple[list[dict] | None, str]:
        """PortAudio capture devices (None when not probed or the probe failed) and why not."""
        if self._audio is None:
            if not self.probe_audio:
                self._audio = (None, "PortAudio probe off (--no-audio-probe or a --root tree)")
            else:
                try:
                    lister = self.list_devices or list_devices
                    devs = [d for d in lister() if d["max_input_channels"] > 0]
                    self._audio = (devs, "")
                except Exception as e:  # AudioDeviceError, pyaudio missing
                    self._audio = (None, f"PortAudio: {e}")
        return self._audio

    # -- running -------------------------------------------------------------------------------
    def run(self, only: list[str] | None = None) -> list[CheckResult]:
        """Run the checks (all, or those named in ``only``, in :data:`CHECKS` order).

        Raises:
            DoctorError: a name in ``only`` is not one of :data:`CHECKS`.
        """
        unknown = set(only or []) - set(CHECKS)
        if unknown:
            raise DoctorError(f"--check: unknown check(s) {', '.join(sorted(unknown))}; known: {', '.join(CHECKS)}")
        out = []
        for name, fn in CHECKS.items():
            if only and name not in only:
                continue
            try:
                out.append(fn(self))
            except Exception as e:  # a check that crashes is itself a failure, with its reason
                out.append(CheckResult(name, "fail", f"the check crashed: {type(e).__name__}: {e}",
                                       "report this with the output of `edge doctor --json`"))
        return out


# ------------------------------------------------------------------------------------------------
# the checks

def check_packages(d: Doctor) -> CheckResult:
    debs = system.dpkg_installed(d.root, list(DEB_PACKAGES))
    missing_pip = []
    for name in PIP_PACKAGES:
        try:
            md.version(name)
        except md.PackageNotFoundError:
            missing_pip.append(name)
    if debs is None:
        msg = "no dpkg database (not a Debian system): Debian packages not checked"
        status, fix = "warn", ""
    else:
        missing = [n for n, v in debs.items() if v is None]
        if missing:
            return CheckResult("packages", "fail", f"Debian packages missing: {', '.join(missing)}",
                               f"apt-get install {' '.join(missing)}")
        msg = ", ".join(f"{n} {v}" for n, v in debs.items())
        status, fix = "ok", ""
    if missing_pip:
        return CheckResult("packages", "fail", f"{msg}; Python packages missing: {', '.join(missing_pip)}",
                           "run scripts/setup.sh (it installs them into the venv)")
    return CheckResult("packages", status, msg + f"; Python packages present ({len(PIP_PACKAGES)})", fix)


def check_image(d: Doctor) -> CheckResult:
    img = d.board.image
    if img is None:
        return CheckResult("image", "ok", f"{d.board.name} names no OS image")
    needs = (f"needs glibc >= {img.glibc}, Python {img.python}"
             + (f", rknpu >= {d.board.npu.min_driver_version}" if d.board.npu else "")
             + f", groups {', '.join(d.board.supplementary_groups)}")
    bad, warn, found, fixes = [], [], [], []
    rel = system.os_release(d.root)
    os_id = f"{rel.get('ID', '?')}-{rel.get('VERSION_ID', '?')}" if rel else None
    if os_id is None:
        warn.append("no /etc/os-release")
    elif os_id != img.os:
        warn.append(f"OS {os_id}, but {d.board.name} was checked against {img.os} ({img.name})")
    else:
        found.append(f"OS {os_id}")
    glibc, where = system.glibc_version(d.root)
    if glibc is None:
        warn.append("glibc version unknown (no libc.so.6 with a release banner)")
    elif system.version_tuple(glibc) < system.version_tuple(img.glibc):
        bad.append(f"glibc {glibc} ({where}) is older than the image's {img.glibc}: wheels tagged manylinux_"
                   f"{img.glibc.replace('.', '_')} do not load, and pip quietly installs older releases")
        fixes.append(f"flash the image the board config names ({img.name}) or a newer one")
    else:
        found.append(f"glibc {glibc}")
    py = sys.version_info[:2]
    if py < MIN_PYTHON:
        bad.append(f"Python {py[0]}.{py[1]} runs edge, older than {MIN_PYTHON[0]}.{MIN_PYTHON[1]}")
        fixes.append(f"install python{img.python} (the image's) and run scripts/setup.sh with it")
    elif f"{py[0]}.{py[1]}" != img.python:
        warn.append(f"Python {py[0]}.{py[1]} runs edge; the image has {img.python}, for which the wheels were checked")
    else:
        found.append(f"Python {img.python}")
    text = "; ".join(bad + warn + found) + f" ({needs}; checked: {img.checked})"
    if bad:
        return CheckResult("image", "fail", text, "; ".join(fixes))
    return CheckResult("image", "warn" if warn else "ok", text)


def _needed_groups(d: Doctor) -> list[str]:
    return d.board.supplementary_groups


def check_user(d: Doctor) -> CheckResult:
    acct = d.account()
    if acct is None:
        return CheckResult("user", "fail", f"no user {d.user!r} in {system.under(d.root, '/etc/passwd')}",
                           f"edge install --board {d.board.name} (creates the user and its groups)")
    groups = system.read_groups(d.root)
    missing_groups = [g for g in _needed_groups(d) if g not in groups]
    if missing_groups:
        return CheckResult("user", "fail", f"group(s) {', '.join(missing_groups)} do not exist",
                           f"groupadd --system {missing_groups[0]} and usermod -aG {','.join(missing_groups)} {d.user} "
                           f"(edge install does both)")
    not_in = [g for g in _needed_groups(d) if g not in acct.groups]
    if not_in:
        why = {"audio": "it owns /dev/snd/*"}
        if d.board.npu:
            why[d.board.npu.device_group] = f"it owns the NPU node {d.board.npu.device_node}"
        reasons = "; ".join(f"{g}: {why.get(g, 'needed by the unit')}" for g in not_in)
        return CheckResult("user", "fail", f"user {d.user} is not in group(s) {', '.join(not_in)} ({reasons})",
                           f"usermod -aG {','.join(not_in)} {d.user}, then systemctl restart edge")
    return CheckResult("user", "ok", f"user {d.user} (uid {acct.uid}) in groups {', '.join(sorted(acct.groups))}")


def check_audio(d: Doctor) -> CheckResult:
    cards = system.asound_cards(d.root)
    card_text = ("ALSA cards: " + ", ".join(f"{c.index} {c.id}" for c in cards)) if cards else "no ALSA cards"
    expected = d.board.audio.capture_cards
    devs, why = d.capture_devices()
    if devs is not None:
        if not devs:
            return CheckResult("audio", "fail", f"no capture device (PortAudio lists none); {card_text}",
                               "plug in the microphone; check `arecord -l`; the service user must be in "
                               "group audio; with PulseAudio check PULSE_SERVER and `pactl list sources short`")
        listing = ", ".join(f"{x['name']!r} {x['default_sample_rate']} Hz {x['max_input_channels']} ch" for x in devs)
        return CheckResult("audio", "ok", f"capture: {listing}; {card_text}")
    # no probe: judge from the ALSA cards alone
    if cards is None:
        return CheckResult("audio", "warn", f"{why}; no /proc/asound/cards (no ALSA in this kernel?)")
    if expected and cards and not any(e.lower() in (c.id + " " + c.name).lower() for e in expected for c in cards):
        return CheckResult("audio", "warn", f"{card_text}; none matches the board's capture cards {expected}; {why}",
                           "plug in the microphone the board config expects, or edit board.audio.capture_cards")
    if not cards:
        return CheckResult("audio", "fail", f"{card_text}; {why}",
                           "plug in a (USB) microphone; check `arecord -l` and `dmesg | grep -i snd`")
    return CheckResult("audio", "ok", f"{card_text}; {why}")


def check_devices(d: Doctor) -> CheckResult:
    problems, fixes, found = [], [], []
    names = system.sound_nodes(d.root)
    caps = system.capture_nodes(names)
    devs, _ = d.capture_devices()
    if caps:
        found.append(f"/dev/snd: {', '.join(caps)}")
    elif devs:
        found.append("no /dev/snd capture node, capture goes through a sound server")
    else:
        problems.append("no ALSA capture node (/dev/snd/pcmC*D*c)")
        fixes.append("plug in the microphone; `arecord -l` must list it")
    if d.board.npu:
        npu = d.board.npu
        na = system.node_access(d.root, npu.device_node, None)
        if na.exists:
            found.append(f"NPU {npu.device_node}" + ("" if na.is_char else " (not a character device!)"))
            if not na.is_char:
                problems.append(f"{npu.device_node} is not a character device")
                fixes.append("the rknpu driver creates it; remove whatever file sits there and reboot")
        else:
            alts = [a for a in npu.alt_device_nodes if system.node_access(d.root, a, None).exists]
            problems.append(f"NPU node {npu.device_node} missing" + (f" (present: {', '.join(alts)})" if alts else ""))
            if alts:
                fixes.append(f"set board.npu.device_node to the node librknnrt uses, or load the vendor rknpu "
                             f"driver (present: {', '.join(alts)})")
            else:
                fixes.append("boot the vendor kernel with the rknpu driver (`dmesg | grep -i rknpu`, "
                             "`ls -l /dev/dri`); mainline kernels have no rknpu")
    if problems:
        return CheckResult("devices", "fail", "; ".join(problems + found), "; ".join(fixes))
    return CheckResult("devices", "ok", "; ".join(found) or "no device nodes needed")


def _mode_text(na: system.NodeAccess) -> str:
    return f"{stat.filemode(na.mode | (stat.S_IFCHR if na.is_char else stat.S_IFREG))} group {na.group}"


def check_permissions(d: Doctor) -> CheckResult:
    acct = d.account()
    if acct is None:
        return CheckResult("permissions", "fail", f"no user {d.user!r}: permissions cannot be judged",
                           f"edge install --board {d.board.name}")
    nodes = [f"/dev/snd/{n}" for n in system.sound_nodes(d.root)]
    if d.board.npu:
        nodes.append(d.board.npu.device_node)
    bad, fixes, ok = [], [], 0
    for path in nodes:
        na = system.node_access(d.root, path, acct)
        if not na.exists:
            continue
        if na.read and na.write:
            ok += 1
            continue
        lacks = " and ".join(x for x, v in (("read", na.read), ("write", na.write)) if not v)
        bad.append(f"{path} ({_mode_text(na)}): user {d.user} cannot {lacks}")
        if na.group not in acct.groups and na.mode & 0o060 == 0o060:
            fixes.append(f"usermod -aG {na.group} {d.user}")
        elif na.group in acct.groups:
            fixes.append(f"chmod g+rw {path} (udev rule: MODE=\"0660\" for it)")
        else:
            fixes.append(f"give {path} to a group {d.user} is in with mode 0660 (udev rule GROUP=, MODE=\"0660\")")
    if bad:
        return CheckResult("permissions", "fail", "; ".join(bad), "; ".join(dict.fromkeys(fixes)))
    return CheckResult("permissions", "ok", f"user {d.user} can read and write {ok} device node(s)")


def check_npu_driver(d: Doctor) -> CheckResult:
    npu = d.board.npu
    if npu is None:
        return CheckResult("npu-driver", "ok", f"{d.board.name} is CPU-only: no NPU driver needed")
    version, path = system.npu_driver_version(d.root, npu.driver_version_paths)
    if version is None:
        return CheckResult("npu-driver", "fail", f"no rknpu driver version in {', '.join(npu.driver_version_paths)}",
                           "boot the vendor kernel with the rknpu driver (`lsmod | grep rknpu`, `dmesg | grep -i rknpu`)")
    if system.version_tuple(version) < system.version_tuple(npu.min_driver_version):
        return CheckResult("npu-driver", "fail", f"rknpu driver {version} ({path}) is older than "
                           f"{npu.min_driver_version}", f"update the board's kernel to one with rknpu "
                           f">= {npu.min_driver_version} (rknn-llm releases ship it under rknpu-driver/)")
    return CheckResult("npu-driver", "ok", f"rknpu driver {version} ({path})")


def check_runtimes(d: Doctor) -> CheckResult:
    npu = d.board.npu
    if npu is None or not npu.runtimes:
        return CheckResult("runtimes", "ok", "no NPU runtime libraries needed")
    bad, fixes, ok = [], [], []
    for rt in npu.runtimes:
        p = system.under(d.root, rt.path)
        try:
            found = system.library_version(p, rt.name)
        except OSError as e:
            bad.append(f"{rt.path} missing or unreadable ({e.strerror or e})")
            fixes.append(f"install {rt.name}.so {rt.model_version} to {rt.path}")
            continue
        if found is None:
            bad.append(f"{rt.path}: no version string found in the library")
            fixes.append(f"replace {rt.path} with the {rt.name}.so of release {rt.model_version}")
            continue
        if system.version_tuple(found)[:2] != system.version_tuple(rt.model_version)[:2]:
            bad.append(f"{rt.name} {found} at {rt.path}, but the models were converted with {rt.model_version}")
            fixes.append(f"install {rt.name}.so {rt.model_version} to {rt.path}, or reconvert the models with "
                         f"toolkit {found}")
            continue
        ok.append(f"{rt.name} {found}")
    if bad:
        return CheckResult("runtimes", "fail", "; ".join(bad + ok), "; ".join(fixes))
    return CheckResult("runtimes", "ok", ", ".join(ok) + " match the models' conversion versions")


def check_nofile(d: Doctor) -> CheckResult:
    want = d.board.service.nofile
    soft, hard = system.open_files_limit(d.root)
    if soft is None:
        return CheckResult("nofile", "warn", "open-file limit unknown (/proc/self/limits unreadable)")
    if soft < want:
        return CheckResult("nofile", "fail", f"open-file limit (RLIMIT_NOFILE) is {soft}, below {want}",
                           f"LimitNOFILE={want} in the unit (edge install writes it), or `ulimit -n {want}` "
                           f"in the shell that runs edge")
    return CheckResult("nofile", "ok", f"open-file limit {soft} (hard {hard})")


def check_thermal(d: Doctor) -> CheckResult:
    if not d.board.thermal_zones:
        return CheckResult("thermal", "ok", f"{d.board.name} lists no thermal zones")
    zones, _ = read_zones(system.under(d.root, "/sys/class/thermal"))
    bad, ok = [], []
    for want in d.board.thermal_zones:
        z = next((z for z in zones if z.type in want.names), None)
        if z is None:
            bad.append(f"zone {want.name} missing")
        elif z.temp_c is None:
            bad.append(f"zone {want.name} ({z.name}/temp) unreadable")
        else:
            ok.append(f"{z.type} {z.temp_c:.1f} °C")
    if bad:
        return CheckResult("thermal", "fail", "; ".join(bad),
                           "check `cat /sys/class/thermal/thermal_zone*/type` and that the tsadc driver loaded; "
                           "if the kernel names zones differently, add the name to board.thermal_zones[].aliases")
    return CheckResult("thermal", "ok", ", ".join(ok))


def check_models(d: Doctor) -> CheckResult:
    manifest = models.load_manifest(d.manifest)
    packaged = [i for i in d.board.models.recommended if i in manifest.ids]
    local_problems, local_fixes = [], []
    for mid in (i for i in d.board.models.recommended if i not in manifest.ids):
        try:  # a model from local media (manifest local_models:, `edge models add`)
            find_model(mid, getattr(getattr(d.settings, "models", None), "dir", None), d.manifest)
        except FileNotFoundError as e:
            local_problems.append(str(e))
            local_fixes.append(f"edge models add FILE --id {mid}")
    checks = models.verify(packaged, manifest)
    failed = [c for c in checks if not c.ok]
    if failed or local_problems:
        msgs = [c.message for c in failed[:5]] + local_problems
        return CheckResult("models", "fail", "; ".join(msgs) + (f" (+{len(failed) - 5} more)" if len(failed) > 5 else ""),
                           "; ".join(dict.fromkeys([c.fix for c in failed if c.fix] + local_fixes)) or "edge models verify")
    n_files = len({(c.model_id, c.file) for c in checks if c.file})
    return CheckResult("models", "ok", f"{len(d.board.models.recommended)} models, {n_files} files: magic, size, "
                       f"SHA-256 ok ({manifest.path})")


def llm_memory_estimate(settings, manifest: Path | None = None) -> tuple[int, str]:
    """``(bytes, how)`` the configured LLM needs: the resource governor's estimate
    (:func:`edge.governor.admission.estimate`: weights + KV cache for ``llm.n_ctx`` and ``governor.kv_cache_type``
    from the GGUF header + ``governor.pipeline_overhead_mib``)."""
    gov = settings.governor
    overhead = int(gov.pipeline_overhead_mib) * MIB
    if settings.llm.engine == "none":
        return overhead, f"pipeline {overhead // MIB} MiB (no LLM)"
    est = estimate(settings.llm.model, settings.llm.n_ctx, gov.kv_cache_type, gov.pipeline_overhead_mib,
                   manifest_path=manifest, models_dir=settings.models.dir)
    return est.total_bytes, est.describe()


def check_memory(d: Doctor) -> CheckResult:
    mi = read_meminfo(system.under(d.root, "/proc/meminfo"))
    if mi.total_bytes is None or mi.available_bytes is None:
        return CheckResult("memory", "warn", "MemTotal/MemAvailable unknown: " + "; ".join(mi.problems))
    bad_llm = [p for p in check_configured(d.settings)[1] if p.check in ("html", "lfs-pointer", "magic")]
    if bad_llm:  # sized from the file's header: a file that is no model is that, not a memory problem
        p = bad_llm[0]
        return CheckResult("memory", "fail", f"the LLM's memory cannot be estimated: {p}",
                           f"{p.key}: {p.why.split('; ')[-1]}")
    try:
        need, how = llm_memory_estimate(d.settings, d.manifest)
    except ModelShapeError as e:  # e.g. an arm64 image before setup.sh built llama-cpp-python: say so, not a crash
        why = str(e)
        return CheckResult("memory", "fail", f"the LLM's memory cannot be estimated: {why}",
                           why.split(": ", 1)[-1] if "needs" in why else "check llm.model in the settings")
    reserve = int(mi.total_bytes * MEMORY_RESERVE)
    room = mi.available_bytes - reserve
    text = (f"needs ~{need // MIB} MiB ({how}); MemAvailable {mi.available_bytes // MIB} MiB minus the "
            f"{int(MEMORY_RESERVE * 100)} % reserve ({reserve // MIB} MiB of {mi.total_bytes // MIB} MiB) "
            f"leaves {max(room, 0) // MIB} MiB")
    if need > room:
        return CheckResult("memory", "fail", text, f"lower llm.n_ctx (now {d.settings.llm.n_ctx}), pick a smaller "
                           f"model from board.models.recommended, or stop other services using memory")
    return CheckResult("memory", "ok", text)


def check_disk(d: Doctor) -> CheckResult:
    free, where = system.disk_free(d.root, DATA_DIR)
    if free < d.min_free_disk_mib * MIB:
        return CheckResult("disk", "fail", f"{free // MIB} MiB free at {where}, below {d.min_free_disk_mib} MiB",
                           "free space: old reply WAVs (/var/lib/edge/replies), old model bundles "
                           "(/var/lib/edge/models/bundle-*), journal (`journalctl --vacuum-size=100M`)")
    return CheckResult("disk", "ok", f"{free // MIB} MiB free at {where}")


def check_store(d: Doctor) -> CheckResult:
    path = Path(d.settings.store.path)
    db = system.under(d.root, path) if path.is_absolute() else path
    rebuilt = store_recovery.read_report(db)
    if rebuilt:
        return CheckResult("store", "warn", f"{db} was corrupt ({rebuilt['damage']}) and was rebuilt at "
                           f"{rebuilt['time']}: {rebuilt['records']} records ({rebuilt['records_from_backup']} "
                           f"from the backup, {rebuilt['records_read_from_damaged']} read from the damaged file); "
                           f"the damaged file is kept as {rebuilt['moved_to']}",
                           f"check the stock (edge records export --csv), keep or archive {rebuilt['moved_to']}, "
                           f"then delete {store_recovery.report_path(db)}; replace the card if it happens again")
    what = store_recovery.damage(db)
    if what:
        return CheckResult("store", "fail", f"{db} is corrupt: {what}",
                           "restart the service: it keeps the file aside and rebuilds it from the last backup "
                           f"({store_recovery.backup_path(db)}) and what can still be read")
    if not db.is_file():
        return CheckResult("store", "warn", f"{db} does not exist yet", "edge inventory import FILE.csv")
    bak = store_recovery.backup_path(db)
    return CheckResult("store", "ok", f"{db} intact" + (f"; backup {bak}" if bak.is_file() else "; no backup yet"))


def check_unit(d: Doctor) -> CheckResult:
    unit = system.under(d.root, UNIT_PATH)
    if not unit.exists():
        return CheckResult("unit", "warn", f"{UNIT_PATH} not installed", f"edge install --board {d.board.name}")
    text = unit.read_text(errors="replace")
    dropin = system.under(d.root, DROPIN_PATH)
    problems = []
    m = re.search(r"^LimitNOFILE=(\d+)", text, re.M)
    if not m or int(m.group(1)) < d.board.service.nofile:
        problems.append(f"LimitNOFILE below {d.board.service.nofile}")
    if not dropin.exists():
        problems.append(f"no board drop-in {DROPIN_PATH} (MemoryMax, NPU group)")
    if problems:
        return CheckResult("unit", "fail", "; ".join(problems), f"edge install --board {d.board.name}")
    return CheckResult("unit", "ok", f"{UNIT_PATH} with {DROPIN_PATH}")


def check_licences(d: Doctor) -> CheckResult:
    """The configured models' licences: may a commercial product ship them? A wake word that is
    non-commercial or someone else's name is a warning (the box works; the product may not ship)."""
    used = licences.in_use(d.settings, models.load_manifest(d.manifest))
    shown = "; ".join(f"{u.role} {u.name}: {u.entry.licence if u.entry else 'own model'}, may ship: {u.shippable}"
                      for u in used)
    found = licences.problems(d.settings, models.load_manifest(d.manifest))
    if found:
        return CheckResult("licences", "warn", "; ".join(found) + f" ({shown})",
                           "for a product: a microWakeWord model with commercial_use true (edge models list), "
                           "or your own wake word (README: 'Your own wake word', edge models add NAME.json)")
    return CheckResult("licences", "ok", shown)


CHECKS: dict[str, Callable[[Doctor], CheckResult]] = {
    "packages": check_packages,
    "image": check_image,
    "user": check_user,
    "audio": check_audio,
    "devices": check_devices,
    "permissions": check_permissions,
    "npu-driver": check_npu_driver,
    "runtimes": check_runtimes,
    "nofile": check_nofile,
    "thermal": check_thermal,
    "models": check_models,
    "licences": check_licences,
    "memory": check_memory,
    "disk": check_disk,
    "store": check_store,
    "unit": check_unit,
}


def report(results: list[CheckResult], as_json: bool, choice: BoardChoice | None = None) -> str:
    """The printed report. Text: the board line, one line per check and a summary line. JSON: one
    object ``{"board", "chosen_by", "generic", "board_configs", "checks": [{name, status, message, fix}],
    "counts": {ok, warn, fail}, "exit_status"}``."""
    counts = {s: sum(r.status == s for r in results) for s in STATUSES}
    if as_json:
        return json.dumps({"board": choice.name if choice else None, "chosen_by": choice.how if choice else None,
                           "generic": choice.generic if choice else None, "board_configs": board_names(),
                           "checks": [r.to_dict() for r in results], "counts": counts,
                           "exit_status": 1 if counts["fail"] else 0}, ensure_ascii=False, indent=1)
    head = [f"board {choice.name}: {choice.how}"] if choice else []
    return "\n".join(head + [r.line() for r in results]
                     + [f"{counts['ok']} ok, {counts['warn']} warn, {counts['fail']} failed"])


def refusal_json(e: Exception) -> str:
    """What ``edge doctor --json`` prints when it cannot run: ``{"refused": true, "error", "board_configs",
    "exit_status": 2}``."""
    return json.dumps({"refused": True, "error": str(e), "board_configs": board_names(), "exit_status": 2},
                      ensure_ascii=False, indent=1)


def choose_board(root: str, board: str | None, settings) -> BoardChoice:
    """The board to check: ``--board``, else the config's ``board:``, else :func:`edge.boards.detect_board`
    (the device tree under ``root``, else the generic config of this CPU architecture)."""
    if board:
        return BoardChoice(board, "named with --board", False)
    named = settings.board.name if settings.board else None
    if named and named != "unknown":
        return BoardChoice(named, "named by board: in the config", False)
    return detect_board(root)


def main(root: str = "/", board: str | None = None, user: str = DEFAULT_USER, as_json: bool = False,
         probe_audio: bool | None = None, only: list[str] | None = None, config: str | None = None,
         min_free_disk_mib: int = MIN_FREE_DISK_MIB) -> int:
    """Run the doctor and print the report; returns the exit status (1 when a check failed).

    With ``as_json`` a refusal is printed as JSON too (:func:`refusal_json`) and returns 2.

    Raises:
        ConfigError / BoardError: the config or the board's file does not validate, or this machine's
            architecture has no generic board config (without ``as_json``).
        DoctorError: an unknown check name in ``only`` (without ``as_json``).
    """
    try:
        settings = load_settings(config, board)
        choice = choose_board(root, board, settings)
        spec = load_board(choice.name)
        if settings.board is None or settings.board.name != choice.name:  # detected: merge its file
            settings = load_settings(config, choice.name)
        doc = Doctor(Path(root), spec, settings, user=user,
                     manifest=Path(os.environ["EDGE_MANIFEST"]) if os.environ.get("EDGE_MANIFEST") else None,
                     probe_audio=(str(root) == "/") if probe_audio is None else probe_audio,
                     min_free_disk_mib=min_free_disk_mib)
        results = doc.run(only)
    except UserError as e:
        if not as_json:
            raise
        print(refusal_json(e), flush=True)
        print(f"edge: doctor: {e}", file=sys.stderr, flush=True)
        return 2
    print(report(results, as_json, choice), flush=True)
    return 1 if any(r.status == "fail" for r in results) else 0
