"""The JSON the LLM fallback must produce, and its validation (case C14).

Two schemas from one inventory:

* :func:`generation_schema` — sent as ``GenerationRequest.json_schema``; llama.cpp turns it into a
  GBNF grammar, so every sampled token keeps the output inside it (keys in a fixed order, enums
  for ``intent``, ``sku`` and ``direction``). The llama-cpp-python converter ignores
  ``minimum``/``maxLength`` and conditionals, hence the second schema.
* :func:`validation_schema` — checked with the ``jsonschema`` library (Draft 2020-12) on what came
  back: the same fields plus ``quantity ≥ 1``, length limits, and per intent the slots that must be
  set (``log_record``: ``sku``, ``quantity``, ``direction``).

An output is accepted only when it is *exactly* one JSON object (whitespace around it allowed):
JSON cut off by the token budget, JSON wrapped in prose ("Sure! {…} Hope this helps") and JSON
that breaks the schema (unknown SKU, ``"quantity": "three"``, ``"direction": "sideways"``, no
``intent``) are all refused with a message that says what was wrong.
"""
from __future__ import annotations

import json
from collections.abc import Iterable

from edge.errors import EdgeError

INTENT_VALUES = ("query_stock", "log_record", "undo", "other")
DIRECTIONS = ("in", "out")
FIELDS = ("intent", "sku", "quantity", "direction", "location", "answer")
#: longest ``answer`` accepted, characters: two short spoken sentences (~30 words)
ANSWER_MAX_CHARS = 240
#: longest ``location`` accepted, characters ("drawer 12", "shelf B", "the top shelf in aisle 3")
LOCATION_MAX_CHARS = 40
#: largest ``quantity`` accepted in one record (a guard against digit runs, not a stock limit)
QUANTITY_MAX = 100000


def generation_schema(skus: Iterable[str]) -> dict:
    """The schema the LLM's output is constrained to (a JSON object with all of :data:`FIELDS`).

    ``skus``: the inventory's SKUs; ``sku`` is one of them or null. Raises nothing.
    """
    skus = sorted(set(skus))
    return {
        "type": "object",
        "properties": {
            "intent": {"enum": list(INTENT_VALUES)},
            "sku": {"enum": [*skus, None]},
            "quantity": {"type": ["integer", "null"]},
            "direction": {"enum": [*DIRECTIONS, None]},
            "location": {"type": ["string", "null"]},
            "answer": {"type": ["string", "null"]},
        },
        "required": list(FIELDS),
        "additionalProperties": False,
    }


def validation_schema(skus: Iterable[str]) -> dict:
    """:func:`generation_schema` plus ranges and the slots each intent needs."""
    s = generation_schema(skus)
    p = s["properties"]
    p["quantity"] = {"type": ["integer", "null"], "minimum": 1, "maximum": QUANTITY_MAX}
    p["location"] = {"type": ["string", "null"], "maxLength": LOCATION_MAX_CHARS}
    p["answer"] = {"type": ["string", "null"], "maxLength": ANSWER_MAX_CHARS}
    s["allOf"] = [
        {"if": {"properties": {"intent": {"const": "log_record"}}},
         "then": {"properties": {"sku": {"type": "string"}, "quantity": {"type": "integer"},
                                 "direction": {"enum": list(DIRECTIONS)}}}},
    ]
    return s


class IntentJsonError(EdgeError, ValueError):
    """The LLM output is not an acceptable intent; ``errors`` lists every problem found."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("; ".join(errors))


def parse_json_object(text: str) -> dict:
    """``text`` → the one JSON object it is, nothing before or after it.

    Raises:
        IntentJsonError: empty output; truncated JSON ("the JSON object is cut off …"); prose
            around a JSON object ("text before/after the JSON object …"); not JSON at all; JSON
            that is not an object.
    """
    s = (text or "").strip()
    if not s:
        raise IntentJsonError(["the output is empty; expected one JSON object"])
    try:
        obj = json.loads(s)
    except json.JSONDecodeError as e:
        start = s.find("{")
        if start < 0:
            raise IntentJsonError([f"the output is not JSON ({e.msg} at char {e.pos})"]) from None
        try:
            _, end = json.JSONDecoder().raw_decode(s, start)
        except json.JSONDecodeError as e2:
            if e2.pos >= len(s) - 1 or e2.msg.startswith("Unterminated"):
                raise IntentJsonError([f"the JSON object is cut off at char {e2.pos} ({e2.msg}); it is "
                                       "incomplete"]) from None
            raise IntentJsonError([f"the output is not valid JSON ({e2.msg} at char {e2.pos})"]) from None
        where = " and ".join(w for w, t in (("before", s[:start]), ("after", s[end:])) if t.strip())
        raise IntentJsonError([f"text {where} the JSON object; reply with the JSON object only"]) from None
    if not isinstance(obj, dict):
        raise IntentJsonError([f"the output is JSON {type(obj).__name__}, not an object"])
    return obj


def validate_intent(obj: dict, skus: Iterable[str]) -> dict:
    """Check ``obj`` against :func:`validation_schema`; returns ``obj``.

    Raises:
        IntentJsonError: every violation as ``"<field>: <message>"``, e.g.
            ``"sku: 'BLT-M9' is not one of [...]"``, ``"quantity: 'three' is not of type 'integer', 'null'"``,
            ``"(object): 'intent' is a required property"``.
    """
    # jsonschema takes ~0.3 s to import: only the model path checks its output, a template hit never does
    from jsonschema import Draft202012Validator

    v = Draft202012Validator(validation_schema(skus))
    errors = sorted(v.iter_errors(obj), key=lambda e: (list(e.absolute_path), e.message))
    if errors:
        out, seen = [], set()
        for e in errors:  # one message per field (the per-intent rules repeat the type errors)
            where = ".".join(str(x) for x in e.absolute_path) or "(object)"
            if where in seen and where != "(object)":
                continue
            seen.add(where)
            msg = e.message if len(e.message) <= 160 else e.message[:157] + "..."
            out.append(f"{where}: {msg}")
        raise IntentJsonError(out)
    return obj


def parse_and_validate(text: str, skus: Iterable[str]) -> dict:
    """:func:`parse_json_object` then :func:`validate_intent`. Raises :class:`IntentJsonError`."""
    return validate_intent(parse_json_object(text), skus)
