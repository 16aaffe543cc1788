"""The live service: ``edge run`` without ``--input`` (what ``systemd/edge.service`` starts).

    run_service(settings, store, output_dir, emit) -> exit status

1. ``STATUS=loading models``: wake word, VAD, ASR, LLM, TTS (:func:`edge.loop.build.build_stages`).
2. ``STATUS=smoke inference``: one LLM token through the configured engine (:func:`smoke_inference`);
   a failure ends the process with status 1 (systemd restarts it; the journal says why).
3. ``READY=1`` with ``STATUS=ready: ...``: only now does systemd consider the service started.
4. The capture device, through :class:`drivers.audio.capture.ResilientCapture` (the one reconnect
   policy). When there is none (a USB microphone or a codec that appears late, case C06) the process
   does *not* exit: it says ``waiting for capture device`` once (stderr and STATUS=), retries with a
   doubling delay (``service.capture_retry_initial_s`` → ``capture_retry_max_s``, 1 s → 5 s by
   default), and keeps the watchdog fed while it waits.
5. The audio loop, one pipeline and one playback device per capture device: every frame goes to the
   pipeline; ``WATCHDOG=1`` is sent from this loop (paced to half of ``WatchdogSec``), so a hung loop
   gets the service restarted; ``STATUS=`` follows the pipeline's turn state (its ``state`` events:
   ``listening on <device>``, ``awake``, ``transcribing``, ``understanding``, ``speaking``,
   ``follow-up``; then ``; degraded: ...``). A device whose stream ends or that delivers no audio for
   ``capture_timeout_s`` counts as lost (case C05): ``capture device lost: ...`` once, then back to
   step 4 with the same back-off; the device that comes back gets a frame converter for its rate.
6. SIGTERM / SIGINT: ``STOPPING=1``, close the devices (and the Wyoming server), exit 0.

With a ``wyoming:`` section in the config, the Wyoming server (:mod:`edge.service.wyoming`) runs in
the same process from step 3 on, on its own thread and event loop, over the same loaded stages: one
recognizer, one speech engine, one store, one Understanding (its wake-word streams get their own
detectors). Each of those stages has a :class:`~edge.service.wyoming.locks.StageLock`: a Wyoming
request takes the locks of the stages it uses, and the voice loop's turn holds all of them from the
wake word until it is back to listening, so the two never use one stage at the same time (a Wyoming
request that comes during a voice turn waits for its end, and a wake word during a Wyoming request
waits for that request). A ``handle`` turn's events go to the same event output and journal as a
voice turn's, its records to the same store. A ``wyoming.uri`` that cannot be bound is logged and
the voice loop runs without it.

All along, the capture counters (ring-buffer overflows, xruns, device losses and reopens) and the
turn state go to the service state file (:mod:`edge.service.runstate`, ``service.state_file``), which
``edge status`` and ``/metrics`` read.

Every pipeline event is also logged with journal fields (``TURN_ID``, ``STAGE``, ``LATENCY_MS``;
:mod:`edge.service.logs`); so are the audio drivers' records (``microphone lost``, ``microphone
back``, capture overflows), with ``STAGE=capture``.
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from drivers.audio.capture import Capture, CaptureObserver, ResilientCapture
from drivers.audio.devices import AudioDeviceError
from drivers.audio.playback import Playback
from drivers.cpu import pinned
from edge import events as ev
from edge.errors import EdgeError
from edge.llm.chain import NoEngine
from edge.loop.build import build_stages, run_frames, stderr
from edge.loop.stages import Stages, cpu_sets
from edge.loop.state import TurnState
from edge.service import logs
from edge.service.notify import Notifier
from edge.service.runstate import ServiceState, state_path
from edge.service.wyoming.box import Box
from edge.service.wyoming.locks import StageLocks
from edge.service.wyoming.server import BackgroundServer
from edge.stages.asr.worker import AsrWorker
from edge.stages.tts.speaker import DeviceSpeaker


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


def use_installed_bundle(settings) -> Path | None:
    """Point ``$EDGE_MANIFEST`` at ``<models.dir>/current/manifest.yaml`` (a model bundle installed with
    ``edge models install``) when it exists and nothing else is set; returns that path or None."""
    if os.environ.get("EDGE_MANIFEST"):
        return None
    models_dir = settings.models.dir
    m = Path(models_dir) / "current" / "manifest.yaml"
    if m.is_file():
        os.environ["EDGE_MANIFEST"] = str(m)
        return m
    return None


def turn_reporter(emit: Callable[[ev.Event], None], log: logging.Logger, event_level: int,
                  run_state: ServiceState, notifier: Notifier, llm_note: str):
    """The turn state shown in STATUS= → ``(state, status_line, emit_and_log)``: ``state`` holds
    ``turn`` (the pipeline's :class:`~edge.loop.state.TurnState`, from its ``state`` events),
    ``device`` and an optional ``degraded`` note; ``emit_and_log`` passes each pipeline event on
    (``emit``, the log, the state file) and updates STATUS=."""
    state = {"turn": TurnState.LISTENING, "device": ""}

    def status_line() -> str:
        turn = state["turn"]
        base = f"listening on {state['device']}" if turn is TurnState.LISTENING else turn.status
        notes = [n for n in (state.get("degraded"), llm_note) if n]
        return base + (f"; degraded: {'; '.join(notes)}" if notes else "")

    def emit_and_log(e: ev.Event) -> None:
        emit(e)
        logs.log_event(log, e, event_level)
        run_state.event(e)
        if isinstance(e, ev.StateChange):
            state["turn"] = TurnState(e.state)
        notifier.status(status_line())

    return state, status_line, emit_and_log


class CaptureReport(CaptureObserver):
    """What the service makes of the capture's news: the state file, stderr and STATUS= lines, and
    watchdog pings while it waits for a device.

    Args:
        notifier, run_state: the service's :class:`Notifier` and :class:`ServiceState`.
        turn, status_line: from :func:`turn_reporter` (the device goes into ``turn``).
    """

    def __init__(self, notifier: Notifier, run_state: ServiceState, turn: dict, status_line: Callable[[], str]):
        self.notifier, self.run_state = notifier, run_state
        self.turn, self.status_line = turn, status_line

    def open_failed(self, err: AudioDeviceError, attempt: int, next_try_s: float) -> None:
        self.run_state.open_failed(err)
        if attempt == 1:  # said once per wait, however many attempts it takes
            stderr(f"waiting for capture device: {err}")
            self.notifier.status("waiting for capture device")

    def found(self, cap) -> None:
        self.run_state.opened(cap)
        self.run_state.turn = TurnState.LISTENING.value  # a new pipeline starts listening
        self.turn.update(device=cap.device_name, turn=TurnState.LISTENING)
        stderr(f"listening on {cap.device_name} ({cap.rate} Hz, {cap.channels} ch); Ctrl-C to stop")
        self.notifier.status(self.status_line())

    def lost(self, cap, err: Exception) -> None:
        self.run_state.closed(cap, err)
        stderr(f"capture device lost: {err}")
        self.notifier.status("waiting for capture device")

    def closed(self, cap) -> None:
        self.run_state.closed(cap)

    def idle(self) -> None:
        self.notifier.watchdog()


class DriverLog(logging.Handler):
    """Hands the audio drivers' records (``drivers.*`` loggers) to the service's logger, with the
    driver module's name (``capture``, ``playback``) as their ``STAGE`` journal field."""

    def __init__(self, target: logging.Logger):
        super().__init__()
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        if not getattr(record, "STAGE", None):
            record.STAGE = record.name.rpartition(".")[2]
        self.target.handle(record)


@contextlib.contextmanager
def driver_logs(log: logging.Logger) -> Iterator[None]:
    """For the block, the ``drivers`` loggers go where ``log`` goes (the journal or stderr), at its
    level, instead of Python's last-resort stderr output."""
    drivers = logging.getLogger("drivers")
    handler = DriverLog(log)
    saved = drivers.level, drivers.propagate
    drivers.addHandler(handler)
    drivers.setLevel(log.getEffectiveLevel())
    drivers.propagate = False
    try:
        yield
    finally:
        drivers.removeHandler(handler)
        drivers.setLevel(saved[0])
        drivers.propagate = saved[1]


def watched(frames: Iterable[np.ndarray], notifier: Notifier, run_state: ServiceState) -> Iterator[np.ndarray]:
    """``frames`` passed on, with a (paced) watchdog ping and the state file's frame time for each."""
    for frame in frames:
        notifier.watchdog()
        run_state.tick()
        yield frame


class LiveService:
    """The steps of one run of the live service, which :func:`run_service` takes in order:
    :meth:`load_models`, :meth:`smoke`, :meth:`ready`, :meth:`listen` (until SIGTERM/SIGINT) and
    :meth:`shut_down`."""

    def __init__(self, settings, store, output_dir: Path, emit: Callable[[ev.Event], None], notifier: Notifier,
                 log: logging.Logger, run_state: ServiceState):
        self.settings, self.store, self.output_dir = settings, store, Path(output_dir)
        self.notifier, self.log, self.run_state = notifier, log, run_state
        self.event_level = logging.INFO if logs.writes_to_journal(log) else logging.DEBUG
        self.stages = None
        self.how = ""  # what the smoke inference said
        self.locks = StageLocks()  # shared with the Wyoming server, when there is one
        self.wyoming: BackgroundServer | None = None
        emitting = threading.Lock()  # the voice loop and Wyoming both write events: one line at a time

        def emit_one(e: ev.Event) -> None:
            with emitting:
                emit(e)

        self.emit = emit_one

    def load_models(self) -> None:
        """Step 1: the stages, from the installed model bundle when there is one."""
        bundle = use_installed_bundle(self.settings)
        if bundle:
            self.log.info("models from the installed bundle %s", bundle)
        self.notifier.status("loading models")
        t0 = time.monotonic()
        self.stages = build_stages(self.settings, self.store)
        self.log.info("models loaded in %.1f s", time.monotonic() - t0)
        if isinstance(self.stages.asr, AsrWorker):  # asr.worker.loop: process
            self.run_state.asr_worker = self.stages.asr.status

    def smoke(self) -> bool:
        """Step 2: the smoke inference (unless ``service.smoke_inference`` is off); False when it
        failed (said in the log, on stderr and in STATUS=)."""
        if not self.settings.service.smoke_inference:
            self.how = "skipped (service.smoke_inference: false)"
            return True
        self.notifier.status("smoke inference")
        try:
            self.how = smoke_inference(self.stages)
        except SmokeError as e:
            self.log.error("%s", e, extra={"STAGE": "smoke"})
            stderr(f"edge: {e}")
            self.notifier.status(f"failed: {e}")
            return False
        return True

    def ready(self) -> None:
        """Step 3: READY=1."""
        self.notifier.ready(f"ready: models loaded, smoke inference {self.how}")
        self.log.info("ready: smoke inference %s", self.how)

    def serve_wyoming(self) -> None:
        """With a ``wyoming:`` section: the Wyoming server on its own thread over the loaded stages,
        behind the stage locks (module doc). A failure to listen is logged; the voice loop goes on."""
        if self.settings.wyoming is None:
            return
        box = Box(self.settings, self.stages, self.wyoming_event, locks=self.locks, share_wake=False)
        if box.worker is not None:  # the loop's own, or the Wyoming service's (asr.worker.wyoming)
            self.run_state.asr_worker = box.worker.status
        try:
            self.wyoming = BackgroundServer(box, self.settings).start()
        except OSError as e:
            box.close()
            self.log.error("wyoming: %s; the voice loop runs without it", e, extra={"STAGE": "wyoming"})
            stderr(f"edge: wyoming: {e}; the voice loop runs without it")
            return
        stderr(f"wyoming on {self.wyoming.server.uri}")

    def wyoming_event(self, e: ev.Event) -> None:
        """A Wyoming ``handle`` turn's event: the same output and journal as a voice turn's."""
        self.emit(e)
        logs.log_event(self.log, e, self.event_level)

    def stop_wyoming(self) -> None:
        """Close the Wyoming server (its connections, then its stages' worker threads)."""
        if self.wyoming is not None:
            self.wyoming.stop()
            self.wyoming.server.box.close()
            self.wyoming = None

    def voice_turns(self, emit_and_log: Callable[[ev.Event], None]) -> Callable[[ev.Event], None]:
        """``emit_and_log`` with the stage locks held for each voice turn: taken when the turn state
        leaves ``listening`` (the wake word), given back when it returns there."""
        def emit(e: ev.Event) -> None:
            if isinstance(e, ev.StateChange) and e.previous == TurnState.LISTENING.value:
                self.locks.begin_turn("voice")
            emit_and_log(e)
            if isinstance(e, ev.StateChange) and e.state == TurnState.LISTENING.value:
                self.locks.end_turn()

        return emit

    def listen(self) -> None:
        """Steps 4 and 5: wait for the capture device, listen on it until it is lost, again; ends
        only by an exception (KeyboardInterrupt from SIGTERM/SIGINT)."""
        svc, audio = self.settings.service, self.settings.audio
        llm_note = "no LLM, grammar path only" if self.how.startswith("degraded") else ""
        turn, status_line, emit_and_log = turn_reporter(self.emit, self.log, self.event_level, self.run_state,
                                                        self.notifier, llm_note)
        emit_and_log = self.voice_turns(emit_and_log)
        cpus, _ = cpu_sets(self.stages.governor)

        def open_capture() -> Capture:
            with pinned(cpus):  # PortAudio's callback thread starts here and keeps the mask
                return Capture(audio.input_device, frames_per_buffer=audio.chunk_samples, ring_ms=audio.ring_ms)

        report = CaptureReport(self.notifier, self.run_state, turn, status_line)
        with ResilientCapture(audio.input_device, opener=open_capture, stall_timeout_s=svc.capture_timeout_s,
                              retry_initial_s=svc.capture_retry_initial_s, retry_max_s=svc.capture_retry_max_s,
                              wait_for_device=True, observer=report) as cap:
            while cap.open():
                self.listen_on(cap, turn, emit_and_log)

    def listen_on(self, cap: ResilientCapture, turn: dict, emit_and_log: Callable[[ev.Event], None]) -> None:
        """One capture device: a playback device beside it and a pipeline over its frames, until it
        is lost."""
        try:
            player = Playback()
            turn.pop("degraded", None)
        except AudioDeviceError as e:
            player = None
            turn["degraded"] = "no playback device, replies are only written as WAV files"
            self.log.warning("no playback device: %s", e, extra={"STAGE": "playback"})
        # replies play in a thread while frames keep flowing; the pipeline ignores wake words
        # while the box speaks and for wake.guard_ms after (C03), or takes them as a barge-in
        # when audio.echo_cancellation is set
        speaker = DeviceSpeaker(player) if player is not None else None
        try:
            run_frames(watched(cap.device_frames(), self.notifier, self.run_state), self.stages, self.settings,
                       self.output_dir, emit_and_log, speaker=speaker, lost_audio=lambda: cap.overflows)
        finally:
            self.locks.end_turn()  # a turn cut off by the device loss holds no stage any more
            if speaker is not None:
                speaker.stop()  # no PortAudio stream may be open when PortAudio is terminated
            if player is not None:
                player.close()

    def shut_down(self, why: BaseException) -> int:
        """Step 6 (the devices are closed by then): STOPPING=1; returns the exit status 0."""
        self.notifier.stopping(f"stopping ({why or 'interrupt'})")
        self.log.info("stopping (%s)", why or "interrupt")
        return 0


def _interrupt(signum, _frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def run_service(settings, store, output_dir: Path, emit: Callable[[ev.Event], None], *,
                notifier: Notifier | None = None, log: logging.Logger | None = None,
                state: ServiceState | None = None) -> int:
    """Run the live service until SIGTERM/SIGINT; returns the exit status (0, or 1 when the smoke
    inference failed). See the module docstring for the sequence."""
    notifier = notifier or Notifier()
    log = log or logs.setup()
    run_state = (state or ServiceState(state_path(settings), settings.service.state_interval_s)).start()
    service = LiveService(settings, store, output_dir, emit, notifier, log, run_state)
    old = {s: signal.signal(s, _interrupt) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with driver_logs(log):
            service.load_models()
            if not service.smoke():
                return 1
            service.ready()
            service.serve_wyoming()
            service.listen()
        return 0
    except KeyboardInterrupt as e:
        return service.shut_down(e)
    finally:
        service.stop_wyoming()
        if service.stages is not None and isinstance(service.stages.asr, AsrWorker):
            service.stages.asr.close()  # its child ends now, not at interpreter exit
        run_state.stop("stopped")
        for s, h in old.items():
            signal.signal(s, h)
