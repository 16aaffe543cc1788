"""What the Status page shows: the store's site sync state, the governor, the live service's
counters, the LLM chain, the models and their licences, the doctor's checks. Each part is read fresh and never raises: a part
that cannot be read says why."""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edge.boards import load_board
from edge.models.manifest import load_manifest
from edge.ops.doctor import Doctor
from edge.service.api.metrics import chain_status
from edge.service.console.dashboard import WINDOWS, charts, governor_words, now_words, turn_figures
from edge.service.runstate import format_service, read_state
from edge.site.status import format_site, site_status, step_back_line

log = logging.getLogger("edge.service.console")


@dataclass
class Part:
    """One section: ``rows`` (lists of cells) under ``header``, or ``error`` when it could not be read."""

    title: str
    header: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    error: str = ""


def governor_part(governor) -> Part:
    """Thermal level, why, power mode and what the LLM may do now
    (:meth:`edge.governor.governor.Governor.status`), in words and units; the signals this machine
    cannot read said once (:func:`edge.service.console.dashboard.governor_words`)."""
    p = Part("Governor", ["", ""])
    if governor is None:
        p.error = "No governor in this process."
        return p
    try:
        governor.sample()
        p.rows, _missing = governor_words(governor.status())  # the dashboard says what is unreadable
    except Exception as e:  # an unreadable signal: said, not raised
        p.error = f"The governor could not be read: {e}"
        return p
    return p


def service_part(state_file: Path | None) -> Part:
    """The live service's capture counters and turns (its state file, :mod:`edge.service.runstate`)."""
    p = Part("Voice service")
    if state_file is None:
        p.error = "no state file configured"
        return p
    try:
        p.lines = format_service(read_state(state_file))
    except Exception as e:
        p.error = f"Could not be read: {e}"
    return p


def chain_part(engine) -> Part:
    """Each LLM chain step: engine, model, state, why, whether it serves now."""
    p = Part("LLM chain", ["#", "engine", "model", "state", "reason", "serving"])
    if engine is None:
        p.error = "no LLM engine in this process"
        return p
    try:
        p.rows = [[s.get("index"), s.get("engine"), s.get("model") or "none", s.get("state"), s.get("reason") or "",
                   "yes" if s.get("active") else "no"] for s in chain_status(engine)]
        p.lines = move_lines(engine)
    except Exception as e:
        p.error = f"Could not be read: {e}"
    return p


#: The chain's latest moves the Status page lists.
MOVES_SHOWN = 10


def _ago(s: float) -> str:
    s = max(0.0, s)
    return f"{s:.0f} s ago" if s < 120 else f"{s / 60:.0f} min ago" if s < 7200 else f"{s / 3600:.1f} h ago"


def move_lines(engine) -> list[str]:
    """The chain's moves from one step to another (:attr:`edge.llm.chain.EngineChain.moves`), latest
    first, at most :data:`MOVES_SHOWN`, in words ("3 min ago: llamacpp:qwen → grammar (why)")."""
    moves = list(getattr(engine, "moves", None) or [])
    if not moves:
        return ["No moves between steps since the start."]
    now = engine.clock()
    return [f"{_ago(now - m['at'])}: {m['from']} → {m['to']} ({m['reason']})" for m in reversed(moves[-MOVES_SHOWN:])]


def models_part() -> Part:
    """The manifest's models with kind, size (MiB), licence, whether a commercial product may ship it
    (``commercial_use``) and whose name a wake phrase is."""
    p = Part("Models", ["id", "kind", "size", "licence", "may ship commercially", "trademark"])
    try:
        p.rows = [[e.id, e.kind, f"{sum(f.size for f in e.files) / 2**20:.1f} MiB", e.licence, e.shippable,
                   e.trademark or "none"] for e in load_manifest().models]
    except Exception as e:
        p.error = f"Could not be read: {e}"
    return p


def doctor_part(settings) -> Part:
    """``edge doctor``'s checks for the configured board (no audio probe: the service holds the device)."""
    p = Part("Doctor", ["check", "status", "found", "fix"])
    name = settings.board.name if settings is not None and settings.board else None
    if not name or name == "unknown":
        p.error = "no board configured (board: in the settings), so the doctor cannot run"
        return p
    try:
        results = Doctor(Path("/"), load_board(name), settings, probe_audio=False).run()
        p.rows = [[r.name, r.status, r.message, r.fix if r.status != "ok" else ""] for r in results]
    except Exception as e:
        p.error = f"Could not be read: {e}"
    return p


def site_part(store) -> Part:
    """The store's site sync state (online, offline, stopped: another box uses this box id) and a
    step of the wall clock back, as ``edge status`` says them (:mod:`edge.site.status`)."""
    p = Part("Store and site")
    if store is None:
        p.error = "no store in this process"
        return p
    try:
        if store.meta("site_state"):
            p.lines = format_site(site_status(store))
        else:
            p.lines = ["not on a site (no site sync has run)", *step_back_line(store.clock_step_back())]
    except Exception as e:
        p.error = f"Could not be read: {e}"
    return p


def dashboard(ctx, now: float | None = None) -> dict:
    """The Status page's pictures for a :class:`edge.service.console.routes.ConsoleContext`:
    ``charts`` ({window: :func:`edge.service.console.dashboard.charts`}, from the context's ring),
    ``turns`` (:func:`edge.service.console.dashboard.turn_figures`), ``reserve_pct`` (the memory
    reserve, % of MemTotal), ``sampled`` (how many samples the ring holds), ``no_turns`` (why there
    are no turn counts, or None). Blocking: run it in a thread."""
    now = time.time() if now is None else now
    fraction = ctx.settings.governor.mem_fraction if ctx.settings is not None else 0.70
    samples = ctx.ring.since(now - max(WINDOWS.values())) if ctx.ring is not None else []
    no_turns = None
    if not any(x.turns is not None for x in samples):
        no_turns = ("no live voice service has reported here yet (its state file: "
                    f"{ctx.state_file or 'none configured'}), so turns per hour are not known")
    missing = None
    if ctx.governor is not None:
        try:
            if ctx.governor.snapshot is None:
                ctx.governor.sample()
            missing = governor_words(ctx.governor.status())[1]
        except Exception as e:
            missing = f"The governor could not be read: {e}"
    return {"charts": {w: charts(samples, now, w, fraction) for w in WINDOWS}, "turns": turn_figures(ctx.events),
            "reserve_pct": round(100 * (1 - fraction)), "sampled": len(samples), "no_turns": no_turns,
            "now": now_words(samples[-1] if samples else None, fraction, any(x.npu is not None for x in samples)),
            "unreadable": missing}


def parts(ctx) -> list[Part]:
    """Every section for a :class:`edge.service.console.routes.ConsoleContext` (blocking: run it in a thread)."""
    return [site_part(ctx.store), governor_part(ctx.governor), service_part(ctx.state_file), chain_part(ctx.engine),
            models_part(), doctor_part(ctx.settings)]
