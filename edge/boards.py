"""Board configs: the schema of the ``board:`` block of ``board-configs/NAME.yaml``.

A board file is a settings file (merged over ``edge/defaults.yaml`` by :func:`edge.config.load_settings`)
whose ``board:`` block describes the hardware: RAM, CPU clusters, thermal zones with their trip points,
the NPU (device node, its group, devfreq path, core mask, driver and runtime versions) or ``npu: none``,
audio cards, the models recommended for it, the power budget, and what the systemd unit gets
(``MemoryMax``). :class:`edge.config.BoardSettings` keeps that block loosely typed (other parts, e.g.
the resource governor's ``sensors:``, read their own keys); this module validates it strictly, with
:class:`BoardSpec`, wherever the hardware description is *used*: ``edge install``, ``edge doctor``,
``edge models bundle`` and ``tests/test_boards.py`` (which loads every file).

    load_board("rk3588-rock5b") -> BoardSpec          # raises BoardError naming the file and key
    board_names() -> ["rk3566-rock3c", ...]
    detect_board(root="/") -> BoardChoice       # the device tree's compatible, else generic-<arch>

Units: MiB, MHz, °C, W. Every number in the board files names its source in a YAML comment
(kernel device tree, vendor issue tracker, datasheet); estimates say so.
"""
from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from edge.config import BOARD_DIR, ConfigError, CpuCluster, board_path, load_settings

#: Share of RAM left free for the kernel, page cache and other services (the governor's 30 %
#: reserve); ``service.memory_max_mib`` may not exceed the rest.
MEMORY_RESERVE = 0.30
#: Open-file limit the unit sets (``LimitNOFILE``); ``edge doctor`` fails below it.
MIN_NOFILE = 65536


#: The board config a machine gets when its device tree names no board config: one per CPU
#: architecture (``platform.machine()``); each is CPU-only and assumes no thermal zone or sound card.
GENERIC_BOARDS = {"x86_64": "x86-dev", "amd64": "x86-dev", "aarch64": "generic-aarch64", "arm64": "generic-aarch64"}
#: Where the kernel shows the device tree's root ``compatible`` (NUL-separated strings, most specific first).
DT_COMPATIBLE_PATHS = ("/proc/device-tree/compatible", "/sys/firmware/devicetree/base/compatible")


class BoardError(ConfigError):
    """A board file that does not match :class:`BoardSpec`; the message names file, key and fix."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TripPoint(_Strict):
    """One trip point of a thermal zone, as in ``trip_point_N_temp`` / ``trip_point_N_type``."""

    temp_c: float = Field(ge=0, le=150, description="°C")
    type: Literal["active", "passive", "hot", "critical"]


class ThermalZone(_Strict):
    """A thermal zone, found by its sysfs ``type`` (``/sys/class/thermal/thermal_zone*/type``).

    ``name`` is the mainline-kernel name; ``aliases`` are names other kernels (vendor BSP) use for
    the same sensor. ``trips`` in ascending temperature.
    """

    name: str = Field(min_length=1)
    aliases: list[str] = []
    trips: list[TripPoint] = Field(min_length=1)

    @field_validator("trips")
    @classmethod
    def _ascending(cls, v: list[TripPoint]) -> list[TripPoint]:
        temps = [t.temp_c for t in v]
        if temps != sorted(temps):
            raise ValueError(f"trips must be in ascending temperature, got {temps} °C")
        return v

    @property
    def names(self) -> list[str]:
        return [self.name, *self.aliases]

    @property
    def critical_c(self) -> float | None:
        crit = [t.temp_c for t in self.trips if t.type == "critical"]
        return min(crit) if crit else None


class RuntimeLibrary(_Strict):
    """A vendor runtime library and the toolkit version the board's NPU models were converted with.

    ``edge doctor`` reads the version string out of the library's bytes (``librknnrt version: 2.3.2
    (...)``) and fails when its major.minor differs from ``model_version``.
    """

    name: Literal["librknnrt", "librkllmrt"]
    path: str = Field(description="absolute path on the board, e.g. /usr/lib/librknnrt.so")
    model_version: str = Field(pattern=r"^\d+\.\d+(\.\d+)?$",
                               description="rknn-toolkit2 / rkllm-toolkit version of the converted models")


class NpuSpec(_Strict):
    """The Rockchip NPU (rknpu driver)."""

    kind: Literal["rknpu"] = "rknpu"
    tops: float = Field(gt=0, description="INT8 TOPS, datasheet")
    cores: int = Field(ge=1, le=8)
    core_mask: int = Field(ge=1, description="rknn_core_mask / RKLLM base_domain mask: bit N = core N")
    device_node: str = Field(description="/dev node the runtime opens (DRM render node or /dev/rknpu)")
    alt_device_nodes: list[str] = Field([], description="other nodes the same NPU appears as, by kernel")
    device_group: str = Field(description="group owning the node; the unit's SupplementaryGroups")
    devfreq_path: str = Field(description="/sys/class/devfreq/<addr>.npu")
    driver_version_paths: list[str] = Field(min_length=1, description="files holding the rknpu driver version")
    min_driver_version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    rkllm_supported: bool = Field(description="RKLLM runs on this SoC (not on RK3566/RK3568)")
    runtimes: list[RuntimeLibrary] = []

    @model_validator(mode="after")
    def _mask_fits(self) -> "NpuSpec":
        if self.core_mask >= (1 << self.cores):
            raise ValueError(f"core_mask {self.core_mask:#x} names a core beyond the {self.cores} cores")
        if not self.rkllm_supported and any(r.name == "librkllmrt" for r in self.runtimes):
            raise ValueError("librkllmrt listed but rkllm_supported is false (RKLLM does not run on this SoC)")
        return self


class AudioSpec(_Strict):
    """ALSA cards expected on the board (``/proc/asound/cards`` names, substring match)."""

    capture_cards: list[str] = []
    playback_cards: list[str] = []
    note: str = ""


class ModelsSpec(_Strict):
    """Manifest ids (``models/manifest.yaml``) the board runs; bundles and the doctor use these."""

    recommended: list[str] = Field(min_length=1)


class ServiceSpec(_Strict):
    """What ``edge install`` writes into the unit's drop-in."""

    memory_max_mib: int = Field(ge=256, description="MiB, the unit's MemoryMax")
    nofile: int = Field(MIN_NOFILE, ge=MIN_NOFILE, description="LimitNOFILE")


