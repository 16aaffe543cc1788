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

from edge.errors import UserError


class NpuAccessError(UserError, OSError):
    """The NPU node is missing or cannot be opened read-write; the message names the node and the fix."""


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _user() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def as_node_list(nodes: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None) -> list[str]:
    """A board config's node field (one path or a list of them) as a list of paths."""
    if nodes is None:
        return []
    if isinstance(nodes, (str, os.PathLike)):
        return [os.fspath(nodes)]
    return [os.fspath(n) for n in nodes if n]


def check_node(nodes: Sequence[str | os.PathLike[str]], group: str | None = None) -> Path:
    """Open the first of ``nodes`` that is a character device read-write (and close it); returns its path.

    Args:
        nodes: the board's ``npu.device_node`` then its ``alt_device_nodes``.
        group: the board's ``npu.device_group``; named in the fix only when the node really has that
            group (else the node's own group is named).
    Raises:
        NpuAccessError: no node is a character device (rknpu driver not loaded; a path that exists as
            something else is named), a node cannot be looked up, or the node refuses to open
            (``EACCES``/``EPERM``: not in its group; the message gives ``usermod -aG`` and the unit's
            ``SupplementaryGroups=``/``DeviceAllow=``), or another open error.
        ValueError: ``nodes`` is empty.
    """
    paths = [Path(n) for n in as_node_list(nodes)]
    if not paths:
        raise ValueError("no NPU device node given (board config: npu.device_node)")
    others: list[str] = []
    for node in paths:
        try:
            st = os.stat(node)  # follows symlinks, as open() does
        except FileNotFoundError:
            continue
        except OSError as e:
            raise NpuAccessError(e.errno, f"cannot look up the NPU device node {node}: {e.strerror} "
                                 f"(the service user needs search permission on {node.parent})") from e
        if not stat.S_ISCHR(st.st_mode):
            others.append(f"{node} ({stat.filemode(st.st_mode)}, not a character device)")
            continue
        try:
            fd = os.open(node, os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:  # removed since the stat (driver unloaded): try the others
            continue
        except OSError as e:
            owner = _group_name(st.st_gid)
            want = group if group == owner else owner
            user = _user()
            if e.errno in (errno.EACCES, errno.EPERM):
                raise NpuAccessError(e.errno, (
                    f"cannot open the NPU device node {node} ({stat.filemode(st.st_mode)} group {owner}): "
                    f"{os.strerror(e.errno)} for user {user}; add the user to group {want} "
                    f"(usermod -aG {want} {user}, then restart the service; the unit needs "
                    f"SupplementaryGroups={want} and DeviceAllow={node} rw, as 'edge install' writes)"
                    + (f"; the board config names group {group}, the node has group {owner}: fix the "
                       f"board config's npu.device_group" if group and group != owner else ""))) from e
            raise NpuAccessError(e.errno, f"cannot open the NPU device node {node}: {e.strerror}") from e
        os.close(fd)
        return node
    found = f"; found instead: {'; '.join(others)}" if others else ""
    raise NpuAccessError(errno.ENOENT, f"no NPU device node: none of {', '.join(map(str, paths))} is a character "
                         f"device{found}; is the rknpu driver loaded? (dmesg | grep -i rknpu; "
                         "cat /sys/module/rknpu/version)")
