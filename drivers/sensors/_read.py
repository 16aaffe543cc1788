"""Small, never-raising readers for kernel text files (procfs, sysfs, debugfs).

Every reader returns ``(value, None)`` or ``(None, reason)``; the reason names the file and what was
wrong with it (missing, permission denied, not text, not a number), so a caller can report it and
treat the signal as unknown. Nothing here raises for a bad file.
"""
from __future__ import annotations

import errno
from pathlib import Path

#: Bytes read at most from one file; every file read here is a one-line or small table file.
MAX_BYTES = 64 * 1024


def read_text(path: Path) -> tuple[str | None, str | None]:
    """The file's text (ASCII/UTF-8), or ``None`` and a reason naming the file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES)
    except FileNotFoundError:
        return None, f"{path}: missing"
    except PermissionError:
        hint = " (debugfs needs root: run as root or mount debugfs readable)" if "/debug/" in str(path) else ""
        return None, f"{path}: permission denied{hint}"
    except IsADirectoryError:
        return None, f"{path}: is a directory, expected a file"
    except OSError as e:  # EIO from a sensor that failed to convert, ENODATA, EAGAIN, ...
        name = errno.errorcode.get(e.errno or 0, "error")
        return None, f"{path}: read failed ({name}: {e.strerror or e})"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, f"{path}: not text (got {data[:16]!r})"


def read_line(path: Path) -> tuple[str | None, str | None]:
    """The file's first line, stripped; an empty file is a reason, not a value."""
    text, why = read_text(path)
    if text is None:
        return None, why
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    if not line:
        return None, f"{path}: empty"
    return line, None


def read_int(path: Path) -> tuple[int | None, str | None]:
    """The file's content as one integer (e.g. a sysfs ``temp`` in milli-°C)."""
    line, why = read_line(path)
    if line is None:
        return None, why
    try:
        return int(line), None
    except ValueError:
        return None, f"{path}: not an integer: {line[:40]!r}"


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """``"0 1 2 3"`` or ``"0-3,6"`` (kernel cpulist format) → ``(0, 1, 2, 3, 6)``.

    Raises:
        ValueError: not a CPU list.
    """
    out: list[int] = []
    for part in text.replace(",", " ").split():
        if "-" in part:
            a, b = part.split("-", 1)
            lo, hi = int(a), int(b)
            if hi < lo:
                raise ValueError(f"bad CPU range {part!r}")
            out.extend(range(lo, hi + 1))
        else:
            out.append(int(part))
    if not out:
        raise ValueError("empty CPU list")
    return tuple(sorted(set(out)))


def read_frequencies(directory: Path, files: dict[str, str], problems: list[str]) -> dict[str, int | None]:
    """``{key: value}`` for ``files`` (``key → file name`` in ``directory``), each a positive integer
    frequency (cpufreq: kHz, devfreq: Hz) or None; why a value is unknown goes to ``problems``."""
    vals: dict[str, int | None] = {}
    for key, fname in files.items():
        v, why = read_int(directory / fname)
        if v is not None and v <= 0:
            v, why = None, f"{directory / fname}: not a positive frequency: {v}"
        if why:
            problems.append(why)
        vals[key] = v
    return vals
