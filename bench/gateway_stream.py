"""``gateway_stream``: one streamed step through the completion gateway, against the openai SDK.

Candidate: ``agentos.stream_text(PROMPT, provider="openai", api_key="k", base_url=<loopback>/v1,
max_tokens=200, fallback_providers=[])`` read through ``text_stream``: option checks, the gateway
(one hop, no fallback), `MeteredModel`, the OpenAI adapter and its `StreamAssembler`, `TextRun`
and `StreamTextResult`. Baseline: ``AsyncOpenAI(api_key="k", base_url=<loopback>/v1,
max_retries=0).chat.completions.create(model="gpt-4o-mini", messages=[user PROMPT],
max_tokens=200, stream=True, stream_options={"include_usage": True})`` read chunk by chunk. Both
talk to the same loopback server (`bench.sse_server`, a process of its own), which streams a role
chunk, 200 one-token content chunks, a finish chunk, a usage-only chunk and ``[DONE]`` with no
pacing, and refuses (HTTP 400) a request that is not streamed, lacks ``include_usage`` or asks
for another ``max_tokens``, so both sides send the same request.

A second baseline reads the events as plain JSON, as agentos's adapter does: the same kept
client's ``post("/chat/completions", body=..., cast_to=object, stream=True,
stream_cls=AsyncStream[Any])``, whose SSE decoder ``json.loads`` each event into a dict and builds
no pydantic chunk; it reads ``choices[0]["delta"]["content"]`` and the usage chunk's
``completion_tokens`` from the dicts. Against it, the ``*_json`` metrics show what agentos's own
layers cost, which the pydantic baseline's per-chunk model building would hide.

Metrics (lower is better):

- ``first_chunk``: from the call (``stream_text()`` / ``AsyncOpenAI()``) to the first text: the
  candidate's first ``text_stream`` item, the baseline's first chunk with non-empty content.
  Target: candidate / SDK baseline <= 1.05.
- ``total``: from the call to the end of the stream (``text_stream`` exhausted / the SDK stream
  exhausted, which drains and closes the response). Target <= 1.05.
- ``first_chunk_json`` and ``total_json``: the same candidate figures against the plain-JSON
  baseline. Target <= 1.25: the gateway, metering, the assembler, `TextRun` and
  `StreamTextResult` may add at most a quarter to the bare JSON read of the same stream.

What is measured, and what is not:

- **Both sides keep their SDK client.** The baseline builds one ``AsyncOpenAI`` in setup
  (`bench.loopback`) and reuses it, as an application does; agentos builds a new `OpenAIModel`
  per ``stream_text()`` call, but its adapter takes the event loop's pooled client for the same
  key and endpoint, so after warm-up neither side pays the ~20 ms a client build costs (mostly
  loading the CA bundle into an SSL context).
- **Per-chunk cost:** the SDK builds a pydantic ``ChatCompletionChunk`` per event (~65 us);
  agentos's adapter asks the SDK for the events as plain JSON and reads them itself, so its
  layers (~3 us per chunk) cost far less than that model building. The notes print the time
  from the first text to the end on each side.
- **Not timed:** building and closing the baseline's client, creating the event loop (one
  ``asyncio.Runner`` serves every run, as an application has one loop), and the checks after
  each run (token counts, text, usage).
- **No connection reuse on either side:** the server closes every connection, so each run opens
  a TCP connection.
- **The work measured is the client's.** The server sends each event with its own ``send`` as
  fast as it can from another process (another core on a 2-core machine; a thread would take
  the GIL from the client it serves), so the figures are the client's work: the SDK's request,
  SSE decoding and pydantic chunks on both sides, plus agentos's layers on the candidate.
  Network latency, TLS, pacing and a real model's generation time, which would dwarf these
  figures, are absent by design.
- **Settling.** Before every run a full garbage collection runs (outside the loop, so a client
  collected then schedules no close on it) and the process sleeps briefly, so one run's garbage
  and the server's closing of its connection do not land in the next run.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import openai

import agentos
from bench.loopback import API_KEY, MODEL, LoopbackBenchmark
from bench.registry import Metric, Sample, register
from bench.sse_server import SSEServerProcess, token

__all__ = ["GatewayStream"]

PROMPT = "Count to two hundred, one word at a time."
TOKENS = 200
WARMUP_ROUNDS = 15
SETTLE_SECONDS = 0.02
JSON_TOLERANCE = 1.25
"""How much slower than the plain-JSON baseline the candidate may be."""


@dataclass(frozen=True, slots=True)
class _Run:
    """One streamed call as its reader saw it (seconds from the call)."""

    first_chunk: float
    total: float
    chunks: int
    text: str
    completion_tokens: int | None

    def sample(self, suffix: str = "") -> Sample:
        return {
            f"first_chunk{suffix}": self.first_chunk * 1000,
            f"total{suffix}": self.total * 1000,
        }


class GatewayStream(LoopbackBenchmark):
    """First text and total time of a streamed 200-token step: stream_text vs the openai SDK."""

    name: ClassVar[str] = "gateway_stream"
    description: ClassVar[str] = (
        f"stream_text(provider='openai') through the gateway vs AsyncOpenAI().chat.completions"
        f".create(stream=True), {TOKENS} one-token chunks from a loopback SSE server, no pacing"
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("first_chunk", "ms", "lower"),
        Metric("total", "ms", "lower"),
        Metric("first_chunk_json", "ms", "lower", tolerance=JSON_TOLERANCE),
        Metric("total_json", "ms", "lower", tolerance=JSON_TOLERANCE),
    )

    settle_seconds: ClassVar[float] = SETTLE_SECONDS

    def __init__(self) -> None:
        super().__init__(SSEServerProcess(TOKENS))
        self._runs: dict[str, list[_Run]] = {"candidate": [], "baseline": [], "json": []}

    def prepare(self) -> None:
        # Warm both paths: imports, pydantic's and the SDK's first-call caches, the loop.
        for _ in range(WARMUP_ROUNDS):
            self.settle()
            self._check(self.run_async(self._candidate()), "candidate")
            self.settle()
            self._check(self.run_async(self._baseline()), "baseline")
            self.settle()
            self._check(self.run_async(self._baseline_json()), "json baseline")

    def run_candidate(self) -> Sample:
        run = self.run_async(self._candidate())
        return {**self._measured("candidate", run), **run.sample("_json")}

    def run_baseline(self) -> Sample:
        # The two baselines alternate which goes first, as the runner does with the sides.
        first_json = len(self._runs["json"]) % 2 == 1
        sample: Sample = {}
        for index, kind in enumerate(("json", "sdk") if first_json else ("sdk", "json")):
            if index:
                self.settle()
            if kind == "json":
                run = self.run_async(self._baseline_json())
                self._check(run, "json baseline")
                self._runs["json"].append(run)
                sample.update(run.sample("_json"))
            else:
                sample.update(self._measured("baseline", self.run_async(self._baseline())))
        return sample

    def settings(self) -> dict[str, object]:
        return {
            "prompt": PROMPT,
            "model": MODEL,
            "max_tokens": TOKENS,
            "server": "bench/sse_server.py in a child process; role chunk, "
            f"{TOKENS} one-token content chunks, finish chunk, usage-only chunk, [DONE]; "
            "one send per event, no pacing, Connection: close",
            "candidate": "agentos.stream_text(provider='openai', api_key, base_url, "
            "max_tokens, fallback_providers=[]).text_stream",
            "baseline": "AsyncOpenAI(api_key, base_url, max_retries=0).chat.completions.create("
            "stream=True, stream_options={'include_usage': True}); one client kept across runs",
            "baseline_json": "the same client's post('/chat/completions', body, cast_to=object, "
            "stream=True, stream_cls=AsyncStream[Any]): each SSE event json.loads'ed to a dict",
            "json_tolerance": JSON_TOLERANCE,
            "openai": openai.__version__,
            "warmup_rounds": WARMUP_ROUNDS,
            "settle_seconds": SETTLE_SECONDS,
        }

    def notes(self) -> list[str]:
        notes: list[str] = []
        streaming = {
            side: statistics.median(run.total - run.first_chunk for run in runs)
            for side, runs in self._runs.items()
            if runs
        }
        if "candidate" in streaming and "baseline" in streaming:
            extra = (streaming["candidate"] - streaming["baseline"]) / (TOKENS - 1) * 1e6
            notes.append(
                f"first text to end of stream: candidate {streaming['candidate'] * 1000:.3g} ms, "
                f"baseline {streaming['baseline'] * 1000:.3g} ms ({extra:+.2g} us per chunk)"
            )
        if "json" in streaming and "candidate" in streaming:
            extra = (streaming["candidate"] - streaming["json"]) / (TOKENS - 1) * 1e6
            notes.append(
                f"first text to end of stream, plain-JSON baseline: {streaming['json'] * 1000:.3g}"
                f" ms (candidate {extra:+.2g} us per chunk over it)"
            )
        return notes

    def _measured(self, side: str, run: _Run) -> Sample:
        self._check(run, side)
        self._runs[side].append(run)
        return run.sample()

    def _check(self, run: _Run, side: str) -> None:
        expected = "".join(token(i) for i in range(TOKENS))
        if run.chunks != TOKENS or run.text != expected or run.completion_tokens != TOKENS:
            raise RuntimeError(
                f"{side} read {run.chunks} text chunks, usage {run.completion_tokens} tokens "
                f"(expected {TOKENS} of each) or a different text"
            )

    async def _candidate(self) -> _Run:
        started = time.perf_counter()
        result = agentos.stream_text(
            PROMPT,
            provider="openai",
            api_key=API_KEY,
            base_url=self.base_url,
            max_tokens=TOKENS,
            fallback_providers=[],
        )
        first = 0.0
        pieces: list[str] = []
        async for text in result.text_stream:
            if not first:
                first = time.perf_counter()
            pieces.append(text)
        ended = time.perf_counter()
        usage = await result.usage  # the stream is over: this only reads the result
        return _Run(
            first - started, ended - started, len(pieces), "".join(pieces), usage.completion_tokens
        )

    async def _baseline(self) -> _Run:
        client = self.client  # the SDK used as a demanding user does: one client kept
        started = time.perf_counter()
        stream = await client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": PROMPT}],
            max_tokens=TOKENS,
            stream=True,
            stream_options={"include_usage": True},
        )
        first = 0.0
        pieces: list[str] = []
        completion_tokens: int | None = None
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                if not first:
                    first = time.perf_counter()
                pieces.append(chunk.choices[0].delta.content)
            if chunk.usage is not None:
                completion_tokens = chunk.usage.completion_tokens
        ended = time.perf_counter()
        return _Run(
            first - started, ended - started, len(pieces), "".join(pieces), completion_tokens
        )

    async def _baseline_json(self) -> _Run:
        # The kept client, asked for the events as plain JSON (agentos's adapter's own route).
        client = self.client
        started = time.perf_counter()
        stream = await client.post(
            "/chat/completions",
            body={
                "model": MODEL,
                "messages": [{"role": "user", "content": PROMPT}],
                "max_tokens": TOKENS,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
            cast_to=object,
            stream=True,
            stream_cls=openai.AsyncStream[Any],
        )
        first = 0.0
        pieces: list[str] = []
        completion_tokens: int | None = None
        async for event in stream:
            choices = event.get("choices")
            if choices:
                content = choices[0].get("delta", {}).get("content")
                if content:
                    if not first:
                        first = time.perf_counter()
                    pieces.append(content)
            usage = event.get("usage")
            if usage is not None:
                completion_tokens = usage.get("completion_tokens")
        ended = time.perf_counter()
        await stream.close()
        return _Run(
            first - started, ended - started, len(pieces), "".join(pieces), completion_tokens
        )


register(GatewayStream, name=GatewayStream.name)
