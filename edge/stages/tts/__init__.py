"""Speech out: the TTS engine, sentence streaming, the speaker."""
