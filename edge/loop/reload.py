"""A configuration reload without a restart (``kill -HUP``; ``systemctl reload edge``): the wake-word
thresholds are read again from the same files and applied from the next frame (C21).

:func:`configure` records the files the running loop was started from; :func:`request` (the SIGHUP
handler) marks a reload; the pipeline calls :func:`apply_if_requested` once per frame, which reads the
settings again and hands the wake models' thresholds to :meth:`edge.stages.wake.WakeWord.set_thresholds`
(and ``wake.check.threshold``, the checked words' first stage, to ``set_check_threshold``).
A file that no longer validates, or names a wake model that is not loaded, is logged and changes
nothing (the running thresholds stay). Other settings still need a restart.
"""
from __future__ import annotations

import logging
import threading

from edge.config import ConfigError, load_settings

__all__ = ["configure", "request", "apply_if_requested"]

log = logging.getLogger("edge.reload")

_source: dict[str, str | None] = {}
_requested = threading.Event()


def configure(path: str | None, board: str | None) -> None:
    """The config file and board the running loop was started with."""
    _source.update(path=path, board=board)
    _requested.clear()


def request(*_signal_args) -> None:
    """Ask for a reload at the next frame (safe in a signal handler)."""
    _requested.set()


def apply_if_requested(stages) -> bool:
    """Apply a requested reload to ``stages``; True when thresholds were changed."""
    if not _requested.is_set() or not _source:
        return False
    _requested.clear()
    try:
        settings = load_settings(_source.get("path"), _source.get("board"))
        models = list(settings.wake.models)
        stages.wake.set_thresholds(models)
        stages.wake.set_check_threshold(settings.wake.check.threshold)
    except (ConfigError, ValueError) as e:
        log.warning("reload refused, nothing changed: %s", e)
        return False
    log.warning("reloaded: wake thresholds %s (checked words' first stage %s)", ", ".join(
        f"{m.name} {'its own' if m.threshold is None else format(m.threshold, 'g')}" for m in models),
        settings.wake.check.threshold)
    return True
