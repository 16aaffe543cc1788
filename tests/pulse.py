"""A private PulseAudio server with a null sink, for testing live capture/playback without a sound card.

What works here (Debian 12, pulseaudio 16.1, libasound2-plugins, running as root, no /dev/snd):

* Daemon, as root, in the foreground, with everything it writes kept under one temp dir::

      HOME=<d>/home XDG_RUNTIME_DIR=<d>/run PULSE_RUNTIME_PATH=<d>/run/pulse PULSE_STATE_PATH=<d>/state \\
      pulseaudio --daemonize=no --system=false -n --file=<d>/default.pa --exit-idle-time=-1 \\
          --disallow-exit --disallow-module-loading --use-pid-file=false --realtime=false \\
          --high-priority=false --disable-shm=true --log-target=stderr

  ``default.pa``::

      load-module module-native-protocol-unix socket=<d>/native auth-anonymous=1
      load-module module-null-sink sink_name=edge_null rate=48000 channels=2
      set-default-sink edge_null
      set-default-source edge_null.monitor

  ``--system=false`` lets root run a per-user daemon (it only warns); ``-n`` skips
  /etc/pulse/default.pa (which would probe ALSA cards, D-Bus, X11). The D-Bus warning
  "Unable to contact D-Bus" is harmless. ``auth-anonymous=1`` means no cookie is needed.
  The socket lives in a short ``/tmp/edge-pa-*`` dir, not in pytest's ``tmp_path``, because a
  unix socket path must be < 108 bytes.
* Clients (pactl, paplay, parec and PortAudio through ALSA) reach it with
  ``PULSE_SERVER=unix:<d>/native``.
* PortAudio → ALSA → PulseAudio: the ``pulseaudio`` package installs the ALSA hook
  ``/etc/alsa/conf.d/99-pulse.conf`` (→ ``/usr/share/alsa/pulse-alsa.conf``) which makes ALSA's
  ``default`` PCM ``type pulse`` *when the server answers*, so ``PULSE_SERVER`` alone is enough on
  this machine. For determinism (a client-only image may lack that hook) the helper also writes
  ``$HOME/.asoundrc`` (HOME is the temp home) with ``pcm.!default { type pulse }`` /
  ``ctl.!default { type pulse }``; the ALSA pulse plugin itself is from libasound2-plugins.
  PortAudio then lists two devices, ``pulse`` and ``default`` (32 in/32 out channels, 44100 Hz);
  ``default`` is the default input and output; capturing from it records ``edge_null.monitor``,
  i.e. whatever is played into the null sink (by ``paplay`` or by ``Playback``).
* PortAudio/ALSA read this environment when ``pyaudio.PyAudio()`` is created, so the code under
  test must run in a child process started with the yielded ``env`` (or the environment must be
  set before the first ``PyAudio()`` of the process).

Pitfalls found:

* An idle null sink renders in 2 s blocks, so a new recording stream (parec as well as PortAudio)
  gets its first data only after ~1.5-2 s. The helper therefore keeps a silent
  ``pacat --playback < /dev/zero`` stream playing into the null sink (like a sound card whose
  clock always runs) and then does ``pactl suspend-sink edge_null 1; ... 0`` once, because the
  sink only switches to the keep-alive's 50 ms latency after finishing the 2 s block it is in
  (a resume restarts its clock). With that, a capture's first chunk arrives in < 0.1 s and
  fixture start-up takes ~0.1 s. Mixing zeros changes nothing in the captured signal.
* The monitor only carries what is rendered while the recorder is connected: start playing only
  after the capture delivers its first chunk, or the start of the utterance is lost.
"""
from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator

SINK = "edge_null"
MONITOR = f"{SINK}.monitor"
SINK_RATE = 48_000

_ASOUNDRC = """\
# written by tests/pulse.py: ALSA's default PCM/control go to PulseAudio (PULSE_SERVER)
pcm.!default {
    type pulse
}
ctl.!default {
    type pulse
}
"""


class PulseUnavailable(RuntimeError):
    """The pulseaudio binary is not installed (callers in tests turn this into a skip)."""


def _tail(path: Path, n: int = 15) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    return ""


