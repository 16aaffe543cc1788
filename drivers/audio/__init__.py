"""Audio at the edge of the product: reading/capturing any PCM format, converting it once to the
pipeline's one frame format (16 kHz, mono, int16, 1280 samples = 80 ms), and playback."""
from drivers.audio.convert import FRAME_SAMPLES, SAMPLE_RATE, FrameConverter, to_float32
from drivers.audio.wavfile import AudioFormatError, read_wav, wav_frames, write_wav

__all__ = [
    "FRAME_SAMPLES", "SAMPLE_RATE", "FrameConverter", "to_float32",
    "AudioFormatError", "read_wav", "wav_frames", "write_wav",
]