class ImageSpec(_Strict):
    """The OS image a board config was checked against, and what ``edge install`` needs from it:
    the Python the wheels are resolved for, the least glibc they may need (``manylinux_2_X`` tags),
    ``os`` as ``ID-VERSION_ID`` of ``/etc/os-release``. The kernel's NPU driver is
    ``npu.min_driver_version``, the groups :attr:`BoardSpec.supplementary_groups`; ``edge doctor``
    checks all four (checks ``image``, ``npu-driver``, ``user``)."""

    os: str = Field(pattern=r"^[a-z]+-[\d.]+$", description="ID-VERSION_ID of /etc/os-release, e.g. debian-12")
    name: str = Field(min_length=1, description="the image as its vendor names it")
    checked: str = Field(min_length=1, description="how this image was checked (emulated, on a board, not yet)")
    python: str = Field(pattern=r"^3\.\d+$", description="the image's python3 (major.minor)")
    glibc: str = Field(pattern=r"^2\.\d+$", description="the image's glibc: wheels may need at most this")


class BoardSpec(_Strict):
    """The ``board:`` block of a board config."""

    name: str
    soc: str
    description: str = ""
    compatible: list[str] = Field([], description="device-tree root compatible strings naming this board "
                                  "(/proc/device-tree/compatible); edge doctor picks the board by them")
    ram_mib: int = Field(ge=256, description="MiB of the board variant this file is for")
    cpu_clusters: list[CpuCluster] = Field(min_length=1, description="edge.config.CpuCluster: name, cores, kind")
    thermal_zones: list[ThermalZone] = []
    npu: NpuSpec | None = None
    audio: AudioSpec = AudioSpec()
    models: ModelsSpec
    power_budget_w: float = Field(gt=0, le=500, description="W, sustained budget for the whole board")
    service: ServiceSpec
    image: ImageSpec | None = None
    #: the resource governor's own block (validated by its code); kept as is
    sensors: dict[str, Any] | None = None

    @field_validator("npu", mode="before")
    @classmethod
    def _none_word(cls, v: Any) -> Any:
        return None if v in ("none", "None", "") else v

    @model_validator(mode="after")
    def _memory_reserve(self) -> "BoardSpec":
        cap = int(self.ram_mib * (1 - MEMORY_RESERVE))
        if self.service.memory_max_mib > cap:
            raise ValueError(f"service.memory_max_mib {self.service.memory_max_mib} MiB exceeds "
                             f"{int((1 - MEMORY_RESERVE) * 100)} % of ram_mib {self.ram_mib} MiB ({cap} MiB): "
                             f"the {int(MEMORY_RESERVE * 100)} % reserve")
        cores = [c for cl in self.cpu_clusters for c in cl.cores]
        if len(cores) != len(set(cores)):
            raise ValueError(f"a CPU core is listed in two clusters: {cores}")
        return self

    @property
    def cpu_only(self) -> bool:
        return self.npu is None

    @property
    def supplementary_groups(self) -> list[str]:
        """Groups the service user needs: ``audio`` and the NPU node's group."""
        return ["audio"] + ([self.npu.device_group] if self.npu else [])


def board_names() -> list[str]:
    """Every ``board-configs/*.yaml`` name, sorted."""
    return sorted(p.stem for p in BOARD_DIR.glob("*.yaml"))


def _describe(e: ValidationError, path: Path) -> str:
    lines = [f"{path}: the board: block does not match the board schema (edge/boards.py):"]
    for err in e.errors():
        key = "board." + ".".join(str(p) for p in err["loc"]) if err["loc"] else "board"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key; remove it or check its spelling (see edge/boards.py BoardSpec)"
        elif err["type"] == "missing":
            msg = "missing; add it (see edge/boards.py BoardSpec for its meaning and unit)"
        lines.append(f"  {key}: {msg}")
    return "\n".join(lines)


