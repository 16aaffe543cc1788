"""What the operating system says about the box: accounts, device nodes and who may open them,
Debian packages, resource limits, free disk, vendor library versions, the NPU driver version, ALSA cards.

Every function takes a ``root`` folder and reads paths *under* it (``root / "etc/group"``), so
``edge doctor`` and the tests can look at a fake tree (a folder with ``etc/``, ``dev/``, ``proc/``,
``sys/``, ``var/lib/dpkg/``) exactly as at a real one (``root=/``). Nothing here decides whether a
finding is good or bad (that is ``edge.ops.doctor``); nothing raises for a missing or garbled file:
the result says "unknown" (``None``) instead.

Formats read, with their sources:

- ``etc/passwd``, ``etc/group``: passwd(5), group(5) (``name:x:gid:member,member``).
- ``var/lib/dpkg/status``: deb-control(5) paragraphs; installed = ``Status: install ok installed``.
- ``proc/self/limits``: proc(5) table, row ``Max open files  <soft>  <hard>  files``.
- ``proc/asound/cards``: ALSA, `` 0 [PCH            ]: HDA-Intel - HDA Intel PCH`` lines.
- ``dev/snd``: ALSA nodes ``controlC<card>``, ``pcmC<card>D<dev>c`` (capture) / ``p`` (playback),
  major 116 (Documentation/admin-guide/devices.txt).
- rknpu driver version: ``/sys/module/rknpu/version`` (``0.9.6``, airockchip/rknn-llm#39) or debugfs
  ``/sys/kernel/debug/rknpu/version`` (``RKNPU driver: v0.9.8``).
- vendor runtime version strings inside the ``.so`` bytes: ``librknnrt version: 2.3.2 (429f97ae6b@...)``
  (airockchip/rknn-toolkit2#405, and ``strings librknnmrt.so`` output quoted in SOLEROM/rocki);
  for librkllmrt the log line ``rkllm-runtime version: 1.1.2`` (airockchip/rknn-llm#129) — whether that
  text is stored whole in the library or assembled from a format string is not documented, so
  :func:`library_version` also accepts ``librkllmrt version:`` and ``RKLLM Runtime Version:``.
"""
from __future__ import annotations

import os
import re
import stat as _stat
from dataclasses import dataclass, field
from pathlib import Path

ALSA_MAJOR = 116  # Documentation/admin-guide/devices.txt: 116 char = Advanced Linux Sound Driver
_CHUNK = 1 << 20  # bytes read at a time when scanning a library for its version string
_OVERLAP = 256    # bytes kept between chunks so a version string split across two reads is still found

#: version-string patterns per vendor library (see the module docstring for where each comes from)
LIB_VERSION_PATTERNS: dict[str, tuple[bytes, ...]] = {
    "librknnrt": (rb"librknnrt version:\s*v?(\d+\.\d+\.\d+)", rb"librknnmrt version:\s*v?(\d+\.\d+\.\d+)"),
    "librkllmrt": (rb"rkllm-runtime version:\s*v?(\d+\.\d+\.\d+)", rb"librkllmrt version:\s*v?(\d+\.\d+\.\d+)",
                   rb"RKLLM Runtime Version:\s*v?(\d+\.\d+\.\d+)"),
}
_DRIVER_VERSION_RE = re.compile(r"v?(\d+\.\d+\.\d+)")


def under(root: str | os.PathLike, path: str | os.PathLike) -> Path:
    """``path`` (absolute, as on the board) inside ``root``."""
    return Path(root) / str(path).lstrip("/")


# ------------------------------------------------------------------------------------------------
# accounts

@dataclass(frozen=True)
class Group:
    name: str
    gid: int
    members: tuple[str, ...]


@dataclass(frozen=True)
class Account:
    """A user: ``uid``, primary ``gid``, ``home``, and every group it is in (primary + supplementary)."""

    name: str
    uid: int
    gid: int
    home: str
    groups: dict[str, int] = field(default_factory=dict)  # group name -> gid

    @property
    def gids(self) -> set[int]:
        return {self.gid, *self.groups.values()}


def _colon_rows(path: Path) -> list[list[str]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line.split(":") for line in text.splitlines() if line and not line.startswith("#")]


def read_groups(root: str | os.PathLike) -> dict[str, Group]:
    """``etc/group`` → ``{name: Group}``; empty when missing."""
    out = {}
    for row in _colon_rows(under(root, "/etc/group")):
        if len(row) >= 4 and row[2].isdigit():
            out[row[0]] = Group(row[0], int(row[2]), tuple(m for m in row[3].split(",") if m))
    return out


