"""The NPU's device node: can this process open it the way the vendor runtimes do (case C07)?

librkllmrt and librknnrt open the rknpu driver's node read-write at init (the DRM render node
``/dev/dri/renderD129`` on RK3588 vendor kernels, ``/dev/rknpu`` on older ones, ``/dev/accel/accel0``
on mainline ``rocket``; the board config lists them: ``npu.device_node`` and ``npu.alt_device_nodes``).
When the service user is not in the node's group the runtime only prints an error and fails; this
check runs first and says which node, which group and what to do.
"""
from __future__ import annotations

import errno
import grp
import os
import pwd
import stat
from pathlib import Path
from typing import Sequence


class NpuAccessError(OSError):
    """The NPU node is missing or cannot be opened read-write; the message names the node and the fix."""


def _owner_group(st: os.stat_result) -> str:
    try:
        return grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        return str(st.st_gid)


def _user() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def check_node(nodes: Sequence[str | os.PathLike[str]], group: str | None = None) -> Path:
    """Open the first existing node of ``nodes`` read-write (and close it again); returns its path.

    Args:
        nodes: the board's ``npu.device_node`` then its ``alt_device_nodes``.
        group: the board's ``npu.device_group`` (the group the fix names; default: the node's own).
    Raises:
        NpuAccessError: none of ``nodes`` exists (rknpu driver not loaded), or the node refuses to
            open (``EACCES``/``EPERM``: not in its group; the message gives ``usermod -aG`` and the
            unit's ``SupplementaryGroups=``/``DeviceAllow=``), or another open error.
    """
    paths = [Path(n) for n in nodes]
    if not paths:
        raise ValueError("no NPU device node given (board config: npu.device_node)")
    node = next((p for p in paths if os.path.exists(p)), None)
    if node is None:
        raise NpuAccessError(errno.ENOENT, f"no NPU device node: none of {', '.join(map(str, paths))} exists; "
                             "is the rknpu driver loaded? (dmesg | grep -i rknpu; cat /sys/module/rknpu/version)")
    try:
        fd = os.open(node, os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as e:
        st = os.stat(node)
        owner = _owner_group(st)
        want = group or owner
        user = _user()
        if e.errno in (errno.EACCES, errno.EPERM):
            raise NpuAccessError(e.errno, (
                f"cannot open the NPU device node {node} ({stat.filemode(st.st_mode)} group {owner}): "
                f"{os.strerror(e.errno)} for user {user}; add the user to group {want} "
                f"(usermod -aG {want} {user}, then restart the service; the unit needs "
                f"SupplementaryGroups={want} and DeviceAllow={node} rw, as 'edge install' writes)")) from e
        raise NpuAccessError(e.errno, f"cannot open the NPU device node {node}: {e.strerror}") from e
    os.close(fd)
    return node