def parse_board(data: dict, path: Path) -> BoardSpec:
    """Validate a ``board:`` mapping read from ``path``. Raises :class:`BoardError`."""
    if not isinstance(data, dict):
        raise BoardError(f"{path}: board: must be a mapping, got {type(data).__name__}")
    try:
        return BoardSpec.model_validate(data)
    except ValidationError as e:
        raise BoardError(_describe(e, path)) from None


def load_board(name: str) -> BoardSpec:
    """``board-configs/NAME.yaml`` → its validated :class:`BoardSpec`.

    The whole file is also validated as settings (``load_settings(board=name)``), and the file's
    ``llm.model`` must be among ``board.models.recommended``.

    Raises:
        BoardError / ConfigError: unknown board (the message lists the known ones), bad YAML, a key
            outside the schema, a value out of range; the message names the file and key.
    """
    path = board_path(name)
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if "board" not in raw:
        raise BoardError(f"{path}: no board: block; every board config describes its hardware there")
    spec = parse_board(raw["board"], path)
    if spec.name != name:
        raise BoardError(f"{path}: board.name is {spec.name!r} but the file is {name}.yaml; make them equal")
    settings = load_settings(board=name)
    if settings.llm.engine != "none" and settings.llm.model not in spec.models.recommended:
        raise BoardError(f"{path}: llm.model {settings.llm.model!r} is not in board.models.recommended "
                         f"{spec.models.recommended}; add it there")
    return spec


@dataclass(frozen=True)
class BoardChoice:
    """Which board config a machine is checked as, and why (one line for the report)."""

    name: str
    how: str
    generic: bool


def read_compatible(root: str | Path = "/") -> list[str]:
    """The device tree's root ``compatible`` strings under ``root`` (empty without a device tree)."""
    for p in DT_COMPATIBLE_PATHS:
        try:
            raw = (Path(root) / p.lstrip("/")).read_bytes()
        except OSError:
            continue
        return [x.decode("ascii", "replace").strip() for x in raw.split(b"\0") if x.strip()]
    return []


def _compatible(name: str) -> list[str]:
    """``board.compatible`` of the board config ``name``, read without the schema (detection only).
    Raises BoardError naming the file when it is not readable YAML."""
    path = board_path(name)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise BoardError(f"{path}: not a readable board config ({str(e).splitlines()[0]}); fix the file or "
                         f"move it out of the board-configs folder") from None
    board = raw.get("board") if isinstance(raw, dict) else None
    strings = board.get("compatible") if isinstance(board, dict) else None
    return [str(c) for c in strings] if isinstance(strings, list) else []


#: ELF ``e_machine`` values (System V ABI, elf.h ``EM_*``) of the architectures with a generic config
_ELF_MACHINES = {0x3E: "x86_64", 0xB7: "aarch64"}


def elf_machine(path: Path) -> str | None:
    """The architecture of the ELF executable ``path`` (``x86_64``, ``aarch64``; ``e_machine`` at byte
    18, little endian), or None when it is unreadable, not ELF or another one: a root file system
    given to the doctor is checked as a machine of its own architecture, not this one's."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(20)
    except OSError:
        return None
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    return _ELF_MACHINES.get(int.from_bytes(head[18:20], "little"))


def detect_board(root: str | Path = "/", machine: str | None = None) -> BoardChoice:
    """The board config for this machine: the one whose ``board.compatible`` holds the most specific
    of the device tree's root compatible strings (read under ``root``; the tree lists them most
    specific first, e.g. ``radxa,rock-5b`` before ``rockchip,rk3588``), else the generic config of the
    CPU architecture (:data:`GENERIC_BOARDS`; ``machine`` defaults to the architecture of ``root``'s
    ``/bin/sh``, or this machine's for ``/`` and for a tree without one, e.g. a copy of /sys and /proc).

    Raises:
        BoardError: a board config is not YAML (named, with the fix), or neither the device tree nor
            the architecture names a board config (the message lists the known ones and says to pass
            ``--board``).
    """
    compat = read_compatible(root)
    if compat:
        wanted = {name: _compatible(name) for name in board_names()}
        for c in compat:
            name = next((n for n, strings in wanted.items() if c in strings), None)
            if name is not None:
                return BoardChoice(name, f"device tree compatible {c!r} names board {name}", False)
    if machine is None:
        machine = platform.machine() if Path(root).resolve() == Path("/") else elf_machine(Path(root) / "bin/sh")
    arch = machine or platform.machine()
    seen = f"device tree compatible {', '.join(compat[:3])}" if compat else "no device tree"
    generic = GENERIC_BOARDS.get(arch)
    if generic is None:
        raise BoardError(f"this machine ({arch}, {seen}) matches no board config and {arch} has no generic one; "
                         f"pass --board NAME (one of {', '.join(board_names())})")
    return BoardChoice(generic, f"this machine ({seen}) matches no board config: checked as a generic {arch} "
                       f"machine ({generic}); board configs: {', '.join(board_names())}", True)
