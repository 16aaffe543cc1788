"""Where the project's data folders are: ``board-configs/``, ``models/`` and ``systemd/``.

In a checkout (``pip install -e .``, the way scripts/setup.sh installs) they sit beside the
``edge`` package; a wheel installs them under ``<prefix>/share/edge/`` (pyproject's
``[tool.setuptools.data-files]``).
"""
from __future__ import annotations

import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]


def data_dir(name: str) -> Path:
    """``name`` (``board-configs``, ``models`` or ``systemd``) in the checkout if it is there, else
    under ``sys.prefix/share/edge``."""
    here = CHECKOUT / name
    if here.is_dir():
        return here
    return Path(sys.prefix) / "share" / "edge" / name
