"""``edge install --board NAME [--root DIR]`` and ``edge uninstall [--purge] [--root DIR]``.

Install, in order (each step reports ``created``, ``changed`` or ``unchanged``, so a second run says it
changed nothing):

1. ``users``   ``/etc/sysusers.d/edge.conf`` (``systemd/edge.sysusers.conf`` + the board's NPU group) applied
               with ``systemd-sysusers [--root DIR]``: the system user ``edge``, group ``edge``, membership
               in ``audio`` and the NPU node's group (``render`` on RK3588/RK3576; none on CPU-only boards).
               Without systemd-sysusers: ``groupadd``/``useradd``/``usermod`` with ``--root DIR``.
2. ``data``    ``/etc/tmpfiles.d/edge.conf`` applied with ``systemd-tmpfiles --create [--root DIR]``:
               ``/var/lib/edge`` (and ``models/``, ``replies/``) owned by ``edge``, mode 0750.
3. ``config``  ``/etc/edge/edge.yaml``: ``board: NAME`` plus the store, replies and models folders under
               ``/var/lib/edge``. An existing file that differs is kept (it may hold the site's edits)
               unless ``force``.
4. ``unit``    ``/etc/systemd/system/edge.service`` from ``systemd/edge.service`` with ``ExecStart`` pointing
               at this installation's ``edge`` executable.
5. ``dropin``  ``/etc/systemd/system/edge.service.d/10-board.conf``: ``MemoryMax`` (board
               ``service.memory_max_mib``), ``LimitNOFILE``, the NPU group and ``DeviceAllow`` for its node.
6. ``enable``  ``systemctl [--root=DIR] enable edge.service`` (the ``multi-user.target.wants`` symlink);
               on the live system also ``systemctl daemon-reload``.
7. ``site``    only when the installed config has a ``site:`` section (the box joins a site):
               ``/etc/systemd/system/edge-site.service`` from ``systemd/edge-site.service`` (``ExecStart``
               as for the unit), enabled the same way; the output names the credential file the unit
               loads the database password from when it is not there yet. A later install whose
               config has no ``site:`` any more disables and removes it.

With ``--root DIR`` every step writes into DIR (a staging root or a mounted image) through the same
systemd tools with their ``--root`` option; nothing outside DIR changes. On the live system (``/``) the
tools act on the machine (run as root).

Uninstall disables and removes the units (``edge-site.service`` too), the drop-ins, ``/etc/edge``, the sysusers/tmpfiles snippets,
and keeps ``/var/lib/edge`` (the store, models) unless ``purge``. The ``edge`` user is kept (files may
still be owned by it); ``userdel edge`` removes it.
"""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from edge.boards import BoardSpec, load_board
from edge.config import ConfigError, load_settings
from edge.errors import UserError
from edge.paths import data_dir

REPO_SYSTEMD = data_dir("systemd")
UNIT_NAME = "edge.service"
UNIT_DIR = "/etc/systemd/system"
DROPIN = f"{UNIT_DIR}/{UNIT_NAME}.d/10-board.conf"
SYSUSERS = "/etc/sysusers.d/edge.conf"
TMPFILES = "/etc/tmpfiles.d/edge.conf"
CONFIG = "/etc/edge/edge.yaml"
DATA_DIR = "/var/lib/edge"
WANTS = f"{UNIT_DIR}/multi-user.target.wants/{UNIT_NAME}"
SITE_UNIT = "edge-site.service"
SITE_WANTS = f"{UNIT_DIR}/multi-user.target.wants/{SITE_UNIT}"
SITE_CREDENTIAL = "/etc/edge/credentials/site-db-password"  # LoadCredential= of systemd/edge-site.service
DEFAULT_EXEC = "/opt/edge/.venv/bin/edge"  # the ExecStart path written in systemd/edge.service


class InstallError(UserError):
    """A step failed; the message names the step, the command or file, and the fix."""


@dataclass(frozen=True)
class Step:
    """One step's outcome: ``name``, ``result`` (created | changed | unchanged | removed | kept |
    absent) and ``detail``."""

    name: str
    result: str
    detail: str

    def line(self) -> str:
        return f"{self.name:<8} {self.result:<10} {self.detail}"


def _p(root: Path, path: str) -> Path:
    return root / path.lstrip("/")


def _live(root: Path) -> bool:
    return root.resolve() == Path("/")


def _run(cmd: list[str], step: str) -> subprocess.CompletedProcess:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except FileNotFoundError as e:
        raise InstallError(f"{step}: {cmd[0]} not found ({e}); install the Debian package 'systemd'") from None
    if r.returncode != 0:
        raise InstallError(f"{step}: `{' '.join(cmd)}` failed with {r.returncode}: {(r.stderr or r.stdout).strip()}")
    return r


