"""The live service: ``edge run`` without ``--input`` (what ``systemd/edge.service`` starts).

    run_service(settings, store, output_dir, emit) -> exit status

1. ``STATUS=loading models``: wake word, VAD, ASR, LLM, TTS (:func:`edge.loop.build.build_stages`).
2. ``STATUS=smoke inference``: one LLM token through the configured engine (:func:`smoke_inference`);
   a failure ends the process with status 1 (systemd restarts it; the journal says why).
3. ``READY=1`` with ``STATUS=ready: ...``: only now does systemd consider the service started.
4. Open the capture device. When there is none (a USB microphone or a codec that appears late, case
   C06) the process does *not* exit: it says ``waiting for capture device`` once (stderr and STATUS=),
   retries with a doubling delay (``service.capture_retry_initial_s`` → ``capture_retry_max_s``, 1 s → 5 s
   by default), and keeps the watchdog fed while it waits.
5. The audio loop: every frame goes to the pipeline; ``WATCHDOG=1`` is sent from this loop (paced to half
   of ``WatchdogSec``), so a hung loop gets the service restarted; ``STATUS=`` follows the pipeline's
   turn state (its ``state`` events: ``listening on <device>``, ``awake``, ``transcribing``,
   ``understanding``, ``speaking``, ``follow-up``; then ``; degraded: ...``). A device that stops delivering audio for
   ``capture_timeout_s`` counts as lost: back to step 4.
6. SIGTERM / SIGINT: ``STOPPING=1``, close the devices, exit 0.

All along, the capture counters (ring-buffer overflows, xruns, device losses and reopens) and the
turn state go to the service state file (:mod:`edge.service.runstate`, ``service.state_file``), which
``edge status`` and ``/metrics`` read.

Every pipeline event is also logged with journal fields (``TURN_ID``, ``STAGE``, ``LATENCY_MS``;
:mod:`edge.service.logs`).
"""
from __future__ import annotations

import logging
import os
import signal
import time
from pathlib import Path
from typing import Callable

from drivers.cpu import pinned
from edge import events as ev
from edge.errors import EdgeError
from edge.llm.chain import NoEngine
from edge.loop.stages import Stages, cpu_sets
from edge.loop.state import TurnState
from edge.service import logs
from edge.service.notify import Notifier
from edge.service.runstate import ServiceState, state_path


class SmokeError(EdgeError):
    """The one-token smoke inference failed; READY=1 is not sent."""


def smoke_inference(stages: Stages) -> str:
    """One token through the LLM the stages use (:meth:`edge.llm.base.LlmEngine.smoke`; a chain
    smoke-tests each step as it brings it up); returns a short description for the READY line
    ("llamacpp:<model> passed its smoke inference").

    Raises:
        SmokeError: the engine failed; the message says which and why.
    """
    llm = stages.understanding.llm
    if llm is None:
        return "no LLM configured (grammar path only)"
    try:
        llm.smoke()
    except NoEngine:  # the grammar path still answers the stock commands: serve, degraded
        return "degraded: no LLM step of the chain passed its smoke inference (grammar path only)"
    except Exception as e:
        raise SmokeError(f"LLM smoke inference ({llm.name}) failed: {type(e).__name__}: {e}") from e
    return f"{llm.serving} passed its smoke inference"


class Backoff:
    """Retry delays that double from ``initial`` up to ``maximum`` seconds; :meth:`reset` starts over."""

    def __init__(self, initial: float, maximum: float):
        self.initial, self.maximum = float(initial), float(max(maximum, initial))
        self.attempts = 0
        self._next = self.initial

    def next(self) -> float:
        d = self._next
        self.attempts += 1
        self._next = min(self._next * 2, self.maximum)
        return d

    def reset(self) -> None:
        self.attempts = 0
        self._next = self.initial


def use_installed_bundle(settings) -> Path | None:
    """Point ``$EDGE_MANIFEST`` at ``<models.dir>/current/manifest.yaml`` (a model bundle installed with
    ``edge models install``) when it exists and nothing else is set; returns that path or None."""
    if os.environ.get("EDGE_MANIFEST"):
        return None
    models_dir = getattr(getattr(settings, "models", None), "dir", None)
    if models_dir is None:
        return None
    m = Path(models_dir) / "current" / "manifest.yaml"
    if m.is_file():
        os.environ["EDGE_MANIFEST"] = str(m)
        return m
    return None


def _stderr(msg: str) -> None:
    from edge.loop.build import stderr

    stderr(msg)


