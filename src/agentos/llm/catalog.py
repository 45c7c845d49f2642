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

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from agentos.core.usage import ModelUsage
from agentos.llm.local import DEFAULT_LOCAL_MODEL, LOCAL_CONTEXT_WINDOW

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


@dataclass(frozen=True, slots=True)
class LongPromptPricing:
    """Prices for a request whose prompt is over ``threshold`` tokens (USD per million).

    They replace the model's prices for every token of that request, output included.
    """

    threshold: int
    input_per_million: float
    output_per_million: float
    cache_read_per_million: float | None = None
    cache_write_per_million: float | None = None


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What agentos knows about one model of one provider.

    Prices are USD per million tokens; ``None`` means unknown. ``embedding_dimension`` is set
    for embedding models only (their ``context_window`` is their input limit, and their output
    price is 0.0: an embedding call produces no completion tokens). ``long_prompt`` holds the
    prices of prompts over a threshold, for models priced by prompt length.
    """

    provider_id: str
    model_id: str
    context_window: int
    max_output_tokens: int | None = None
    input_per_million: float | None = None
    output_per_million: float | None = None
    cache_read_per_million: float | None = None
    cache_write_per_million: float | None = None
    embedding_dimension: int | None = None
    long_prompt: LongPromptPricing | None = None

    @property
    def price_known(self) -> bool:
        """Whether the catalog can price a call on this model."""
        return self.input_per_million is not None and self.output_per_million is not None

    def cost(self, usage: ModelUsage) -> float | None:
        """What ``usage`` costs on this model in USD, or ``None`` when its price is unknown.

        See the module docstring for how cached tokens and long prompts are billed.
        """
        if self.input_per_million is None or self.output_per_million is None:
            return None
        long = self.long_prompt
        if long is not None and usage.prompt_tokens > long.threshold:
            prices = (
                long.input_per_million,
                long.output_per_million,
                long.cache_read_per_million,
                long.cache_write_per_million,
            )
        else:
            prices = (
                self.input_per_million,
                self.output_per_million,
                self.cache_read_per_million,
                self.cache_write_per_million,
            )
        input_price, output_price, read_price, write_price = prices
        # Clamped at 0 so an adapter that reports cache tokens outside prompt_tokens is
        # under-charged rather than given a negative cost (which ModelUsage refuses).
        uncached = max(0, usage.prompt_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
        total = (
            uncached * input_price
            + usage.cache_read_tokens * (input_price if read_price is None else read_price)
            + usage.cache_write_tokens * (input_price if write_price is None else write_price)
            + usage.completion_tokens * output_price
        )
        return total / 1_000_000


def _chat(
    provider_id: str,
    model_id: str,
    window: int,
    max_output: int | None,
    prices: tuple[float, float, float | None, float | None] | None,
    long_prompt: LongPromptPricing | None = None,
) -> ModelInfo:
    """A chat model entry; ``prices`` is ``(input, output, cache read, cache write)``."""
    input_price, output_price, read_price, write_price = prices or (None, None, None, None)
    return ModelInfo(
        provider_id,
        model_id,
        window,
        max_output,
        input_price,
        output_price,
        read_price,
        write_price,
        long_prompt=long_prompt,
    )


def _embedding(
    provider_id: str, model_id: str, input_limit: int, price: float, dimension: int
) -> ModelInfo:
    """An embedding model entry: priced by input tokens only."""
    return ModelInfo(
        provider_id,
        model_id,
        input_limit,
        input_per_million=price,
        output_per_million=0.0,
        embedding_dimension=dimension,
    )


# OpenAI: cached input is the cache-read price; OpenAI bills no cache writes.
_OPENAI = (
    _chat("openai", "gpt-4o", 128_000, 16_384, (2.50, 10.00, 1.25, None)),
    # The first gpt-4o snapshot kept its launch price and has no cached-input discount.
    _chat("openai", "gpt-4o-2024-05-13", 128_000, 4_096, (5.00, 15.00, None, None)),
    _chat("openai", "gpt-4o-mini", 128_000, 16_384, (0.15, 0.60, 0.075, None)),
    _chat("openai", "gpt-4.1", 1_047_576, 32_768, (2.00, 8.00, 0.50, None)),
    _chat("openai", "gpt-4.1-mini", 1_047_576, 32_768, (0.40, 1.60, 0.10, None)),
    _chat("openai", "gpt-4.1-nano", 1_047_576, 32_768, (0.10, 0.40, 0.025, None)),
    _chat("openai", "o1", 200_000, 100_000, (15.00, 60.00, 7.50, None)),
    _chat("openai", "o3", 200_000, 100_000, (2.00, 8.00, 0.50, None)),
    _chat("openai", "o3-mini", 200_000, 100_000, (1.10, 4.40, 0.55, None)),
    _chat("openai", "o4-mini", 200_000, 100_000, (1.10, 4.40, 0.275, None)),
    _chat("openai", "gpt-5", 400_000, 128_000, (1.25, 10.00, 0.125, None)),
    _chat("openai", "gpt-5-mini", 400_000, 128_000, (0.25, 2.00, 0.025, None)),
    _chat("openai", "gpt-5-nano", 400_000, 128_000, (0.05, 0.40, 0.005, None)),
    _chat("openai", "gpt-5.1", 400_000, 128_000, (1.25, 10.00, 0.125, None)),
    _chat("openai", "gpt-5.2", 400_000, 128_000, (1.75, 14.00, 0.175, None)),
    # Over 272K prompt tokens the whole request bills at 2x input and 1.5x output.
    _chat(
        "openai",
        "gpt-5.4",
        1_050_000,
        128_000,
        (2.50, 15.00, 0.25, None),
        LongPromptPricing(272_000, 5.00, 22.50, 0.50),
    ),
    _chat(
        "openai",
        "gpt-5.5",
        1_050_000,
        128_000,
        (5.00, 30.00, 0.50, None),
        LongPromptPricing(272_000, 10.00, 45.00, 1.00),
    ),
    # Price unknown: see the module docstring.
    _chat("openai", "gpt-5.6-sol", 1_050_000, 128_000, None),
    _embedding("openai", "text-embedding-3-small", 8_191, 0.02, 1536),
    _embedding("openai", "text-embedding-3-large", 8_191, 0.13, 3072),
    _embedding("openai", "text-embedding-ada-002", 8_191, 0.10, 1536),
)

# Anthropic: cache writes at the 5-minute rate (1.25x input, the default TTL). Context windows
# are the standard ones: Sonnet 4 and 4.5 reach 1M only behind a beta header.
_ANTHROPIC = (
    _chat("anthropic", "claude-opus-4", 200_000, 32_000, (15.00, 75.00, 1.50, 18.75)),
    _chat("anthropic", "claude-opus-4-1", 200_000, 32_000, (15.00, 75.00, 1.50, 18.75)),
    _chat("anthropic", "claude-opus-4-5", 200_000, 64_000, (5.00, 25.00, 0.50, 6.25)),
    _chat("anthropic", "claude-opus-4-6", 1_000_000, 128_000, (5.00, 25.00, 0.50, 6.25)),
    _chat("anthropic", "claude-opus-4-7", 1_000_000, 128_000, (5.00, 25.00, 0.50, 6.25)),
    _chat("anthropic", "claude-opus-4-8", 1_000_000, 128_000, (5.00, 25.00, 0.50, 6.25)),
    _chat("anthropic", "claude-opus-5", 1_000_000, 128_000, (5.00, 25.00, 0.50, 6.25)),
    _chat("anthropic", "claude-opus-5-5", 1_000_000, 128_000, (4.00, 20.00, 0.20, 5.00)),
    _chat("anthropic", "claude-sonnet-4", 200_000, 64_000, (3.00, 15.00, 0.30, 3.75)),
    _chat("anthropic", "claude-sonnet-4-5", 200_000, 64_000, (3.00, 15.00, 0.30, 3.75)),
    _chat("anthropic", "claude-sonnet-4-6", 1_000_000, 128_000, (3.00, 15.00, 0.30, 3.75)),
    _chat("anthropic", "claude-sonnet-5", 1_000_000, 128_000, (2.00, 10.00, 0.20, 2.50)),
    # Cache reads cut from $0.20 to $0.10 on 2026-10-07.
    _chat("anthropic", "claude-sonnet-5-5", 1_000_000, 128_000, (2.00, 10.00, 0.10, 2.50)),
    _chat("anthropic", "claude-haiku-4-5", 200_000, 64_000, (1.00, 5.00, 0.10, 1.25)),
    _chat(
        "anthropic",
        "claude-haiku-5-5",
        1_000_000,
        128_000,
        (0.10, 0.50, 0.01, 0.125),
        LongPromptPricing(100_000, 0.50, 2.50, 0.05, 0.625),
    ),
    _chat("anthropic", "claude-3-5-haiku", 200_000, 8_192, (0.80, 4.00, 0.08, 1.00)),
)

# Gemini: cache reads are context-cache hits (90% off input); explicit cache creation bills the
# tokens as input plus storage by the hour, which no per-token price captures.
_GEMINI = (
    _chat(
        "gemini",
        "gemini-2.5-pro",
        1_048_576,
        65_536,
        (1.25, 10.00, 0.125, None),
        LongPromptPricing(200_000, 2.50, 15.00, 0.25),
    ),
    _chat("gemini", "gemini-2.5-flash", 1_048_576, 65_536, (0.30, 2.50, 0.03, None)),
    _chat("gemini", "gemini-2.5-flash-lite", 1_048_576, 65_536, (0.10, 0.40, 0.01, None)),
    _embedding("gemini", "gemini-embedding-001", 2_048, 0.15, 3072),
    _embedding("gemini", "gemini-embedding-2", 8_192, 0.20, 3072),
)

_OLLAMA = (_embedding("ollama", "nomic-embed-text", 8_192, 0.0, 768),)

_LOCAL = (_chat("local", DEFAULT_LOCAL_MODEL, LOCAL_CONTEXT_WINDOW, None, (0.0, 0.0, None, None)),)

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


_VENDOR_ENTRIES = (*_OPENAI, *_ANTHROPIC, *_GEMINI)
_CATALOG: dict[tuple[str, str], ModelInfo] = {
    (info.provider_id, info.model_id): info
    for info in (*_VENDOR_ENTRIES, *_openrouter_entries(_VENDOR_ENTRIES), *_OLLAMA, *_LOCAL)
}
_PROVIDER_ORDER = ("openai", "anthropic", "gemini", "openrouter", "ollama", "local")


def _candidate_ids(provider_id: str, model_id: str) -> Iterator[str]:
    """The ids to try for ``model_id`` on ``provider_id``, in the order of the lookup rules."""
    yield model_id
    bare = model_id.removeprefix("models/")
    yield bare
    alias = _ALIASES.get((provider_id, bare))
    if alias is not None:
        yield alias
    undated = _SNAPSHOT_SUFFIX.sub("", bare)
    yield undated
    alias = _ALIASES.get((provider_id, undated))
    if alias is not None:
        yield alias


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
    return replace(usage, cost_usd=cost_usd(provider_id, model_id, usage))