def _write(path: Path, text: str, mode: int = 0o644, force: bool = True) -> str:
    """Write ``text`` if it differs; → created | changed | unchanged | kept (differs, not forced)."""
    if path.exists():
        if path.read_text(encoding="utf-8") == text:
            return "unchanged"
        if not force:
            return "kept"
        result = "changed"
    else:
        result = "created"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    return result


def edge_executable() -> str:
    """The ``edge`` console script of this installation (the venv's ``bin/edge``)."""
    cand = Path(sys.executable).parent / "edge"
    if cand.exists():
        return str(cand)
    found = shutil.which("edge")
    if found:
        return found
    raise InstallError("cannot find the 'edge' executable next to this Python; run scripts/setup.sh first "
                       "or pass --exec PATH")


# ------------------------------------------------------------------------------------------------
# rendering

def sysusers_text(board: BoardSpec) -> str:
    base = (REPO_SYSTEMD / "edge.sysusers.conf").read_text(encoding="utf-8")
    extra = [f"# board {board.name}: the NPU node {board.npu.device_node} belongs to group {board.npu.device_group}",
             f"g {board.npu.device_group} - -", f"m edge {board.npu.device_group}"] if board.npu else []
    return base.rstrip("\n") + "\n" + "".join(line + "\n" for line in extra)


def unit_text(exec_path: str, name: str = UNIT_NAME) -> str:
    """``systemd/<name>`` (``edge.service`` or ``edge-site.service``) with ``ExecStart`` pointing at ``exec_path``."""
    text = (REPO_SYSTEMD / name).read_text(encoding="utf-8")
    if f"ExecStart={DEFAULT_EXEC}" not in text:
        raise InstallError(f"{REPO_SYSTEMD / name}: no ExecStart={DEFAULT_EXEC} to rewrite")
    return text.replace(f"ExecStart={DEFAULT_EXEC}", f"ExecStart={exec_path}", 1)


def dropin_text(board: BoardSpec) -> str:
    """The board drop-in: MemoryMax (MiB), LimitNOFILE, NPU group and node."""
    lines = [f"# written by `edge install --board {board.name}` from board-configs/{board.name}.yaml",
             "[Service]",
             f"# board.service.memory_max_mib: 70 % of the board's {board.ram_mib} MiB at most (30 % reserve)",
             f"MemoryMax={board.service.memory_max_mib}M",
             f"LimitNOFILE={board.service.nofile}",
             f"Environment=EDGE_BOARD={board.name}"]
    if board.npu:
        lines += [f"# NPU: {board.npu.device_node} (group {board.npu.device_group}), rknpu driver",
                  f"SupplementaryGroups={board.npu.device_group}",
                  f"DeviceAllow={board.npu.device_node} rw"]
    else:
        lines.append(f"# {board.name} is CPU-only: no NPU node, no NPU group")
    return "\n".join(lines) + "\n"


def config_text(board: BoardSpec) -> str:
    return (f"# {CONFIG}, written by `edge install --board {board.name}`. The board's settings\n"
            f"# (board-configs/{board.name}.yaml) are merged under this file; set any key here to override.\n"
            f"board: {board.name}\n"
            f"store:\n  path: {DATA_DIR}/edge.db\n"
            f"output_dir: {DATA_DIR}/replies\n"
            f"models:\n  dir: {DATA_DIR}/models\n")


# ------------------------------------------------------------------------------------------------
# steps

def _accounts_snapshot(root: Path) -> tuple[str, str]:
    def read(rel):
        p = _p(root, rel)
        return p.read_text(errors="replace") if p.exists() else ""

    return read("/etc/passwd"), read("/etc/group")


def _step_users(root: Path, board: BoardSpec) -> Step:
    conf = _p(root, SYSUSERS)
    wrote = _write(conf, sysusers_text(board))
    before = _accounts_snapshot(root)
    if shutil.which("systemd-sysusers"):
        cmd = ["systemd-sysusers"] + ([] if _live(root) else [f"--root={root}"]) + [str(conf)]
        _run(cmd, "users")
        how = "systemd-sysusers"
    else:  # shadow utils; --root makes them chroot into DIR
        r = [] if _live(root) else ["--root", str(root)]
        groups = ["audio"] + ([board.npu.device_group] if board.npu else [])
        for g in ["edge", *groups]:
            subprocess.run(["groupadd", *r, "--system", "-f", g], capture_output=True)
        subprocess.run(["useradd", *r, "--system", "--gid", "edge", "--home-dir", DATA_DIR, "--no-create-home",
                        "--shell", "/usr/sbin/nologin", "edge"], capture_output=True)
        _run(["usermod", *r, "-aG", ",".join(groups), "edge"], "users")
        how = "useradd/usermod"
    after = _accounts_snapshot(root)
    groups = ", ".join(board.supplementary_groups)
    if after != before:
        return Step("users", "created" if "edge:" not in before[0] else "changed", f"user edge in {groups} ({how})")
    return Step("users", "unchanged" if wrote == "unchanged" else wrote, f"user edge in {groups}")


