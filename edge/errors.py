"""The one root of every error edge raises on purpose (a leaf module: it imports nothing).

    EdgeError                 anything edge raises by design; a bug is any other exception
    └── UserError             bad input, settings, files or devices: the message names the file,
                              key or device and the fix; the CLI prints it as one line, exit 2

Everything else (an ``AttributeError``, a ``sqlite3`` traceback) is a bug and keeps its traceback.
"""
from __future__ import annotations


class EdgeError(Exception):
    """Raised by edge on purpose: a failure it knows and can describe."""


class UserError(EdgeError):
    """The user can fix this: the message names the file, settings key or device and the fix."""
