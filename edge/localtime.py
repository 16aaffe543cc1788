"""Local time for what the box says and shows, in the zone the system has now.

C's ``localtime_r``, which Python's ``datetime.astimezone()`` uses, reads the zone (``TZ``,
``/etc/localtime``) once per process; a service running for weeks would keep speaking in the zone
it started in after ``timedatectl set-timezone`` or a daylight-saving rule update. ``time.tzset()``
reads it again (a ``stat`` of ``/etc/localtime``: cheap next to a reply).
"""
from __future__ import annotations

import time
from datetime import datetime

__all__ = ["local", "now_local"]


def local(moment: datetime) -> datetime:
    """``moment`` (timezone-aware) in the system's current local zone."""
    time.tzset()
    return moment.astimezone()


def now_local() -> datetime:
    """The current time in the system's current local zone."""
    time.tzset()
    return datetime.now().astimezone()