def _step_data(root: Path) -> Step:
    conf = _p(root, TMPFILES)
    wrote = _write(conf, (REPO_SYSTEMD / "edge.tmpfiles.conf").read_text(encoding="utf-8"))
    existed = _p(root, DATA_DIR).is_dir()
    if shutil.which("systemd-tmpfiles"):
        _run(["systemd-tmpfiles", "--create"] + ([] if _live(root) else [f"--root={root}"]) + [str(conf)], "data")
    else:
        for sub in ("", "/models", "/replies"):
            d = _p(root, DATA_DIR + sub)
            d.mkdir(parents=True, exist_ok=True)
            os.chmod(d, 0o750)
            if _live(root):
                pw = pwd.getpwnam("edge")
                os.chown(d, pw.pw_uid, pw.pw_gid)
    result = "unchanged" if existed and wrote == "unchanged" else ("created" if not existed else "changed")
    return Step("data", result, f"{DATA_DIR} (owner edge, 0750)")


def _step_config(root: Path, board: BoardSpec, force: bool) -> Step:
    p = _p(root, CONFIG)
    result = _write(p, config_text(board), 0o644, force=force)
    detail = CONFIG + (" (differs from the board default: kept; --force rewrites it)" if result == "kept" else "")
    return Step("config", result, detail)


def _step_unit(root: Path, exec_path: str) -> Step:
    return Step("unit", _write(_p(root, f"{UNIT_DIR}/{UNIT_NAME}"), unit_text(exec_path)),
                f"{UNIT_DIR}/{UNIT_NAME} (ExecStart={exec_path})")


def _step_dropin(root: Path, board: BoardSpec) -> Step:
    return Step("dropin", _write(_p(root, DROPIN), dropin_text(board)),
                f"{DROPIN} (MemoryMax={board.service.memory_max_mib}M"
                + (f", group {board.npu.device_group}, {board.npu.device_node})" if board.npu else ")"))


def _enable(root: Path, name: str, step: str) -> str:
    """Enable unit ``name`` (WantedBy=multi-user.target) → created | unchanged."""
    link = _p(root, f"{UNIT_DIR}/multi-user.target.wants/{name}")
    if link.is_symlink() and os.readlink(link) == f"{UNIT_DIR}/{name}":
        return "unchanged"
    if shutil.which("systemctl"):
        _run(["systemctl"] + ([] if _live(root) else [f"--root={root}"]) + ["enable", name], step)
    else:  # what `systemctl enable` does for WantedBy=multi-user.target
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(f"{UNIT_DIR}/{name}")
    return "created"


def _disable(root: Path, name: str, step: str) -> bool:
    """Disable and remove the link of unit ``name``; False when it was not enabled."""
    link = _p(root, f"{UNIT_DIR}/multi-user.target.wants/{name}")
    if not (link.is_symlink() or link.exists()):
        return False
    if shutil.which("systemctl") and _p(root, f"{UNIT_DIR}/{name}").exists():
        _run(["systemctl"] + ([] if _live(root) else [f"--root={root}"]) + ["disable", name], step)
    if link.is_symlink() or link.exists():
        link.unlink()
    return True


def _step_enable(root: Path) -> Step:
    return Step("enable", _enable(root, UNIT_NAME, "enable"), f"{WANTS} -> {UNIT_DIR}/{UNIT_NAME}")


def site_of(root: Path):
    """The ``site:`` section of the installed config (``/etc/edge/edge.yaml`` under ``root``), or None.

    Raises:
        InstallError: the installed config does not validate (its message names the key).
    """
    try:
        return load_settings(_p(root, CONFIG)).site
    except ConfigError as e:
        raise InstallError(f"site: {e}") from None


