"""A local generation: llama.cpp's token loop in a worker thread that feeds a queue.

`LocalModel.stream` starts a `Generation` and reads the chunks it emits from an asyncio queue,
so the event loop stays free while llama.cpp runs. The prompt is the request's messages in the
GGUF chat template's terms; text streams as it decodes, held back only where it could begin a
stop sequence; the step ends with the finish reason and exact token counts. At process exit,
running generations are stopped and joined before the models are freed (`_shut_down`).
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import contextlib
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentos.core.errors import GMIError
from agentos.core.messages import Message, Role
from agentos.core.usage import ModelUsage
from agentos.llm._local_llama import LoadedModel, close_all
from agentos.llm.errors import ProviderError
from agentos.llm.model import (
    FinishChunk,
    FinishReason,
    ModelChunk,
    ModelRequest,
    TextDelta,
    UsageChunk,
)

__all__ = ["Generation", "LocalSampling"]


@dataclass(frozen=True, slots=True)
class LocalSampling:
    """The sampling settings a local generation uses after defaults are applied."""

    temperature: float = 0.7
    repeat_penalty: float = 1.3
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0


def _chat_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Messages in the template's terms: summaries become system text, tool results user text."""
    chat: list[dict[str, str]] = []
    for message in messages:
        match message.role:
            case Role.ERROR | Role.THOUGHT:
                continue
            case Role.SUMMARY:
                chat.append({"role": "system", "content": message.text})
            case Role.TOOL:
                result = message.tool_result
                assert result is not None
                chat.append(
                    {"role": "user", "content": f"[{result.tool_name} result] {result.output}"}
                )
            case _:
                chat.append({"role": message.role.value, "content": message.text})
    return chat


def _held_back(text: str, stops: Sequence[str]) -> int:
    """How many trailing characters of ``text`` could begin a stop sequence."""
    held = 0
    for stop in stops:
        for size in range(min(len(stop) - 1, len(text)), held, -1):
            if text.endswith(stop[:size]):
                held = size
                break
    return held


_running: set[Generation] = set()
_workers_lock = threading.Lock()
_EXIT_JOIN_SECONDS = 10.0


