"""``GET /healthz`` and ``GET /metrics`` (Prometheus text, ``prometheus_client``): the API's own
metrics (:data:`METRIC_NAMES`), the resource governor's figures and the live service's state file
counters, both read fresh at every scrape."""
from __future__ import annotations

import logging
import re
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from edge.llm.base import GenerationStats
from edge.service.api.deps import ApiContext, api_context
from edge.service.runstate import read_state

log = logging.getLogger(__name__)

METRIC_NAMES = ("edge_api_requests_total", "edge_llm_tokens_total", "edge_llm_ttft_seconds",
                "edge_llm_decode_tokens_per_second", "edge_api_queue_depth", "edge_api_generating",
                "edge_llm_engine_healthy")
#: TTFT histogram buckets, s: from a warm 135M model on a PC (~0.05 s) to a cold 3B model on a
#: board's CPU (several s).
TTFT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)

router = APIRouter()


class Metrics:
    """The API's Prometheus metrics, in their own registry."""

    def __init__(self):
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("edge_api_requests", "HTTP requests by endpoint and status code",
                                ["endpoint", "code"], registry=r)
        self.tokens = Counter("edge_llm_tokens", "tokens processed, by kind (prompt, completion)", ["kind"], registry=r)
        self.ttft = Histogram("edge_llm_ttft_seconds", "time to first token, s", buckets=TTFT_BUCKETS, registry=r)
        self.decode_rate = Gauge("edge_llm_decode_tokens_per_second", "decode rate of the last generation, tokens/s",
                                 registry=r)
        self.queue_depth = Gauge("edge_api_queue_depth", "requests waiting behind the running generation", registry=r)
        self.generating = Gauge("edge_api_generating", "1 while a generation runs", registry=r)
        self.engine_healthy = Gauge("edge_llm_engine_healthy", "1 = healthy, 0 = unhealthy or unloaded, per chain step",
                                    ["index", "engine", "model", "active"], registry=r)

    def observe(self, stats: GenerationStats) -> None:
        self.tokens.labels("prompt").inc(stats.prompt_tokens)
        self.tokens.labels("completion").inc(stats.completion_tokens)
        if stats.completion_tokens:
            self.ttft.observe(stats.ttft_ms / 1000)
        if stats.tokens_per_s:
            self.decode_rate.set(stats.tokens_per_s)


def chain_status(engine) -> list[dict]:
    """The engine's steps (:meth:`edge.llm.base.LlmEngine.status`)."""
    return engine.status()


def active_label(engine) -> str:
    """The active chain step as ``engine:model``, or ``grammar`` (no LLM)."""
    for s in chain_status(engine):
        if s["active"]:
            return s["engine"] if s["engine"] == "grammar" else f"{s['engine']}:{s.get('model')}"
    return "grammar"


class GovernorCollector:
    """Puts :meth:`edge.governor.governor.Governor.metrics` (thermal level, temperatures, memory, NPU load,
    admission, thread plan…) on ``/metrics``, read fresh at every scrape. Never raises: an
    unreadable signal is missing from the scrape."""

    def __init__(self, governor):
        self.governor = governor

    def collect(self):
        try:
            self.governor.sample()
            figures = self.governor.metrics()
        except Exception as e:
            log.warning("governor metrics: %s", e)
            return
        families: dict[str, tuple[list[str], GaugeMetricFamily]] = {}
        for key, value in figures.items():
            name, _, rest = key.partition("{")
            labels = dict(re.findall(r'(\w+)="([^"]*)"', rest))
            names = sorted(labels)
            if name not in families:
                families[name] = (names, GaugeMetricFamily(name, f"edge governor: {name}", labels=names))
            want, fam = families[name]
            if want == names and value is not None:
                fam.add_metric([labels[k] for k in want], float(value))
        for _names, fam in families.values():
            yield fam


