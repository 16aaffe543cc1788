"""``edge bench`` on the command line: :func:`register` adds it to the ``edge`` argument parser."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from edge.config import load_settings
from edge.ops.bench.defaults import (
    DEFAULT_LLM_TURNS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_OUT,
    DEFAULT_SESSIONS,
    LLM_TURN_TEXTS,
    MIN_RUNS,
    SHARED_SESSIONS_WAKE,
    BenchArgumentError,
    check_runs,
)


def register(sub, common) -> None:
    """Add ``edge bench`` to the ``edge`` command's subparsers (``common`` adds --config/--board)."""
    p = sub.add_parser("bench", help="LLM TTFT/decode/memory/heat vs plain llama-cpp-python, bandwidth ceiling, "
                                     "voice loop per stage; JSON + PNG into bench/results/")
    common(p)
    p.add_argument("--model", help="manifest id or .gguf path (default: llm.model of the settings)")
    p.add_argument("--runs", type=int, default=MIN_RUNS,
                   help=f"generations per side, interleaved; the second half is reported (default {MIN_RUNS})")
    p.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS,
                   help=f"tokens per generation, both sides (default {DEFAULT_MAX_TOKENS})")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON on stdout")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the result JSON and PNG (default bench/results)")
    p.add_argument("--no-loop", action="store_true", help="LLM and bandwidth only, not the voice loop")
    p.add_argument("--sessions", default=str(DEFAULT_SESSIONS),
                   help="folder of session WAVs + inventory.csv (default ../shared/audio/sessions)")
    p.add_argument("--llm-turns", type=int, default=DEFAULT_LLM_TURNS,
                   help=f"extra LLM-path turns from text, 0..{len(LLM_TURN_TEXTS)} (default {DEFAULT_LLM_TURNS})")
    p.set_defaults(func=cmd_bench)


def _log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def cmd_bench(args) -> int:
    """Run the bench, write its JSON and PNG into ``--out``, print the summary (or ``--json``).

    Raises:
        BenchArgumentError: ``--runs`` < 2, ``--max-tokens`` < 2, a bad ``--llm-turns``, no model to
            benchmark (``llm.engine: none`` without ``--model``), or ``--sessions`` without sessions.
        FileNotFoundError: the model is missing.
        BenchError: an LLM worker failed or hung.
    """
    # Imported when the command runs, not when ``edge`` builds its parser: the measuring modules
    # load numpy and every voice-loop stage, which would double the start-up of every command.
    from edge.ops.bench.report import readme_row, run, summary_lines, write_results

    check_runs(args.runs)
    if args.max_tokens < 2:
        raise BenchArgumentError(f"--max-tokens must be at least 2 (a decode rate needs two tokens), got {args.max_tokens}")
    settings = load_settings(args.config, args.board)
    if Path(args.sessions).resolve() == DEFAULT_SESSIONS.resolve():
        # the shared sessions say "hey mycroft" (microWakeWord's model of it at its own cutoff), not the default word
        settings = load_settings(args.config, args.board, overrides={"wake": {"models": [SHARED_SESSIONS_WAKE]}})
    if settings.llm.engine == "none" and not args.model:
        raise BenchArgumentError("llm.engine is none in the settings: pass --model NAME to benchmark a model")
    result = run(settings, model=args.model, runs=args.runs, max_tokens=args.max_tokens, loop=not args.no_loop,
                 sessions_dir=Path(args.sessions), llm_turns=args.llm_turns, log=_log)
    js, png = write_results(result, Path(args.out))
    result["chart"] = png.name
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        for line in summary_lines(result):
            print(line)
        print(f"README row:\n{readme_row(result)}")
    _log(f"wrote {js} and {png}")
    return 0
