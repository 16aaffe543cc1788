"""Resource governor: memory admission, a 30 % compute reserve, thermal levels with hysteresis,
idle unload of the LLM, power modes; status and metrics for ``edge status`` and ``/metrics``.
Callers import from the rooms:

- :mod:`edge.governor.admission` — memory admission (case C11): :func:`~edge.governor.admission.estimate`
  (weights + KV cache + pipeline overhead, :class:`~edge.governor.admission.MemoryEstimate`),
  :func:`~edge.governor.admission.admit` (≤ ``governor.mem_fraction`` of MemTotal and < MemAvailable;
  else a halved n_ctx, then a smaller model; :class:`~edge.governor.admission.Decision`,
  :class:`~edge.governor.admission.AdmissionError`), a model's size and shape from the manifest or
  its file (:func:`~edge.governor.admission.model_shape`,
  :func:`~edge.governor.admission.model_weights_bytes`). The GGUF facts themselves
  (``ModelShape``, ``kv_cache_bytes``) are the leaf :mod:`edge.llm.shape`.
- :mod:`edge.governor.threads` — the compute reserve: :func:`~edge.governor.threads.thread_plan`
  (LLM threads ≤ ``floor(fraction × cores)``, on the big cores of a big.LITTLE board; audio and the
  wake word on one little core). Pinning is :mod:`drivers.cpu`.
- :mod:`edge.governor.thermal` — per-zone thresholds and the level state machine
  (:class:`~edge.governor.thermal.ThermalLevels`: ``normal`` → ``warm`` → ``hot``, left one step at
  a time after a dwell below threshold − hysteresis) and :class:`~edge.governor.thermal.Limits`.
- :mod:`edge.governor.modes` — the level names and the power modes shared by the rooms above.
- :mod:`edge.governor.idle` — :class:`~edge.governor.idle.IdleUnloader`: unload after
  ``governor.idle_unload_s`` without use, reload on demand, the reload time for the turn's latency.
- :mod:`edge.governor.governor` — :class:`~edge.governor.governor.Governor`, which reads the
  board's signals (:mod:`drivers.sensors`) and ties the rooms together, and
  :func:`~edge.governor.governor.sensor_paths`.
- :mod:`edge.governor.status` — :func:`~edge.governor.status.format_status` and the metric figures.

Loading an LLM step under the governor (admission, thread cap, idle reload) is
:mod:`edge.llm.loader`.
"""
