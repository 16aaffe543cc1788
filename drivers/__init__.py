"""Hardware and vendor runtimes only: audio capture/playback, NPU runtimes, sysfs sensors.

No product logic lives here; `edge` imports from `drivers`, never the other way round.
"""
