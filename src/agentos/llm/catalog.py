"""The model catalog: context windows, output limits, embedding sizes and prices.

Figures are USD per million tokens, taken on 2026-11-30 from the providers' own pages
(Anthropic's model overviews and pricing page, OpenAI's model and pricing pages, the Gemini API
pricing and model pages, OpenRouter's model pages) and cross-checked against dated third-party
price lists. **Prices change**: a figure here is a snapshot to budget with, not a bill. Where a
figure could not be pinned down it is ``None`` (unknown), never a guess; see the notes beside
the entries.

Rules every lookup follows:

- **Unknown model**: a context window of 8,192 tokens (the spec's PromptEngine default), no
  output limit or embedding size, and an unknown price: its cost is ``None``, never 0.
- **Lookup by id** (`model_info`, `find_model`): the exact id first; then the id without a
  leading ``models/`` (how Gemini names models); then the fixed aliases (Anthropic's
  ``claude-sonnet-4-0`` is ``claude-sonnet-4``); then the id without a trailing release date or
  ``-latest``: ``-YYYY-MM-DD`` (OpenAI: ``gpt-4o-2024-08-06`` is ``gpt-4o``) or ``-YYYYMMDD``
  (Anthropic: ``claude-sonnet-4-20250514`` is ``claude-sonnet-4``). An entry for the exact id
  always wins, so a snapshot priced apart from its family (``gpt-4o-2024-05-13``) keeps its own
  figures.
- **OpenRouter** ids are ``vendor/model``; the OpenAI, Anthropic and Google models OpenRouter
  serves carry their vendor's figures (OpenRouter passes the vendor's list price through), and
  Anthropic's versions are written with a dot there (``anthropic/claude-sonnet-4.5``; the hyphen
  form is found too). Other OpenRouter models are unknown.
- **Cost** (`ModelInfo.cost`, `cost_usd`): ``prompt_tokens`` counts *every* input token of the
  request, cached ones included (OpenAI's and Gemini's convention; an Anthropic adapter adds
  ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` to ``input_tokens``). The
  uncached part, ``prompt - cache_read - cache_write``, is billed at the input price, cache reads
  at the cache-read price and cache writes at the cache-write price; a cache price the catalog
  does not hold bills those tokens at the input price (no discount known, none assumed).
- **Long prompts**: a model with `LongPromptPricing` bills *every* token of a request whose
  prompt is over the threshold at the long-prompt prices (Gemini 2.5 Pro over 200,000 tokens,
  GPT-5.4 and GPT-5.5 over 272,000, Claude Haiku 5.5 over 100,000).
- **Free providers**: ``local`` (the embedded model) and ``ollama`` run on the caller's own
  machine, so every call on them costs 0.0, whether or not the catalog knows the model. An
  Ollama model's context window is Ollama's ``num_ctx``, not the model's trained window, so the
  catalog holds no Ollama chat models: they count as 8,192 tokens.

Figures left unknown on purpose: ``gpt-5.6-sol``'s price (a promotional $4/$20 that ran "at
least until 2026-11-21" beside a $5/$30 list price: which one bills today is not known).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace

from agentos.core.usage import ModelUsage
from agentos.llm._catalog_entries import (
    ANTHROPIC,
    GEMINI,
    LOCAL,
    OLLAMA,
    OPENAI,
    LongPromptPricing,
    ModelInfo,
)

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "FREE_PROVIDERS",
    "LongPromptPricing",
    "ModelInfo",
    "context_window",
    "cost_usd",
    "embedding_dimension",
    "find_model",
    "model_info",
    "models",
    "priced",
]

DEFAULT_CONTEXT_WINDOW = 8192
"""The context window of a model the catalog does not know (spec: PromptEngine budget)."""

FREE_PROVIDERS = frozenset({"local", "ollama"})
"""Providers that run on the caller's machine: their calls cost 0.0, known model or not."""


# OpenRouter's vendor prefix for each provider whose models it serves at the vendor's price.
_OPENROUTER_VENDORS = {"openai": "openai", "anthropic": "anthropic", "gemini": "google"}
_VENDOR_PROVIDERS = {vendor: provider for provider, vendor in _OPENROUTER_VENDORS.items()}

_ALIASES = {
    ("anthropic", "claude-opus-4-0"): "claude-opus-4",
    ("anthropic", "claude-sonnet-4-0"): "claude-sonnet-4",
}
"""Ids a provider documents as another name of a catalog model."""

_SNAPSHOT_SUFFIX = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)$")
_HYPHENATED_VERSION = re.compile(r"(?<=\d)-(?=\d)")


def _openrouter_name(provider_id: str, model_id: str) -> str:
    """How OpenRouter writes a vendor's model id (Anthropic versions take a dot)."""
    if provider_id == "anthropic":
        return _HYPHENATED_VERSION.sub(".", model_id)
    return model_id


