"""Logging: structured journald entries under systemd, plain readable lines in a terminal.

:func:`setup` picks the handler once per process:

- under systemd with stderr connected to the journal (``$JOURNAL_STREAM`` = ``<dev>:<inode>`` of
  stderr's stream socket, systemd.exec(5)): ``systemd.journal.JournalHandler`` (systemd-python), which
  sends each record with the native journal protocol; the fields a record carries in ``extra=`` become
  journal fields: ``TURN_ID``, ``STAGE``, ``LATENCY_MS`` (and ``LATENCY_<PART>_MS`` for the parts of a
  turn's latency), queryable as ``journalctl -u edge TURN_ID=3f2a...`` or ``journalctl -u edge STAGE=asr``;
- otherwise a ``StreamHandler`` on stderr with :class:`TerminalFormatter`:
  ``12:03:04.123 INFO  [turn 3f2a9c01b2d4 asr 512.0 ms] transcript: how many m8 bolts``.

:func:`event_fields` maps a pipeline event (:mod:`edge.events`) to those fields and :func:`log_event`
logs it. The level comes from ``$EDGE_LOG_LEVEL`` (``DEBUG``, ``INFO``, ...; default ``INFO``).
"""
from __future__ import annotations

import logging
import os
import sys
from typing import Any, Mapping

LOGGER = "edge"
IDENTIFIER = "edge"  # SYSLOG_IDENTIFIER of every journal entry
#: journal fields this module sets on records (journal field names: A-Z, 0-9, _; systemd.journal-fields(7))
FIELDS = ("TURN_ID", "STAGE", "LATENCY_MS")


def under_journald(env: Mapping[str, str] = os.environ, fd: int = 2) -> bool:
    """True when ``fd`` (stderr) is the journal stream systemd set up (``$JOURNAL_STREAM`` matches
    its device and inode numbers, systemd.exec(5))."""
    raw = env.get("JOURNAL_STREAM", "")
    dev, sep, ino = raw.partition(":")
    if not sep or not dev.isdigit() or not ino.isdigit():
        return False
    try:
        st = os.fstat(fd)
    except OSError:
        return False
    return st.st_dev == int(dev) and st.st_ino == int(ino)


class TerminalFormatter(logging.Formatter):
    """``HH:MM:SS.mmm LEVEL [turn <id> <stage> <latency> ms] message`` (the bracket only when set)."""

    def __init__(self):
        super().__init__(datefmt="%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        t = self.formatTime(record, self.datefmt) + f".{int(record.msecs):03d}"
        ctx = []
        if getattr(record, "TURN_ID", None):
            ctx.append(f"turn {record.TURN_ID}")
        if getattr(record, "STAGE", None):
            ctx.append(str(record.STAGE))
        if getattr(record, "LATENCY_MS", None) is not None:
            ctx.append(f"{float(record.LATENCY_MS):.1f} ms")
        head = f"{t} {record.levelname:<5} " + (f"[{' '.join(ctx)}] " if ctx else "")
        text = head + record.getMessage()
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def _level(env: Mapping[str, str]) -> int:
    name = env.get("EDGE_LOG_LEVEL", "INFO").upper()
    level = logging.getLevelName(name)
    return level if isinstance(level, int) else logging.INFO


def journal_handler(**fields: str) -> logging.Handler:
    """A ``systemd.journal.JournalHandler`` with ``SYSLOG_IDENTIFIER=edge`` (and ``fields``);
    raises ImportError when systemd-python is not installed."""
    from systemd.journal import JournalHandler

    h = JournalHandler(SYSLOG_IDENTIFIER=IDENTIFIER, **fields)
    h.setFormatter(logging.Formatter("%(message)s"))
    return h


def setup(env: Mapping[str, str] | None = None, stream=None, journal: bool | None = None) -> logging.Logger:
    """Configure the ``edge`` logger once: journald under systemd, else readable lines on ``stream``
    (stderr). ``journal`` forces the choice. Returns the logger."""
    env = os.environ if env is None else env
    logger = logging.getLogger(LOGGER)
    for h in list(logger.handlers):
        if getattr(h, "_edge", False):
            logger.removeHandler(h)
    use_journal = under_journald(env) if journal is None else journal
    handler: logging.Handler | None = None
    if use_journal:
        try:
            handler = journal_handler()
        except ImportError:  # systemd-python missing: stderr still reaches the journal as plain text
            handler = None
    if handler is None:
        handler = logging.StreamHandler(stream or sys.stderr)
        handler.setFormatter(TerminalFormatter())
    handler._edge = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(_level(env))
    logger.propagate = False
    return logger


def writes_to_journal(logger: logging.Logger) -> bool:
    """Whether :func:`setup` gave ``logger`` the journal (not stderr lines)."""
    return any(getattr(h, "_edge", False) and type(h).__name__ == "JournalHandler" for h in logger.handlers)


def event_fields(event) -> dict[str, Any]:
    """Journal fields of a pipeline event: ``TURN_ID``, ``STAGE`` (the event type: ``wake``,
    ``transcript``, ``intent``, ``reply``, ``turn_end``, ...), ``LATENCY_MS`` (a turn's ``total_ms``)
    and ``LATENCY_<PART>_MS`` for each part of ``turn_end.latency_ms``."""
    fields: dict[str, Any] = {"TURN_ID": getattr(event, "turn_id", "") or "", "STAGE": event.type}
    latency = getattr(event, "latency_ms", None)
    if isinstance(latency, dict) and latency:
        if "total_ms" in latency:
            fields["LATENCY_MS"] = latency["total_ms"]
        for k, v in latency.items():
            if k != "total_ms":
                part = k.upper().removesuffix("_MS")
                fields[f"LATENCY_{part}_MS"] = v
    return fields


def log_event(logger: logging.Logger, event, level: int = logging.INFO) -> None:
    """Log a pipeline event with its journal fields; the message is the event's readable line."""
    human = event.human() if hasattr(event, "human") else str(event)
    logger.log(level, human, extra=event_fields(event))
