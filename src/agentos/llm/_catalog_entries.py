"""The catalog's entries: what agentos knows of each model, and the figures it holds.

`ModelInfo` is one entry (context window, output limit, embedding size, prices in USD per
million tokens, ``None`` when unknown) and knows what a call on it costs; the tables below are
the vendors' models, dated and sourced as `agentos.llm.catalog` says. The catalog's lookups
(`agentos.llm.catalog.model_info`, ...) read them.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentos.core.usage import ModelUsage
from agentos.llm.local import DEFAULT_LOCAL_MODEL, LOCAL_CONTEXT_WINDOW

__all__ = ["ANTHROPIC", "GEMINI", "LOCAL", "OLLAMA", "OPENAI", "LongPromptPricing", "ModelInfo"]


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

        See `agentos.llm.catalog` for how cached tokens and long prompts are billed.
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
OPENAI = (
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
ANTHROPIC = (
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
GEMINI = (
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

OLLAMA = (_embedding("ollama", "nomic-embed-text", 8_192, 0.0, 768),)

LOCAL = (_chat("local", DEFAULT_LOCAL_MODEL, LOCAL_CONTEXT_WINDOW, None, (0.0, 0.0, None, None)),)