def _step_site(root: Path, exec_path: str) -> Step | None:
    """The site sync unit when the config has ``site:``; its removal when it has none any more;
    None when there is neither."""
    unit = _p(root, f"{UNIT_DIR}/{SITE_UNIT}")
    site = site_of(root)
    if site is None:
        if not (unit.exists() or _p(root, SITE_WANTS).is_symlink()):
            return None
        _disable(root, SITE_UNIT, "site")
        unit.unlink(missing_ok=True)
        return Step("site", "removed", f"{UNIT_DIR}/{SITE_UNIT} (no site: section in {CONFIG} any more)")
    wrote = _write(unit, unit_text(exec_path, SITE_UNIT))
    enabled = _enable(root, SITE_UNIT, "site")
    result = wrote if wrote != "unchanged" else ("changed" if enabled == "created" else "unchanged")
    detail = f"{UNIT_DIR}/{SITE_UNIT}, enabled ({CONFIG} has site: box {site.box} of site {site.name})"
    if not _p(root, SITE_CREDENTIAL).exists():
        detail += (f"; put the site database password in {SITE_CREDENTIAL} (root-owned, mode 600) "
                   f"before it starts")
    return Step("site", result, detail)


def _daemon_reload(root: Path) -> None:
    if _live(root) and Path("/run/systemd/system").exists() and shutil.which("systemctl"):
        _run(["systemctl", "daemon-reload"], "reload")


def install(board: str, root: str | os.PathLike = "/", exec_path: str | None = None, force: bool = False) -> list[Step]:
    """Install edge as a service for ``board`` into ``root``; returns the steps' outcomes.

    Raises:
        InstallError: a tool failed (the message holds its output), the edge executable is missing,
            or a file under ``root`` cannot be written (the message names it and the fix).
        BoardError / ConfigError: the board config does not validate.
    """
    spec = load_board(board)
    root = Path(root)
    if not root.is_dir():
        raise InstallError(f"--root {root}: not a folder; create it first")
    exe = exec_path or edge_executable()
    try:
        steps = [_step_users(root, spec), _step_data(root), _step_config(root, spec, force),
                 _step_unit(root, exe), _step_dropin(root, spec), _step_enable(root)]
        site = _step_site(root, exe)
        steps += [site] if site is not None else []
    except OSError as e:
        raise _file_error(e, root) from e
    if any(s.result in ("created", "changed") for s in steps):
        _daemon_reload(root)
    return steps


def _file_error(e: OSError, root: Path) -> InstallError:
    """A file that cannot be written or removed under ``root``, with the fix for the usual causes."""
    where = e.filename or root
    if isinstance(e, PermissionError):
        fix = "run it as root (sudo), or install into a staging folder with --root DIR"
    elif isinstance(e, (NotADirectoryError, FileExistsError)):
        fix = f"a file stands where a folder belongs under {root}; move it away"
    else:
        fix = "fix the file system (free space, a read-write mount) and run again"
    return InstallError(f"{where}: {e.strerror or e}; {fix}")


def uninstall(root: str | os.PathLike = "/", purge: bool = False) -> list[Step]:
    """Disable and remove the unit, drop-ins, config and snippets; ``purge`` also removes ``/var/lib/edge``.

    Raises:
        InstallError: ``systemctl disable`` failed, or a file under ``root`` cannot be removed.
    """
    root = Path(root)
    try:
        steps = _remove(root, purge)
    except OSError as e:
        raise _file_error(e, root) from e
    _daemon_reload(root)
    return steps


def _remove(root: Path, purge: bool) -> list[Step]:
    steps = [Step("enable", "removed" if _disable(root, UNIT_NAME, "disable") else "absent", WANTS)]
    if _disable(root, SITE_UNIT, "disable"):
        steps.append(Step("site", "removed", SITE_WANTS))
    site_unit = _p(root, f"{UNIT_DIR}/{SITE_UNIT}")
    if site_unit.exists():
        site_unit.unlink()
        steps.append(Step("site", "removed", f"{UNIT_DIR}/{SITE_UNIT}"))
    for name, rel in (("unit", f"{UNIT_DIR}/{UNIT_NAME}"), ("dropin", f"{UNIT_DIR}/{UNIT_NAME}.d"),
                      ("config", "/etc/edge"), ("users", SYSUSERS), ("data", TMPFILES)):
        p = _p(root, rel)
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
            steps.append(Step(name, "removed", rel))
        elif p.exists() or p.is_symlink():
            p.unlink()
            steps.append(Step(name, "removed", rel))
        else:
            steps.append(Step(name, "absent", rel))
    data = _p(root, DATA_DIR)
    if purge and data.exists():
        shutil.rmtree(data)
        steps.append(Step("purge", "removed", DATA_DIR))
    elif data.exists():
        steps.append(Step("purge", "kept", f"{DATA_DIR} (store, models; --purge removes it)"))
    else:
        steps.append(Step("purge", "absent", DATA_DIR))
    steps.append(Step("account", "kept", "user edge (`userdel edge` removes it)"))
    return steps