def read_account(root: str | os.PathLike, user: str) -> Account | None:
    """The account ``user`` from ``etc/passwd`` with its groups from ``etc/group``; None if absent."""
    for row in _colon_rows(under(root, "/etc/passwd")):
        if len(row) >= 7 and row[0] == user and row[2].isdigit() and row[3].isdigit():
            uid, gid = int(row[2]), int(row[3])
            groups = {g.name: g.gid for g in read_groups(root).values() if user in g.members or g.gid == gid}
            return Account(user, uid, gid, row[5], groups)
    return None


# ------------------------------------------------------------------------------------------------
# device nodes

@dataclass(frozen=True)
class NodeAccess:
    """What ``account`` may do with the node at ``path`` (as on the board).

    ``exists``/``is_char``; ``mode`` (permission bits), ``owner_uid``, ``group`` (name, or the gid as
    text when unknown), and ``read``/``write`` evaluated from the owner/group/other bits for the
    account's uid and gids (POSIX ACLs are not looked at). ``None`` when the node is missing.
    """

    path: str
    exists: bool
    is_char: bool = False
    mode: int = 0
    owner_uid: int = -1
    group: str = ""
    read: bool | None = None
    write: bool | None = None


def node_access(root: str | os.PathLike, path: str, account: Account | None) -> NodeAccess:
    """Stat ``path`` under ``root`` and work out the account's read/write permission.

    ``account`` None (no such user) leaves ``read``/``write`` None. uid 0 may do anything.
    """
    p = under(root, path)
    try:
        st = p.stat()
    except OSError:
        return NodeAccess(path, False)
    groups = {g.gid: g.name for g in read_groups(root).values()}
    gname = groups.get(st.st_gid, str(st.st_gid))
    mode = _stat.S_IMODE(st.st_mode)
    is_char = _stat.S_ISCHR(st.st_mode)
    if account is None:
        return NodeAccess(path, True, is_char, mode, st.st_uid, gname)
    if account.uid == 0:
        r = w = True
    elif st.st_uid == account.uid:
        r, w = bool(mode & 0o400), bool(mode & 0o200)
    elif st.st_gid in account.gids:
        r, w = bool(mode & 0o040), bool(mode & 0o020)
    else:
        r, w = bool(mode & 0o004), bool(mode & 0o002)
    return NodeAccess(path, True, is_char, mode, st.st_uid, gname, r, w)


def sound_nodes(root: str | os.PathLike) -> list[str]:
    """Names in ``dev/snd`` (``controlC0``, ``pcmC0D0c``, ...), sorted; empty when the folder is missing."""
    try:
        return sorted(p.name for p in under(root, "/dev/snd").iterdir())
    except OSError:
        return []


def capture_nodes(names: list[str]) -> list[str]:
    """The capture PCM nodes (``pcmC<card>D<dev>c``) among ``dev/snd`` names."""
    return [n for n in names if re.fullmatch(r"pcmC\d+D\d+c", n)]


@dataclass(frozen=True)
class SoundCard:
    index: int
    id: str
    name: str


def asound_cards(root: str | os.PathLike) -> list[SoundCard] | None:
    """``proc/asound/cards`` → the cards; None when the file is missing (no ALSA in this kernel)."""
    try:
        text = under(root, "/proc/asound/cards").read_text(errors="replace")
    except OSError:
        return None
    cards = []
    for m in re.finditer(r"^\s*(\d+)\s+\[([^\]]*)\]:\s*(.*)$", text, re.M):
        cards.append(SoundCard(int(m.group(1)), m.group(2).strip(), m.group(3).strip()))
    return cards


# ------------------------------------------------------------------------------------------------
# packages, limits, disk

def dpkg_installed(root: str | os.PathLike, names: list[str]) -> dict[str, str | None] | None:
    """``{package: version or None}`` from ``var/lib/dpkg/status``; None when there is no dpkg database
    (not a Debian system). A package counts as installed only with ``Status: install ok installed``."""
    try:
        text = under(root, "/var/lib/dpkg/status").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    want = set(names)
    found: dict[str, str | None] = {n: None for n in names}
    for para in text.split("\n\n"):
        fields = {}
        for line in para.splitlines():
            if line[:1] in (" ", "\t"):
                continue
            k, sep, v = line.partition(":")
            if sep:
                fields[k.strip()] = v.strip()
        name = fields.get("Package")
        if name in want and fields.get("Status", "").endswith("ok installed"):
            found[name] = fields.get("Version", "")
    return found


