"""``local_stream``: streaming from the embedded model, agentos against llama-cpp-python.

Candidate: ``agentos.stream_text(provider="local", ...)`` read through ``full_stream``.
Baseline: ``Llama.create_chat_completion(stream=True)`` called directly. Both get the same
system and user message, seed, ``max_tokens`` and sampling settings (passed explicitly, so a
change of agentos's defaults cannot skew the comparison); seeded, they produce the same text.

Metrics: time to first token (TTFT, from the call to the first text) and tokens per second
(tokens / time from the first text to the last). **Tokens are counted the same way on both
sides**: the model's own tokenizer counts the text each side streamed (``Llama.tokenize``, no
BOS, after the timed part), so equal texts give equal counts and the rate's ratio is the
timing's alone. (Before, the candidate counted ``usage.completion_tokens`` and the baseline its
content chunks, and a chunk can hold more than one token.) The notes print each side's own
count beside it: agentos's ``usage.completion_tokens``, llama-cpp-python's content chunks.

Fairness decisions, each measured on a 2-core machine:

- **One Llama instance.** The baseline uses agentos's own loaded instance
  (``agentos.llm._local_llama.load_gguf``), not a second load: identical weights, ``n_ctx`` and
  ``n_threads`` by construction, one KV cache, half the memory. Runs never overlap; the baseline
  also holds the instance's lock, as agentos's worker does.
- **The baseline runs in a fresh thread per run, like agentos's worker.** llama.cpp here is
  built with OpenMP (libgomp). A thread that has run llama.cpp compute and is still alive keeps
  an OpenMP thread pool, and while it exists generation *in any other thread* drops to about
  half speed (measured: 105 -> 55 tokens/s). ``OMP_WAIT_POLICY=ACTIVE`` makes the drop vanish, so
  it is most likely libgomp throttling its spin-waits once it manages more threads than CPUs.
  Calling the baseline from the main thread would leave the main thread as such an idle pool
  owner during every candidate run, a handicap of the setup, not of agentos. The baseline's
  timer starts inside its thread, so it does not pay the thread start.
- **A cold prompt each run** (``local_stream``): the KV cache is reset before every run, so both
  sides evaluate the whole prompt, as for a new conversation. agentos does this itself for a
  seeded call (a reused prefix can change what a seed samples), so the baseline must too.
- **Not measured: a cached prompt.** With the prompt left in the KV cache (unseeded, since a
  seeded agentos call re-evaluates its prompt), TTFT is one token's decode, and in a fresh
  thread that takes ~10 or ~20 ms here depending on whether something ran on another thread
  just before (apparently waking the idle second vCPU; agentos's ``asyncio.to_thread`` hop
  does). The ratio swung from 0.54 to 1.06 between identical runs, so it is not registered.
- **Settling.** Before each run the previous candidate's worker thread is joined (its OpenMP
  pool ends with it) and the process idles briefly so leftover spinning does not hit the run.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import agentos
from agentos.llm import _local_llama, local
from bench.registry import Benchmark, Metric, Sample, register

__all__ = ["LocalStream", "settle_local_workers"]

T = TypeVar("T")

SYSTEM = "You are a helpful assistant."
USER = "Write a short story about a robot who learns to paint."
SEED = 42
MAX_TOKENS = 64
SAMPLING: dict[str, float | int] = {
    "temperature": 0.7,
    "repeat_penalty": 1.3,
    "top_p": 0.95,
    "top_k": 40,
    "min_p": 0.05,
}
SETTLE_SECONDS = 0.05
_WORKER_NAME = "agentos-local-generate"  # local.py's worker thread name


@dataclass(frozen=True, slots=True)
class _Run:
    """One generation as seen by its consumer."""

    ttft: float
    first_to_last: float
    tokens: int
    """The tokenizer's count of ``text`` (the same count on both sides)."""
    text: str
    reported: int
    """The side's own count: agentos's usage.completion_tokens, llama-cpp's content chunks."""

    def sample(self) -> Sample:
        rate = self.tokens / self.first_to_last if self.first_to_last > 0 else float("nan")
        return {"ttft": self.ttft * 1000, "tokens_per_s": rate}


