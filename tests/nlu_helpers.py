"""Shared parts of the understanding tests: the sample inventory as items, a bilingual test
inventory, and a tiny real engine that replays scripted outputs (a neighbour of the unit under
test — the LLM intent validator and its retry — not the unit itself)."""
from __future__ import annotations

import csv
from pathlib import Path

from edge.llm.base import GenerationRequest, GenerationStats, LlmEngine
from edge.stock.store import Item

REPO = Path(__file__).resolve().parents[1]
INVENTORY = REPO.parent / "shared" / "audio" / "sessions" / "inventory.csv"
EVAL = REPO / "bench" / "eval" / "utterances.jsonl"
SMOLLM2 = "smollm2-135m-instruct-q4_1"

#: Chinese aliases added to the sample inventory for the Mandarin tests
ZH_ALIASES = {
    "BLT-M8-30": ("M8螺栓", "M8螺丝"),
    "GLV-NIT-L": ("丁腈手套", "手套"),
    "DRL-BIT-6": ("钻头",),
    "GOG-SAF": ("护目镜", "安全眼镜"),
    "WSH-M8": ("垫圈",),
    "TIE-CBL-200": ("扎带",),
    "FUS-5A": ("保险丝",),
}


def sample_items(extra_aliases: dict[str, tuple[str, ...]] | None = None) -> list[Item]:
    """The shared session inventory (/work/shared/audio/sessions/inventory.csv) as items."""
    extra_aliases = extra_aliases or {}
    with INVENTORY.open(newline="", encoding="utf-8") as f:
        return [Item(r["sku"], r["item"], r["location"], int(r["quantity"]), r["unit"],
                     tuple(a.strip() for a in r["aliases"].split(";") if a.strip()) + extra_aliases.get(r["sku"], ()))
                for r in csv.DictReader(f)]


def write_inventory(path: Path, items: list[Item]) -> Path:
    """``items`` as an inventory CSV at ``path`` (for a real :class:`edge.stock.store.Store`)."""
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["sku", "item", "location", "quantity", "unit", "aliases"])
        for it in items:
            w.writerow([it.sku, it.item, it.location, it.quantity, it.unit, ";".join(it.aliases)])
    return path


class ReplayEngine(LlmEngine):
    """An :class:`edge.llm.base.Engine` that answers each request with the next scripted output.

    ``outputs``: strings, or ``(text, finish_reason)`` pairs (``"length"`` = cut off by
    max_tokens). Keeps every request in ``requests``. Raises ``AssertionError`` when asked more
    often than scripted, so a test sees an unexpected extra call.
    """

    name = "replay"
    n_ctx = 2048

    def __init__(self, outputs):
        self.outputs = [o if isinstance(o, tuple) else (o, "stop") for o in outputs]
        self.requests: list[GenerationRequest] = []
        self.last_stats = GenerationStats()

    def stream(self, request: GenerationRequest, cancel=None):
        assert len(self.requests) < len(self.outputs), f"unexpected LLM call #{len(self.requests) + 1}: {request}"
        text, finish = self.outputs[len(self.requests)]
        self.requests.append(request)
        self.last_stats = GenerationStats(completion_tokens=len(text.split()), finish_reason=finish)
        for piece in text.split(" "):
            yield piece
            yield " "

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def close(self) -> None:
        pass