def run_service(settings, store, output_dir: Path, emit: Callable[[ev.Event], None], *,
                notifier: Notifier | None = None, log: logging.Logger | None = None,
                state: ServiceState | None = None) -> int:
    """Run the live service until SIGTERM/SIGINT; returns the exit status (0, or 1 when the smoke
    inference failed). See the module docstring for the sequence."""
    from drivers.audio.device import AudioDeviceError, Capture, Playback
    from edge.loop.build import build_stages, run_frames
    from edge.stages.tts.speaker import DeviceSpeaker

    notifier = notifier or Notifier()
    log = log or logs.setup()
    journal = any(getattr(h, "_edge", False) and type(h).__name__ == "JournalHandler" for h in log.handlers)
    event_level = logging.INFO if journal else logging.DEBUG
    svc = settings.service
    run_state = (state or ServiceState(state_path(settings), svc.state_interval_s)).start()

    def on_term(signum, _frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    old = {s: signal.signal(s, on_term) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        bundle = use_installed_bundle(settings)
        if bundle:
            log.info("models from the installed bundle %s", bundle)
        notifier.status("loading models")
        t0 = time.monotonic()
        stages = build_stages(settings, store)
        log.info("models loaded in %.1f s", time.monotonic() - t0)
        if svc.smoke_inference:
            notifier.status("smoke inference")
            try:
                how = smoke_inference(stages)
            except SmokeError as e:
                log.error("%s", e, extra={"STAGE": "smoke"})
                _stderr(f"edge: {e}")
                notifier.status(f"failed: {e}")
                return 1
        else:
            how = "skipped (service.smoke_inference: false)"
        notifier.ready(f"ready: models loaded, smoke inference {how}")
        log.info("ready: smoke inference %s", how)

        state = {"turn": TurnState.LISTENING, "device": ""}
        llm_note = "no LLM, grammar path only" if how.startswith("degraded") else ""

        def status_line() -> str:
            turn = state["turn"]
            base = f"listening on {state['device']}" if turn is TurnState.LISTENING else turn.status
            notes = [n for n in (state.get("degraded"), llm_note) if n]
            return base + (f"; degraded: {'; '.join(notes)}" if notes else "")

        def emit_and_log(e: ev.Event) -> None:
            emit(e)
            logs.log_event(log, e, event_level)
            run_state.event(e)
            if isinstance(e, ev.StateChange):  # the pipeline's turn state
                state["turn"] = TurnState(e.state)
            notifier.status(status_line())

        audio_cpus, _ = cpu_sets(stages.governor)
        retry = Backoff(svc.capture_retry_initial_s, svc.capture_retry_max_s)
        waiting_said = False
        while True:
            try:
                with pinned(audio_cpus):  # PortAudio's callback thread starts here and keeps the mask
                    cap = Capture(settings.audio.input_device, frames_per_buffer=settings.audio.chunk_samples,
                                  ring_ms=settings.audio.ring_ms)
            except AudioDeviceError as e:
                run_state.open_failed(e)
                if not waiting_said:
                    _stderr(f"waiting for capture device: {e}")
                    log.warning("waiting for capture device: %s", e, extra={"STAGE": "capture"})
                    notifier.status("waiting for capture device")
                    waiting_said = True
                delay = retry.next()
                log.debug("capture device: attempt %d failed; next try in %.2f s", retry.attempts, delay,
                          extra={"STAGE": "capture"})
                notifier.sleep(delay)
                continue
            retry.reset()
            waiting_said = False
            run_state.opened(cap)
            run_state.turn = TurnState.LISTENING.value  # a new pipeline starts listening
            try:
                player = Playback()
                state.pop("degraded", None)
            except AudioDeviceError as e:
                player = None
                state["degraded"] = "no playback device, replies are only written as WAV files"
                log.warning("no playback device: %s", e, extra={"STAGE": "playback"})
            state["device"] = cap.device_name
            state["turn"] = TurnState.LISTENING
            _stderr(f"listening on {cap.device_name} ({cap.rate} Hz, {cap.channels} ch); Ctrl-C to stop")
            notifier.status(status_line())
            lost: list[Exception] = []

            def frames(cap=cap):
                try:
                    for frame in cap.frames(timeout=svc.capture_timeout_s):
                        notifier.watchdog()
                        run_state.tick()
                        yield frame
                except AudioDeviceError as err:
                    lost.append(err)

            # replies play in a thread while frames keep flowing; the pipeline ignores wake words
            # while the box speaks and for wake.guard_ms after (C03), or takes them as a barge-in
            # when audio.echo_cancellation is set
            speaker = DeviceSpeaker(player) if player is not None else None

            try:
                run_frames(frames(), stages, settings, output_dir, emit_and_log, speaker=speaker)
            finally:
                if speaker is not None:
                    speaker.stop()  # no PortAudio stream may be open when PortAudio is terminated
                cap.close()
                run_state.closed(cap, lost[0] if lost else None)
                if player is not None:
                    player.close()
            if lost:
                _stderr(f"capture device lost: {lost[0]}")
                log.warning("capture device lost: %s", lost[0], extra={"STAGE": "capture"})
    except KeyboardInterrupt as e:
        notifier.stopping(f"stopping ({e or 'interrupt'})")
        log.info("stopping (%s)", e or "interrupt")
        return 0
    finally:
        run_state.stop("stopped")
        for s, h in old.items():
            signal.signal(s, h)