class LocalStream(Benchmark):
    """TTFT and tokens/s of ``stream_text(provider="local")`` vs llama-cpp-python, cold prompt."""

    name: ClassVar[str] = "local_stream"
    description: ClassVar[str] = (
        f"stream_text(provider='local') vs Llama.create_chat_completion(stream=True), "
        f"{MAX_TOKENS} tokens, KV cache reset before each run"
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("ttft", "ms", "lower"),
        Metric("tokens_per_s", "tok/s", "higher"),
    )

    def __init__(self) -> None:
        self._loaded: Any = None
        self._runner: asyncio.Runner | None = None
        self._runs: dict[str, list[_Run]] = {"candidate": [], "baseline": []}

    def setup(self) -> None:
        self._loaded = _local_llama.load_gguf(
            _local_llama.bundled_gguf_path(), local.LOCAL_CONTEXT_WINDOW
        )
        # One loop for every candidate run, as an application has; its creation is not timed.
        self._runner = asyncio.Runner()
        # Warm both paths (template compile, first-call allocations, the loop's executor).
        for _ in range(2):
            self.settle()
            self._candidate()
            self.settle()
            self._baseline()

    def teardown(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None

    def settle(self) -> None:
        settle_local_workers()

    def run_candidate(self) -> Sample:
        run = self._candidate()
        self._runs["candidate"].append(run)
        return run.sample()

    def run_baseline(self) -> Sample:
        run = self._baseline()
        self._runs["baseline"].append(run)
        return run.sample()

    def settings(self) -> dict[str, object]:
        return {
            "system": SYSTEM,
            "user": USER,
            "seed": SEED,
            "max_tokens": MAX_TOKENS,
            "sampling": SAMPLING,
            "reset_kv_cache_each_run": True,
            "llama_instance": (
                "agentos.llm._local_llama.load_gguf(bundled GGUF, LOCAL_CONTEXT_WINDOW)"
            ),
            "n_ctx": self._llama.n_ctx() if self._loaded is not None else None,
            "n_threads": self._llama.n_threads if self._loaded is not None else None,
            "baseline_thread": "fresh thread per run, timer started inside it",
            "settle_seconds": SETTLE_SECONDS,
        }

    def notes(self) -> list[str]:
        notes: list[str] = []
        # Only agentos's usage says how many tokens were generated (a chunk can hold several).
        ran = self._runs["candidate"]
        short = sorted({run.reported for run in ran if run.reported < MAX_TOKENS})
        if short:
            notes.append(f"candidate generations ended early: {short} of {MAX_TOKENS} tokens")
        counts = {side: sorted({run.tokens for run in runs}) for side, runs in self._runs.items()}
        reported = {
            side: sorted({run.reported for run in runs}) for side, runs in self._runs.items()
        }
        notes.append(
            f"tokens counted by the tokenizer: candidate {counts['candidate']}, baseline "
            f"{counts['baseline']}; own counts: candidate {reported['candidate']} "
            f"(usage.completion_tokens), baseline {reported['baseline']} (content chunks)"
        )
        texts = {run.text for runs in self._runs.values() for run in runs}
        if len(texts) == 1:
            notes.append(f"every run produced the same text ({counts['candidate']} tokens)")
        else:
            notes.append(f"the runs produced {len(texts)} different texts (expected 1: same seed)")
        return notes

    @property
    def _llama(self) -> Any:
        return self._loaded.llama

    def _reset(self) -> None:
        with self._loaded.lock:
            self._llama.reset()  # forgets the evaluated tokens: the next prompt runs cold

    def _candidate(self) -> _Run:
        assert self._runner is not None
        self._reset()
        return self._runner.run(self._stream_agentos())

    async def _stream_agentos(self) -> _Run:
        started = time.perf_counter()
        result = agentos.stream_text(
            USER,
            system=SYSTEM,
            provider="local",
            seed=SEED,
            max_tokens=MAX_TOKENS,
            temperature=SAMPLING["temperature"],
            top_p=SAMPLING["top_p"],
            custom_model_params={k: SAMPLING[k] for k in ("repeat_penalty", "top_k", "min_p")},
        )
        first = last = 0.0
        pieces: list[str] = []
        async for part in result.full_stream:
            if isinstance(part, agentos.TextDeltaPart):
                last = time.perf_counter()
                first = first or last
                pieces.append(part.text)
            elif isinstance(part, agentos.ErrorPart):
                raise part.error
        usage = await result.usage
        if not pieces or usage.completion_tokens is None:
            raise RuntimeError("agentos streamed no text or reported no usage")
        text = "".join(pieces)
        return _Run(first - started, last - first, self._count(text), text, usage.completion_tokens)

    def _baseline(self) -> _Run:
        self._reset()
        return _in_fresh_thread(self._stream_llama_cpp)

    def _stream_llama_cpp(self) -> _Run:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
        with self._loaded.lock:
            started = time.perf_counter()
            chunks = self._llama.create_chat_completion(
                messages, stream=True, seed=SEED, max_tokens=MAX_TOKENS, **SAMPLING
            )
            first = last = 0.0
            pieces: list[str] = []
            for chunk in chunks:
                content = chunk["choices"][0]["delta"].get("content")
                if content:
                    last = time.perf_counter()
                    first = first or last
                    pieces.append(content)
        if not pieces:
            raise RuntimeError("llama-cpp-python streamed no content")
        text = "".join(pieces)
        return _Run(first - started, last - first, self._count(text), text, len(pieces))

    def _count(self, text: str) -> int:
        """The model tokenizer's count of ``text``: how both sides count their tokens."""
        with self._loaded.lock:
            return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def settle_local_workers() -> None:
    """Join agentos's finished generation threads (their OpenMP pools end with them), then idle.

    See the module's note on OpenMP: a live thread that ran llama.cpp slows the next run.
    """
    for thread in threading.enumerate():
        if thread.name == _WORKER_NAME:
            thread.join()
    time.sleep(SETTLE_SECONDS)


def _in_fresh_thread(work: Callable[[], T]) -> T:
    """Run ``work`` in a new thread that ends with it (see the module's note on OpenMP)."""
    box: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            box.append(work())
        except BaseException as exc:  # handed back to the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=target, name="bench-baseline")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return box[0]


register(LocalStream, name=LocalStream.name)
