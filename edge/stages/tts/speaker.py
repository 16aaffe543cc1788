"""Where replies are played, and whether the box is speaking right now.

The pipeline asks :meth:`busy` every frame: while the box speaks, and for a guard time after,
wake-word detections are ignored (case C03: a reply that contains the wake word, heard back
through the microphone, must not start a turn). With echo cancellation configured, a wake word
during a reply is a *barge-in*: playback stops and a new turn starts.

- :class:`DeviceSpeaker`: live mode; plays on the output device in a thread, stoppable.
- :class:`TimelineSpeaker`: a speaker whose sound is in the input already (a recording of a box
  talking, or a test that mixes the reply into the microphone signal): busy for the reply's
  duration in *audio* time.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path

import soundfile as sf

log = logging.getLogger("edge.stages.tts.speaker")


def duration_ms(wav: Path) -> int:
    """Duration of a WAV file in ms."""
    info = sf.info(str(wav))
    return int(1000 * info.frames / info.samplerate)


class TimelineSpeaker:
    """Busy from the audio time a reply starts until its duration has passed in audio time."""

    realtime = False  # its time is the audio's, not the wall clock's

    def __init__(self):
        self._until_ms = -1
        self.played: list[tuple[int, Path]] = []  # (start t_ms, wav)
        self.stopped = 0

    def start(self, wav: Path, t_ms: int) -> None:
        self._until_ms = t_ms + duration_ms(wav)
        self.played.append((t_ms, Path(wav)))

    def queue(self, wav: Path, t_ms: int) -> None:
        """Play ``wav`` when what is playing has ended (at once when nothing is)."""
        start = max(t_ms, self._until_ms)
        self._until_ms = start + duration_ms(wav)
        self.played.append((start, Path(wav)))

    def busy(self, t_ms: int) -> bool:
        return t_ms < self._until_ms

    def stop(self) -> None:
        self._until_ms = -1
        self.stopped += 1


class DeviceSpeaker:
    """Plays on the output device (``drivers.audio.playback.Playback``) in a background thread, one
    WAV after the other (:meth:`queue`); :meth:`stop` ends the current one and drops the rest."""

    realtime = True  # plays in wall-clock time, while the pipeline may be busy with a turn

    def __init__(self, playback):
        self.playback = playback
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._pending: list[Path] = []
        self._lock = threading.Lock()
        self._running = False  # set and cleared under the lock: a thread that is leaving takes no more WAVs
        self.stopped = 0
        self.lost = False  # the last playback failed (device or sound server gone)
        self.lost_events = 0  # times the speaker was lost
        self.not_spoken: list[Path] = []  # replies that failed twice: logged, not played

    def start(self, wav: Path, t_ms: int) -> None:
        """Stop what is playing and play ``wav``."""
        self.stop()
        self.queue(wav, t_ms)

    def queue(self, wav: Path, t_ms: int) -> None:
        """Play ``wav`` after the WAVs already queued."""
        with self._lock:
            self._pending.append(Path(wav))
            if not self._running:
                self._running = True
                self._stop = threading.Event()
                self._thread = threading.Thread(target=self._play, args=(self._stop,), name="edge-playback",
                                                daemon=True)
                self._thread.start()

    def _play(self, stop: threading.Event) -> None:
        while not stop.is_set():
            with self._lock:
                if stop.is_set():
                    return
                if not self._pending:
                    self._running = False  # this thread is the current one (stop() not called)
                    return
                wav = self._pending.pop(0)
            self._play_one(wav, stop)

    def _play_one(self, wav: Path, stop: threading.Event) -> None:
        """Play ``wav``; when that fails (the device or the sound server went away: PortAudio reports it
        at once), reopen the output and play it once more; if that fails too, it is logged as not
        spoken. A failed playback never stops the service; the next reply tries the output again."""
        for attempt in (1, 2):
            try:
                if self.lost and hasattr(self.playback, "reopen"):
                    self.playback.reopen()
                self.playback.play_wav(wav, stop)
            except Exception as e:  # AudioDeviceError, OSError from PortAudio
                if not self.lost:
                    self.lost_events += 1
                    log.warning("speaker lost while playing %s: %s", wav.name, e)
                self.lost = True
                if attempt == 2 or stop.is_set():
                    self.not_spoken.append(wav)
                    log.warning("reply not spoken: %s (%s)", wav, e)
                    return
                continue
            if self.lost:
                log.info("speaker back (%s)", getattr(self.playback, "device_name", "output"))
            self.lost = False
            return

    def busy(self, t_ms: int) -> bool:
        with self._lock:
            return self._running

    def stop(self) -> None:
        """End the WAV playing now and drop the queued ones (barge-in)."""
        with self._lock:
            self._pending.clear()
            was, thread = self._running, self._thread
            self._running = False
            self._stop.set()
        if was:
            thread.join(timeout=2.0)
            self.stopped += 1

    def wait(self, timeout: float | None = None) -> None:
        """Block until every queued reply has been played (used at the end of a stream)."""
        if self._thread is not None:
            self._thread.join(timeout)