def _stop(proc: subprocess.Popen | None, timeout: float = 5.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


@contextlib.contextmanager
def pulse_server(tmp_path: str | Path | None = None, *, keepalive: bool = True,
                 write_asoundrc: bool = True, start_timeout: float = 10.0,
                 rate: int = SINK_RATE) -> Iterator[dict[str, str]]:
    """Start a private PulseAudio daemon whose default sink is a null sink (``edge_null``, 48 kHz
    stereo) and default source is its monitor (``edge_null.monitor``).

    Args:
        tmp_path: where logs and the temp HOME go (pytest's ``tmp_path``); a temp dir if None.
        keepalive: keep a silent playback stream on the sink so recordings start at once (see the
            module docstring).
        write_asoundrc: write ``$HOME/.asoundrc`` routing ALSA ``default`` to PulseAudio.
        start_timeout: seconds to wait for ``pactl info`` to answer.
        rate: the null sink's sample rate in Hz (a sound card's native rate).
    Yields:
        ``env``: a full environment (``os.environ`` + ``PULSE_SERVER``, ``HOME``,
        ``XDG_RUNTIME_DIR``, ``PULSE_RUNTIME_PATH``, ``PULSE_STATE_PATH``, ``JACK_NO_START_SERVER``,
        ``EDGE_PULSE_LOG``) to pass to ``subprocess`` as ``env=``. ``os.environ`` of this process is
        not changed.
    Raises:
        PulseUnavailable: no ``pulseaudio`` binary.
        RuntimeError: the daemon did not come up (the message holds its log tail).
    """
    exe = shutil.which("pulseaudio")
    if exe is None:
        raise PulseUnavailable("the 'pulseaudio' binary is not installed (apt-get install pulseaudio)")
    for tool in ("pactl", "pacat"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"'{tool}' is missing; apt-get install pulseaudio-utils")

    base = Path(tmp_path) if tmp_path is not None else Path(tempfile.mkdtemp(prefix="edge-pulse-"))
    base.mkdir(parents=True, exist_ok=True)
    short = Path(tempfile.mkdtemp(prefix="edge-pa-", dir="/tmp"))  # socket path < 108 bytes
    home, run, state = base / "pulse-home", short / "run", base / "pulse-state"
    for d in (home, run, run / "pulse", state):
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, 0o700)
    socket = short / "native"
    log = base / "pulseaudio.log"
    script = base / "default.pa"
    script.write_text(
        f"load-module module-native-protocol-unix socket={socket} auth-anonymous=1\n"
        f"load-module module-null-sink sink_name={SINK} rate={rate} channels=2\n"
        f"set-default-sink {SINK}\n"
        f"set-default-source {MONITOR}\n")
    if write_asoundrc:
        (home / ".asoundrc").write_text(_ASOUNDRC)

    env = dict(os.environ)
    env.update({
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(run),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "PULSE_RUNTIME_PATH": str(run / "pulse"),
        "PULSE_STATE_PATH": str(state),
        "PULSE_SERVER": f"unix:{socket}",
        "JACK_NO_START_SERVER": "1",
        "EDGE_PULSE_LOG": str(log),
    })
    for var in ("PULSE_SINK", "PULSE_SOURCE", "PULSE_COOKIE", "ALSA_CONFIG_PATH", "DISPLAY"):
        env.pop(var, None)

    daemon = keeper = None
    logf = open(log, "wb")
    try:
        daemon = subprocess.Popen(
            [exe, "--daemonize=no", "--system=false", "-n", f"--file={script}", "--exit-idle-time=-1",
             "--disallow-exit", "--disallow-module-loading", "--use-pid-file=false", "--realtime=false",
             "--high-priority=false", "--disable-shm=true", "--log-target=stderr", "--log-level=notice"],
            env=env, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + start_timeout
        while True:
            if daemon.poll() is not None:
                raise RuntimeError(f"pulseaudio exited with {daemon.returncode} at start-up; log {log}:\n"
                                   f"{_tail(log)}")
            r = subprocess.run(["pactl", "info"], env=env, capture_output=True, text=True, timeout=5)
            if r.returncode == 0 and f"Default Source: {MONITOR}" in r.stdout:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"pulseaudio did not answer `pactl info` within {start_timeout} s "
                                   f"({r.stderr.strip() or r.stdout.strip()}); log {log}:\n{_tail(log)}")
            time.sleep(0.05)
        if keepalive:
            with open("/dev/zero", "rb") as zero:  # endless silence
                keeper = subprocess.Popen(
                    ["pacat", "--playback", "--raw", "--format=s16le", f"--rate={rate}", "--channels=2",
                     "--latency-msec=50", f"--device={SINK}", "--client-name=edge-keepalive",
                     "--stream-name=keepalive-silence"],
                    env=env, stdin=zero, stdout=subprocess.DEVNULL, stderr=logf)
            _warm_up(env, keeper, log)
        yield env
    finally:
        _stop(keeper)
        _stop(daemon)
        logf.close()
        shutil.rmtree(short, ignore_errors=True)


def _warm_up(env: dict[str, str], keeper: subprocess.Popen, log: Path, timeout: float = 6.0) -> None:
    """Make the null sink render in small blocks now, then check that a probe recording of the
    monitor gets data.

    The sink adopts the keep-alive's low latency only after finishing its current idle block (up to
    2 s); suspending and resuming it restarts its clock at once. From then on, while the keep-alive
    plays, new recordings start within ~10 ms."""
    deadline = time.monotonic() + timeout
    while "edge-keepalive" not in subprocess.run(["pactl", "list", "sink-inputs"], env=env,
                                                 capture_output=True, text=True).stdout:
        if keeper.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the keep-alive stream did not connect; log {log}:\n{_tail(log)}")
        time.sleep(0.02)
    for flag in ("1", "0"):
        subprocess.run(["pactl", "suspend-sink", SINK, flag], env=env, check=True, capture_output=True)
    probe = subprocess.Popen(["parec", "--raw", "--latency-msec=20", f"--device={MONITOR}"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        ready, _, _ = select.select([probe.stdout], [], [], timeout)
        if not ready or not probe.stdout.read1(64):
            state = "exited" if keeper.poll() is not None else "running"
            raise RuntimeError(f"the monitor {MONITOR} delivered nothing within {timeout} s (keep-alive "
                               f"{state}); log {log}:\n{_tail(log)}")
    finally:
        _stop(probe)
        probe.stdout.close()
