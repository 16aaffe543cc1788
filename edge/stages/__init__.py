"""The boxes of the pipeline diagram, in the order a turn passes them: wake, vad, asr, nlu, dialog, reply, tts
(the stock store the dialog acts on is its own room, :mod:`edge.stock`)."""