class Generation:
    """One local generation, run in a worker thread that feeds the consumer's queue."""

    def __init__(
        self,
        loaded: LoadedModel,
        request: ModelRequest,
        sampling: LocalSampling,
        grammar_text: str | None,
        seed: int,
        model_id: str,
        loop: asyncio.AbstractEventLoop,
        queue: asyncio.Queue[ModelChunk | BaseException | None],
    ) -> None:
        self.loaded = loaded
        self.request = request
        self.sampling = sampling
        self.grammar_text = grammar_text
        self.seed = seed
        self.model_id = model_id
        self.stop = threading.Event()
        self._loop = loop
        self._queue = queue
        self.thread = threading.Thread(target=self._run, name="agentos-local-generate", daemon=True)

    def start(self) -> None:
        with _workers_lock:
            _running.add(self)
        self.thread.start()

    def emit(self, item: ModelChunk | BaseException | None) -> None:
        # Once the consumer has stopped, nobody reads the queue and its loop may be closed:
        # calling into a closed loop would raise in the worker thread.
        if self.stop.is_set():
            return
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the loop closed without the stream being closed first
            self.stop.set()

    def _run(self) -> None:
        """Generate and emit chunks, then ``None`` (or the exception that ended it)."""
        try:
            with self.loaded.lock:
                if not self.stop.is_set():  # the consumer may have left while this waited
                    self._generate()
        except BaseException as exc:  # handed to the consumer, which re-raises it
            self.emit(
                exc
                if isinstance(exc, GMIError)
                else ProviderError(
                    f"local model failed: {exc}", provider_id="local", model_id=self.model_id
                )
            )
        finally:
            with _workers_lock:
                _running.discard(self)
        self.emit(None)

    def _prompt(self) -> tuple[list[int], list[str], int]:
        """The prompt's tokens, the stop sequences and the output cap the context leaves.

        A prompt the context window cannot hold is refused with a `ProviderError` (400).
        """
        loaded, request = self.loaded, self.request
        chat: Any = _chat_messages(request.messages)  # llama-cpp types each role separately
        formatted = loaded.formatter(messages=chat)
        prompt: list[int] = loaded.llama.tokenize(
            formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
        )
        if len(prompt) >= loaded.n_ctx:
            raise ProviderError(
                f"the prompt has {len(prompt)} tokens; the local model's context window holds "
                f"{loaded.n_ctx}",
                status_code=400,
                provider_id="local",
                model_id=self.model_id,
            )
        stops = [s for s in [*(formatted.stop or []), *(request.options.stop_sequences or ())] if s]
        room = loaded.n_ctx - len(prompt)
        return prompt, stops, min(request.options.max_tokens or room, room)

    def _grammar(self) -> Any:
        """The llama.cpp grammar the reply is held to, ``None`` for free text."""
        if self.grammar_text is None:
            return None
        from llama_cpp.llama_grammar import LlamaGrammar

        text = self.loaded.parsable_grammar(self.grammar_text)
        return LlamaGrammar.from_string(text, verbose=False)

    def _generate(self) -> None:
        loaded, request, sampling = self.loaded, self.request, self.sampling
        llama = loaded.llama
        prompt, stops, max_tokens = self._prompt()
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        generated: list[int] = []
        pending = ""
        finish: FinishReason = "length"
        if request.options.seed is not None:
            # A token's logits depend slightly on the batch it is evaluated in, so reusing the
            # prompt prefix an earlier call left in the KV cache can change what a seed samples.
            # A seeded call evaluates its whole prompt, so the same seed always gives the same
            # text.
            llama.reset()  # type: ignore[no-untyped-call]  # unannotated in llama-cpp-python
        llama.set_seed(self.seed)
        grammar = self._grammar()
        tokens = llama.generate(
            prompt,
            top_k=sampling.top_k,
            top_p=sampling.top_p,
            min_p=sampling.min_p,
            temp=sampling.temperature,
            repeat_penalty=sampling.repeat_penalty,
            frequency_penalty=sampling.frequency_penalty,
            presence_penalty=sampling.presence_penalty,
            grammar=grammar,
        )
        with contextlib.closing(tokens):
            for token in tokens:
                if loaded.is_end_of_generation(token):
                    finish = "stop"
                    break
                piece = llama.detokenize([token], prev_tokens=prompt + generated)
                generated.append(token)
                pending += decoder.decode(piece)
                hit = min((pending.index(s) for s in stops if s in pending), default=-1)
                if hit >= 0:
                    pending = pending[:hit]
                    finish = "stop"
                    decoder.reset()
                    break
                ready = len(pending) - _held_back(pending, stops)
                if ready > 0:
                    self.emit(TextDelta(pending[:ready]))
                    pending = pending[ready:]
                if len(generated) >= max_tokens or self.stop.is_set():
                    break
        if self.stop.is_set():
            return
        pending += decoder.decode(b"", final=True)
        if pending:
            self.emit(TextDelta(pending))
        self.emit(FinishChunk(finish, response_model=self.model_id))
        usage = ModelUsage(
            prompt_tokens=len(prompt), completion_tokens=len(generated), cost_usd=0.0
        )
        self.emit(UsageChunk(usage))


@atexit.register
def _shut_down() -> None:
    """Let running generations leave llama.cpp, then free the models, before the process ends.

    A daemon thread still inside llama.cpp when the interpreter tears down can crash the
    process, and a model freed during teardown raises in ``Llama.__del__``.
    """
    with _workers_lock:
        running = list(_running)
    for job in running:
        job.stop.set()
    for job in running:
        job.thread.join(_EXIT_JOIN_SECONDS)
    for model in close_all():
        model.llama.close()
    # llama-cpp-python keeps two /dev/null files open for its whole life; left to the
    # interpreter's teardown they print ResourceWarnings after a test run's summary line.
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        devnull = getattr(utils, name, None)
        if devnull is not None:
            devnull.close()
