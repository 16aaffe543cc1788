"""``edge bench``: speed, memory and heat of the LLM and of the voice loop, in one run (issue 8).

    edge bench [--model NAME] [--runs N] [--max-tokens N] [--json] [--out DIR] [--no-loop]
               [--sessions DIR] [--llm-turns N] [--config FILE] [--board NAME]

What one run measures, and how:

1. **LLM, our engine path** (:class:`edge.llm.llamacpp.LlamaCppEngine` through
   :func:`edge.llm.base.generate`): time to first token (TTFT, ms, from the call to the first
   sampled token, prompt templating and prefill included), decode rate (tokens/s after the first
   token), peak resident memory (``VmHWM``, MiB), device temperature before and after (the
   hottest thermal zone, °C; ``null`` without zones), power (W, where a hwmon ``power*_input``
   exists; ``null`` otherwise). At least ``MIN_RUNS`` runs are asked for; the headline decode
   rate is the **median of the second half** of the runs, because boards throttle.
2. **Side by side**, in the same run, same model file, prompt, ``n_ctx``, threads, ``max_tokens``,
   sampling (temperature, seed, top-k/top-p/min-p, repeat penalty): plain llama-cpp-python
   (``Llama(...).create_chat_completion(stream=True)``) against our engine path. Each side runs in
   its **own child process** (so each ``VmHWM`` is that side's alone), both loaded at once, and the
   runs are interleaved A B A B … so machine noise hits both alike. Every figure is also given as
   a ratio ours ÷ plain. Run *i* of both sides asks question ``PROMPTS[i % len(PROMPTS)]`` after
   the same system prompt: the first run of each side is a cold prefill, later runs reuse the
   system prompt's KV cache (as a device does from its second question on).
3. **Memory-bandwidth ceiling**: a ``numpy.copyto`` of a ``BANDWIDTH_MIB`` MiB array, best of
   ``BANDWIDTH_REPEATS``; bytes moved are counted as **2 × size** (read + write, the STREAM
   "copy" convention), in GB/s (10^9 bytes/s). ``ceiling tokens/s = bandwidth ÷ GGUF file bytes``:
   the decode rate if every token streamed all weights from memory once (an upper bound: the
   token-embedding table is read one row per token, and a single-threaded copy may under-state
   what all cores together can pull). The fraction of it that decode reaches is reported.
4. **Throttling** is flagged when the second half's median decode rate is more than
   ``THROTTLE_DROP`` below the first half's (competing load on the machine looks the same:
   the result keeps the load average and temperatures to tell them apart).
5. **Voice loop** per stage over the shared sessions (``../shared/audio/sessions``, one fresh
   store per session, models loaded once): wake-word CPU time per 80 ms frame
   (``time.process_time`` around :meth:`edge.stages.wake.WakeWord.process`, all threads of the process),
   recognition real-time factor (:attr:`edge.stages.asr.base.Recognition.real_time_factor`), and the
   pipeline's own ``turn_end`` latencies: endpoint → transcript, transcript → intent, intent →
   first audio (the reply WAV written by TTS; ``intent_to_reply_audio_ms``), total — for the
   grammar path and the LLM path separately (by the intent's ``source``). The LLM path gets
   ``--llm-turns`` more turns from text through :meth:`edge.stages.nlu.understand.Understanding.understand`
   (no audio: they add transcript → intent and intent → first audio only). The whole-loop
   real-time factor per session (wall ÷ audio time, formerly ``bench/loop_rtf.py``) is kept too.

Results: ``bench/results/bench-<date>T<HHMM>-<machine>-<model>.json`` and a ``.png`` chart of the
same name. The JSON holds the machine (platform, CPU model, cores, RAM), the model (id, file,
bytes, SHA-256 prefix), the commit (``git rev-parse``), the settings and every raw per-run figure.

Modules: ``defaults`` (what a run asks for unless told; light, for the argument parser),
``stats`` (median, halves, the throttle flag), ``machine`` (machine facts, commit, model file,
thermal/power telemetry, bandwidth ceiling), ``worker`` (the child process of one LLM side and its
JSON-lines protocol), ``llm`` (both sides interleaved), ``loop`` (the voice loop per stage),
``report`` (the whole run as one result dict, its JSON and PNG, the summary lines), ``cli``
(``register`` for argparse and the command).
"""