def _openrouter_entries(entries: Iterable[ModelInfo]) -> Iterator[ModelInfo]:
    for info in entries:
        vendor = _OPENROUTER_VENDORS[info.provider_id]
        name = _openrouter_name(info.provider_id, info.model_id)
        yield replace(info, provider_id="openrouter", model_id=f"{vendor}/{name}")


_VENDOR_ENTRIES = (*OPENAI, *ANTHROPIC, *GEMINI)
_CATALOG: dict[tuple[str, str], ModelInfo] = {
    (info.provider_id, info.model_id): info
    for info in (*_VENDOR_ENTRIES, *_openrouter_entries(_VENDOR_ENTRIES), *OLLAMA, *LOCAL)
}
_PROVIDER_ORDER = ("openai", "anthropic", "gemini", "openrouter", "ollama", "local")


@functools.lru_cache(maxsize=256)
def _candidate_ids(provider_id: str, model_id: str) -> tuple[str, ...]:
    """The ids to try for ``model_id`` on ``provider_id``, in the order of the lookup rules.

    Cached: they follow from the names alone (a regex and the alias table), and every model
    step looks its model up. The catalog itself is read afresh on each lookup.
    """
    bare = model_id.removeprefix("models/")
    undated = _SNAPSHOT_SUFFIX.sub("", bare)
    candidates = (
        model_id,
        bare,
        _ALIASES.get((provider_id, bare)),
        undated,
        _ALIASES.get((provider_id, undated)),
    )
    return tuple(candidate for candidate in candidates if candidate is not None)


def model_info(provider_id: str, model_id: str) -> ModelInfo | None:
    """The catalog entry for a model, or ``None`` when agentos does not know it.

    Dated snapshots and aliases resolve to their model (see the module docstring); the entry
    returned names the model as the catalog holds it.
    """
    if provider_id == "openrouter" and "/" in model_id:
        vendor, _, name = model_id.partition("/")
        vendor_provider = _VENDOR_PROVIDERS.get(vendor)
        if vendor_provider is None:
            return _CATALOG.get((provider_id, model_id))
        for candidate in _candidate_ids(vendor_provider, name):
            dotted = _openrouter_name(vendor_provider, candidate)
            info = _CATALOG.get(("openrouter", f"{vendor}/{dotted}"))
            if info is not None:
                return info
        return None
    for candidate in _candidate_ids(provider_id, model_id):
        info = _CATALOG.get((provider_id, candidate))
        if info is not None:
            return info
    return None


def find_model(model_id: str) -> ModelInfo | None:
    """The catalog entry for a model id on whichever provider holds it (DESIGN.md §5.13).

    ``"provider:model"`` looks on that provider only. A bare id is looked up on each catalog
    provider in turn (OpenAI, Anthropic, Gemini, OpenRouter, Ollama, local); no id is held by
    two providers (OpenRouter's carry their vendor's prefix), so the order never changes the
    answer. ``"openai/gpt-4o"`` is therefore OpenRouter's entry, with OpenAI's figures.
    """
    prefix, colon, rest = model_id.partition(":")
    if colon and prefix in _PROVIDER_ORDER:
        return model_info(prefix, rest)
    for provider_id in _PROVIDER_ORDER:
        info = model_info(provider_id, model_id)
        if info is not None:
            return info
    return None


def models(provider_id: str | None = None) -> tuple[ModelInfo, ...]:
    """Every catalog entry, or those of one provider, in catalog order."""
    return tuple(
        info for info in _CATALOG.values() if provider_id is None or info.provider_id == provider_id
    )


def context_window(provider_id: str, model_id: str) -> int:
    """The model's context window in tokens (8,192 when unknown)."""
    info = model_info(provider_id, model_id)
    return info.context_window if info else DEFAULT_CONTEXT_WINDOW


def embedding_dimension(provider_id: str, model_id: str) -> int | None:
    """The size of the vectors an embedding model returns, or ``None`` when unknown."""
    info = model_info(provider_id, model_id)
    return info.embedding_dimension if info else None


def cost_usd(provider_id: str, model_id: str, usage: ModelUsage) -> float | None:
    """What ``usage`` costs on this model, or ``None`` when its price is unknown.

    Calls on a free provider (``local``, ``ollama``) cost 0.0 whatever the model.
    """
    if provider_id in FREE_PROVIDERS:
        return 0.0
    info = model_info(provider_id, model_id)
    return info.cost(usage) if info else None


def priced(provider_id: str, model_id: str, usage: ModelUsage) -> ModelUsage:
    """``usage`` with its cost filled in from the catalog (kept when the provider gave one)."""
    if usage.cost_usd is not None:
        return usage
    cost = cost_usd(provider_id, model_id, usage)
    return usage if cost is None else replace(usage, cost_usd=cost)  # None: nothing to fill