class ServiceStateCollector:
    """Puts the live service's state file (:mod:`edge.service.runstate`, written by the daemon, another
    process) on ``/metrics``, read at every scrape:

    * ``edge_service_up``: 1 when the daemon is alive and its state fresh, else 0;
    * ``edge_service_state_age_seconds``, ``edge_service_turns_total``;
    * ``edge_capture_overflows_total`` (chunks the ring buffer dropped), ``edge_capture_overflow_stalls_total``,
      ``edge_capture_xruns_total`` (PortAudio input overflows), ``edge_capture_lost_total`` (device
      outages), ``edge_capture_reopens_total``, ``edge_capture_open_attempts_total``;
    * ``edge_capture_ok``: 1 while the capture device delivers audio;
    * with the recognizer in a worker process: ``edge_asr_worker_rss_bytes`` (when known),
      ``edge_asr_worker_utterances_total``, ``edge_asr_worker_recycles_total`` (replaced for its
      memory), ``edge_asr_worker_restarts_total`` (replaced after dying).

    Without a state file only ``edge_service_up 0`` is exported. Never raises."""

    COUNTERS = {"overflows": "chunks dropped by the capture ring buffer (consumer too slow)",
                "overflow_stalls": "consumer stalls that dropped capture chunks",
                "xruns": "input overflows reported by PortAudio (driver lost samples)",
                "lost_events": "capture device outages", "reopens": "capture device outages that ended",
                "open_attempts": "attempts to open a capture device"}

    def __init__(self, path):
        self.path = path

    def collect(self):
        st = read_state(self.path)  # never raises; a malformed file reads as not running
        yield GaugeMetricFamily("edge_service_up", "1: the voice service runs and its state is fresh",
                                value=1.0 if st.get("running") else 0.0)
        if "capture" not in st:
            return
        yield GaugeMetricFamily("edge_service_state_age_seconds", "s since the service last wrote its state",
                                value=float(st.get("age_s", 0.0)))
        yield CounterMetricFamily("edge_service_turns", "turns ended", value=float(st.get("turns", 0)))
        cap = st["capture"]
        for key, help_ in self.COUNTERS.items():
            name = "edge_capture_lost" if key == "lost_events" else f"edge_capture_{key}"
            yield CounterMetricFamily(name, help_, value=float(cap.get(key, 0)))
        yield GaugeMetricFamily("edge_capture_ok", "1 while the capture device delivers audio",
                                value=1.0 if cap.get("state") == "ok" else 0.0)
        w = st.get("asr_worker")
        if w:
            if isinstance(w.get("rss_bytes"), (int, float)):
                yield GaugeMetricFamily("edge_asr_worker_rss_bytes", "resident memory of the recognizer worker, bytes",
                                        value=float(w["rss_bytes"]))
            yield CounterMetricFamily("edge_asr_worker_utterances", "utterances the recognizer worker answered",
                                      value=float(w["calls"]))
            yield CounterMetricFamily("edge_asr_worker_recycles", "recognizer workers replaced for their memory",
                                      value=float(w["recycles"]))
            yield CounterMetricFamily("edge_asr_worker_restarts", "recognizer workers replaced after dying",
                                      value=float(w["restarts"]))


# {status: ok|degraded, engine, chain: [...], queue_depth, busy}; degraded = grammar only. (Comments, not
# docstrings, on the routes: FastAPI would put a docstring into /openapi.json.)
@router.get("/healthz")
async def healthz(ctx: Annotated[ApiContext, Depends(api_context)]):
    status = chain_status(ctx.engine)
    active = next((s for s in status if s["active"]), None)
    llm = active is not None and active["engine"] != "grammar"
    ctx.count("/healthz", 200)
    return {"status": "ok" if llm else "degraded", "engine": active_label(ctx.engine), "chain": status,
            "queue_depth": ctx.generator.queue_depth, "busy": ctx.generator.running is not None}


# Prometheus text exposition of the app's registry.
@router.get("/metrics")
async def prometheus(ctx: Annotated[ApiContext, Depends(api_context)]):
    m = ctx.metrics
    m.engine_healthy.clear()
    for s in chain_status(ctx.engine):
        m.engine_healthy.labels(str(s["index"]), s["engine"], str(s.get("model") or ""),
                                "1" if s["active"] else "0").set(1 if s["state"] == "healthy" else 0)
    m.queue_depth.set(ctx.generator.queue_depth)
    ctx.count("/metrics", 200)
    return Response(generate_latest(m.registry), media_type=CONTENT_TYPE_LATEST)