def open_files_limit(root: str | os.PathLike) -> tuple[int | None, int | None]:
    """``(soft, hard)`` "Max open files" from ``proc/self/limits`` (``unlimited`` → a very large int);
    ``(None, None)`` when unreadable."""
    try:
        text = under(root, "/proc/self/limits").read_text(errors="replace")
    except OSError:
        return None, None
    m = re.search(r"^Max open files\s+(\S+)\s+(\S+)", text, re.M)
    if not m:
        return None, None

    def num(s: str) -> int:
        return 1 << 62 if s == "unlimited" else int(s)

    try:
        return num(m.group(1)), num(m.group(2))
    except ValueError:
        return None, None


def disk_free(root: str | os.PathLike, path: str) -> tuple[int, str]:
    """``(free bytes for an unprivileged user, the folder measured)``: ``statvfs`` of ``path`` under
    ``root``, or of its nearest existing parent when it does not exist yet."""
    p = under(root, path)
    while not p.exists() and p != p.parent:
        p = p.parent
    st = os.statvfs(p)
    return st.f_bavail * st.f_frsize, str(p)


# ------------------------------------------------------------------------------------------------
# NPU driver and runtime libraries

def npu_driver_version(root: str | os.PathLike, paths: list[str]) -> tuple[str | None, str | None]:
    """The rknpu driver version (``"0.9.8"``) from the first readable file of ``paths`` (as on the
    board) and that path; ``(None, None)`` when none is readable or none holds a version."""
    for path in paths:
        try:
            text = under(root, path).read_text(errors="replace")
        except OSError:
            continue
        m = _DRIVER_VERSION_RE.search(text)
        if m:
            return m.group(1), path
    return None, None


def library_version(path: str | os.PathLike, name: str) -> str | None:
    """The version string stored in a vendor library's bytes (``"2.3.2"``); None if not found.

    ``name``: ``librknnrt`` or ``librkllmrt`` (:data:`LIB_VERSION_PATTERNS`). The file is read in
    1 MiB chunks. Raises ``OSError`` when the file cannot be read, ``KeyError`` for an unknown name.
    """
    patterns = [re.compile(p) for p in LIB_VERSION_PATTERNS[name]]
    tail = b""
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(_CHUNK)
            if not chunk:
                return None
            buf = tail + chunk
            for pat in patterns:
                m = pat.search(buf)
                if m:
                    return m.group(1).decode()
            tail = buf[-_OVERLAP:]


def version_tuple(v: str) -> tuple[int, ...]:
    """``"0.9.8"`` → ``(0, 9, 8)``; non-numeric parts are dropped."""
    return tuple(int(x) for x in re.findall(r"\d+", v))


#: Where the C library lives on Debian/Ubuntu (multiarch) and elsewhere; its bytes carry the release.
LIBC_PATHS = ("/lib/aarch64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/aarch64-linux-gnu/libc.so.6",
              "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6", "/usr/lib64/libc.so.6", "/lib/libc.so.6")
_GLIBC_RE = re.compile(rb"GNU C Library [^\n]*?release version (\d+\.\d+)")


def glibc_version(root: str | os.PathLike) -> tuple[str | None, str | None]:
    """``("2.36", "/lib/aarch64-linux-gnu/libc.so.6")``: the glibc release read from the first
    ``libc.so.6`` of :data:`LIBC_PATHS` under ``root`` (its banner "GNU C Library ... release version
    2.36"); ``(None, None)`` when none is found or none carries the banner."""
    for p in LIBC_PATHS:
        f = under(root, p)
        try:
            data = f.read_bytes()
        except OSError:
            continue
        m = _GLIBC_RE.search(data)
        if m:
            return m.group(1).decode(), p
    return None, None


def os_release(root: str | os.PathLike) -> dict[str, str]:
    """``/etc/os-release`` (else ``/usr/lib/os-release``) under ``root`` as a dict (quotes removed);
    empty when neither exists."""
    for p in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            text = under(root, p).read_text(errors="replace")
        except OSError:
            continue
        out = {}
        for line in text.splitlines():
            k, sep, v = line.partition("=")
            if sep and k.strip() and not k.startswith("#"):
                out[k.strip()] = v.strip().strip('"').strip("'")
        return out
    return {}
