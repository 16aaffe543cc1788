"""The command phrasings as data: Home Assistant intent templates (hassil) per language.

The package's ``templates/<language>.yaml`` (``en``, ``zh``) plus a site's own files (every
``*.yaml`` in ``<config dir>/intents/`` whose ``language`` is the configured one, same format, same
intent names) are merged into one :class:`hassil.Intents` at start. :meth:`Templates.match` finds
the best sentence for a text in normal form and returns its intent, the raw slot texts (``item``,
``location``, ``to_location``: wildcards, resolved afterwards by :mod:`edge.stages.nlu.slots`), the
fixed slots of its block (``direction``), and which sentence of which file matched (for
``edge ask --explain``).

Item names are *not* a hassil list: with 20,000 items a list of every name is slow to match (see
``bench/nlu_speed.py``); the ``{item}`` wildcard is resolved by the bounded lookup instead.

Mandarin (``zh.yaml``) sets ``ignore_whitespace: true``: hassil then matches text without spaces
character by character (CJK needs no word breaks), wildcards included.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml
from hassil import Intents
from hassil.recognize import recognize_ranked
from hassil.util import merge_dict

from edge.errors import UserError
from edge.stages.nlu.types import INTENTS

PACKAGE_DIR = Path(__file__).resolve().parent / "templates"


class TemplateError(UserError):
    """A template file cannot be read or names an unknown intent (message names the file)."""


@dataclass(frozen=True)
class TemplateMatch:
    """One matched sentence: ``intent`` (one of :data:`edge.stages.nlu.types.INTENTS`), ``slots``
    (slot name → the text it matched, or the block's fixed value), ``sentence`` (the template as
    written) and ``file`` (the YAML it came from)."""

    intent: str
    slots: dict = field(default_factory=dict)
    sentence: str = ""
    file: str = ""


@lru_cache(maxsize=8)
def _package_dict(language: str, part: str = "") -> dict:
    path = PACKAGE_DIR / f"{language}{'_' + part if part else ''}.yaml"
    return _prepared(_read(path), path, language)


def _read(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise TemplateError(f"{path}: cannot read the intent templates ({e})") from None
    if not isinstance(data, dict):
        raise TemplateError(f"{path}: an intent template file is a mapping with 'language' and 'intents'")
    return data


def _prepared(data: dict, path: Path, language: str) -> dict:
    """``data`` with its sentences in the matcher's normal form (apostrophes dropped, lowercase)
    and the file name in each block's metadata. Raises :class:`TemplateError` for unknown intents."""
    data = copy.deepcopy(data)
    for name, intent in (data.get("intents") or {}).items():
        if name not in INTENTS:
            raise TemplateError(f"{path}: intent {name!r} is not one of {', '.join(INTENTS)}")
        for block in intent.get("data") or []:
            block["sentences"] = [_norm_sentence(s, language) for s in block.get("sentences") or []]
            block.setdefault("metadata", {})["file"] = str(path)
    for key, rule in list((data.get("expansion_rules") or {}).items()):
        data["expansion_rules"][key] = _norm_sentence(rule, language)
    return data


def _norm_sentence(s: str, language: str) -> str:
    s = str(s).replace("\u2019", "'").replace("'", "")
    return s.lower() if language == "en" else s


def site_files(directory: str | Path | None, language: str) -> list[Path]:
    """The site's template files for ``language`` in ``directory`` (sorted; none when the folder
    does not exist). Raises :class:`TemplateError` for a file that cannot be read."""
    if directory is None:
        return []
    d = Path(directory)
    if not d.is_dir():
        return []
    return [p for p in sorted(d.glob("*.yaml")) if (_read(p).get("language") or language) == language]


class Templates:
    """The merged templates of one language (``en`` or ``zh``) and the site's folder of extra files;
    with ``part`` (``records``) the package's ``<language>_<part>.yaml`` alone (the records questions,
    matched on their own path: :mod:`edge.stages.nlu.records`).

    Raises:
        TemplateError: a file cannot be read, is not a mapping, or names an unknown intent.
    """

    def __init__(self, language: str = "en", site_dir: str | Path | None = None, part: str = ""):
        self.language = language
        merged: dict = copy.deepcopy(_package_dict(language, part))
        self.files = [str(PACKAGE_DIR / f"{language}{'_' + part if part else ''}.yaml")]
        for path in site_files(site_dir, language) if not part else ():
            merge_dict(merged, _prepared(_read(path), path, language))
            self.files.append(str(path))
        merged["language"] = language
        try:
            self.intents = Intents.from_dict(merged)
        except Exception as e:  # hassil raises plain exceptions for a template it cannot parse
            raise TemplateError(f"{', '.join(self.files)}: an intent template does not parse ({e})") from None

    def match(self, text: str, accept: Callable[[TemplateMatch], bool] | None = None) -> TemplateMatch | None:
        """The best template for ``text`` (normal form), or None. ``accept``: a check of the slot
        texts (a place slot must hold a place); the best match it accepts is returned. Raises nothing."""
        if not text.strip():
            return None
        try:
            results = recognize_ranked(text, self.intents)
        except Exception:  # a matcher failure is "not a template command", never a crash
            return None
        for result in results:
            slots = {name: (e.text or str(e.value)).strip() if e.is_wildcard else e.value
                     for name, e in result.entities.items()}
            sentence = result.intent_sentence.text if result.intent_sentence is not None else ""
            meta = result.intent_metadata or {}
            got = TemplateMatch(result.intent.name, slots, sentence, str(meta.get("file", "")))
            if accept is None or accept(got):
                return got
        return None


@lru_cache(maxsize=4)
def _package_templates(language: str, part: str = "") -> Templates:
    return Templates(language, part=part)


def records_templates(language: str = "en") -> Templates:
    """The package's records-question templates of ``language`` (built once per process)."""
    return _package_templates(language, "records")


def templates_for(language: str, site_dir: str | Path | None = None) -> Templates:
    """The :class:`Templates` of ``language`` with the site's files of ``site_dir``; the package's
    alone are built once per process and shared (they are only read). Raises :class:`TemplateError`."""
    if site_dir is None or not site_files(site_dir, language):
        return _package_templates(language)
    return Templates(language, site_dir)
