"""The boxes of the pipeline diagram, in the order a turn passes them: wake, vad, asr, nlu, dialog, store, reply, tts."""
