"""Small statistics of the bench figures: median, quantile, halves, ratio, rounding, the throttle flag."""
from __future__ import annotations

import statistics

#: Issue 8: throttling is flagged when the second half decodes > 15 % slower than the first.
THROTTLE_DROP = 0.15
MIB = 1024 * 1024


def median(xs) -> float | None:
    """Median of the values of ``xs`` that are not None; None when none are left."""
    xs = [x for x in xs if x is not None]
    return float(statistics.median(xs)) if xs else None


def percentile(xs, q: float) -> float | None:
    """The ``q`` (0..1) quantile by linear interpolation; None for no values."""
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def halves(xs: list) -> tuple[list, list]:
    """First and second half of ``xs`` (the second gets the middle element of an odd count)."""
    n = len(xs) // 2
    return xs[:n], xs[n:]


def ratio(a: float | None, b: float | None) -> float | None:
    """``a / b`` to 3 decimals; None when either is missing or ``b`` is 0."""
    return round(a / b, 3) if a is not None and b else None


def rounded(x: float | None, nd: int = 2) -> float | None:
    """``x`` rounded to ``nd`` decimals as a float; None stays None."""
    return None if x is None else round(float(x), nd)


def throttle_check(rates: list[float], drop: float = THROTTLE_DROP) -> dict:
    """``rates`` (tokens/s per run, in order) → ``{first_half_tokens_per_s, second_half_tokens_per_s,
    drop_fraction, throttled}``: throttled when the second half's median is more than ``drop``
    (0..1) below the first half's. Needs at least 2 rates, else ``throttled`` is None."""
    first, second = halves([r for r in rates if r])
    if not first or not second:
        return {"first_half_tokens_per_s": None, "second_half_tokens_per_s": None, "drop_fraction": None,
                "throttled": None}
    a, b = median(first), median(second)
    d = 1.0 - b / a if a else None
    return {"first_half_tokens_per_s": rounded(a), "second_half_tokens_per_s": rounded(b),
            "drop_fraction": rounded(d, 3), "throttled": bool(d is not None and d > drop)}
