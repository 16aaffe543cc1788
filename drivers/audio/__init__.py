"""Audio at the edge of the product: reading/capturing any PCM format, converting it once to the
pipeline's one frame format (16 kHz, mono, int16, 1280 samples = 80 ms), and playback.

Modules: :mod:`~drivers.audio.convert` (the conversion), :mod:`~drivers.audio.wavfile` (WAV files),
:mod:`~drivers.audio.devices` (PortAudio devices, their native format, the device errors),
:mod:`~drivers.audio.capture` (live capture and the reconnect policy, ``ResilientCapture``),
:mod:`~drivers.audio.playback` (the speaker). The names below are the file-and-format API."""
from drivers.audio.convert import FRAME_SAMPLES, SAMPLE_RATE, FrameConverter, to_float32
from drivers.audio.wavfile import AudioFormatError, read_wav, wav_frames, write_wav

__all__ = [
    "FRAME_SAMPLES", "SAMPLE_RATE", "FrameConverter", "to_float32",
    "AudioFormatError", "read_wav", "wav_frames", "write_wav",
]
