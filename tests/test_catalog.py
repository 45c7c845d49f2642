"""The model catalog: figures, id lookup and aliases, and what a call costs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.core.usage import ModelUsage
from agentos.llm.catalog import (
    DEFAULT_CONTEXT_WINDOW,
    FREE_PROVIDERS,
    ModelInfo,
    context_window,
    cost_usd,
    embedding_dimension,
    find_model,
    model_info,
    models,
    priced,
)
from agentos.llm.local import DEFAULT_LOCAL_MODEL, LOCAL_CONTEXT_WINDOW


def info(provider_id: str, model_id: str) -> ModelInfo:
    found = model_info(provider_id, model_id)
    assert found is not None, f"{provider_id}:{model_id} is not in the catalog"
    return found


# --- figures ---------------------------------------------------------------------------------

# provider, model, context window, max output, input, output, cache read, cache write
CHAT_FIGURES = [
    ("openai", "gpt-4o", 128_000, 16_384, 2.50, 10.00, 1.25, None),
    ("openai", "gpt-4o-mini", 128_000, 16_384, 0.15, 0.60, 0.075, None),
    ("openai", "gpt-4.1", 1_047_576, 32_768, 2.00, 8.00, 0.50, None),
    ("openai", "gpt-4.1-mini", 1_047_576, 32_768, 0.40, 1.60, 0.10, None),
    ("openai", "gpt-4.1-nano", 1_047_576, 32_768, 0.10, 0.40, 0.025, None),
    ("openai", "o3", 200_000, 100_000, 2.00, 8.00, 0.50, None),
    ("openai", "o4-mini", 200_000, 100_000, 1.10, 4.40, 0.275, None),
    ("openai", "gpt-5", 400_000, 128_000, 1.25, 10.00, 0.125, None),
    ("openai", "gpt-5-mini", 400_000, 128_000, 0.25, 2.00, 0.025, None),
    ("openai", "gpt-5-nano", 400_000, 128_000, 0.05, 0.40, 0.005, None),
    ("openai", "gpt-5.4", 1_050_000, 128_000, 2.50, 15.00, 0.25, None),
    ("anthropic", "claude-opus-4-1", 200_000, 32_000, 15.00, 75.00, 1.50, 18.75),
    ("anthropic", "claude-opus-4-8", 1_000_000, 128_000, 5.00, 25.00, 0.50, 6.25),
    ("anthropic", "claude-sonnet-4", 200_000, 64_000, 3.00, 15.00, 0.30, 3.75),
    ("anthropic", "claude-sonnet-4-6", 1_000_000, 128_000, 3.00, 15.00, 0.30, 3.75),
    ("anthropic", "claude-sonnet-5", 1_000_000, 128_000, 2.00, 10.00, 0.20, 2.50),
    ("anthropic", "claude-haiku-4-5", 200_000, 64_000, 1.00, 5.00, 0.10, 1.25),
    ("anthropic", "claude-3-5-haiku", 200_000, 8_192, 0.80, 4.00, 0.08, 1.00),
    ("gemini", "gemini-2.5-pro", 1_048_576, 65_536, 1.25, 10.00, 0.125, None),
    ("gemini", "gemini-2.5-flash", 1_048_576, 65_536, 0.30, 2.50, 0.03, None),
    ("gemini", "gemini-2.5-flash-lite", 1_048_576, 65_536, 0.10, 0.40, 0.01, None),
    ("local", DEFAULT_LOCAL_MODEL, 8_192, None, 0.0, 0.0, None, None),
]


@pytest.mark.parametrize(
    ("provider", "model", "window", "max_output", "inp", "out", "read", "write"), CHAT_FIGURES
)
def test_chat_model_figures(
    provider: str,
    model: str,
    window: int,
    max_output: int | None,
    inp: float,
    out: float,
    read: float | None,
    write: float | None,
) -> None:
    entry = info(provider, model)
    assert (entry.provider_id, entry.model_id) == (provider, model)
    assert entry.context_window == window
    assert entry.max_output_tokens == max_output
    assert (entry.input_per_million, entry.output_per_million) == (inp, out)
    assert (entry.cache_read_per_million, entry.cache_write_per_million) == (read, write)
    assert entry.embedding_dimension is None
    assert context_window(provider, model) == window


@pytest.mark.parametrize(
    ("provider", "model", "dimension", "price", "input_limit"),
    [
        ("openai", "text-embedding-3-small", 1536, 0.02, 8_191),
        ("openai", "text-embedding-3-large", 3072, 0.13, 8_191),
        ("gemini", "gemini-embedding-2", 3072, 0.20, 8_192),
        ("gemini", "gemini-embedding-001", 3072, 0.15, 2_048),
        ("ollama", "nomic-embed-text", 768, 0.0, 8_192),
    ],
)
def test_embedding_model_figures(
    provider: str, model: str, dimension: int, price: float, input_limit: int
) -> None:
    entry = info(provider, model)
    assert entry.embedding_dimension == dimension
    assert embedding_dimension(provider, model) == dimension
    assert entry.input_per_million == price
    assert entry.output_per_million == 0.0
    assert entry.context_window == input_limit


def test_the_local_entry_is_the_bundled_model() -> None:
    entry = info("local", DEFAULT_LOCAL_MODEL)
    assert entry.context_window == LOCAL_CONTEXT_WINDOW
    assert entry.price_known


def test_long_prompt_prices() -> None:
    pro = info("gemini", "gemini-2.5-pro").long_prompt
    assert pro is not None
    assert (pro.threshold, pro.input_per_million, pro.output_per_million) == (200_000, 2.50, 15.00)
    assert pro.cache_read_per_million == 0.25
    haiku = info("anthropic", "claude-haiku-5-5")
    assert (haiku.input_per_million, haiku.output_per_million) == (0.10, 0.50)
    assert haiku.long_prompt is not None
    assert haiku.long_prompt.threshold == 100_000
    assert (haiku.long_prompt.input_per_million, haiku.long_prompt.output_per_million) == (
        0.50,
        2.50,
    )


def test_a_model_whose_price_is_not_known_has_no_price() -> None:
    entry = info("openai", "gpt-5.6-sol")
    assert entry.context_window == 1_050_000
    assert not entry.price_known
    assert cost_usd("openai", "gpt-5.6-sol", ModelUsage(prompt_tokens=10)) is None


# --- data sanity across the whole table ------------------------------------------------------


def test_no_model_id_is_held_by_two_providers() -> None:
    # find_model() looks providers up in turn; this keeps its answer independent of the order.
    ids = [entry.model_id for entry in models()]
    assert len(ids) == len(set(ids))


def test_every_entry_is_consistent() -> None:
    for entry in models():
        assert entry.context_window > 0, entry
        if entry.max_output_tokens is not None:
            assert 0 < entry.max_output_tokens <= entry.context_window, entry
        assert (entry.input_per_million is None) == (entry.output_per_million is None), entry
        if entry.input_per_million is not None and entry.cache_read_per_million is not None:
            assert entry.cache_read_per_million <= entry.input_per_million, entry
        if entry.embedding_dimension is not None:
            assert entry.output_per_million == 0.0, entry
        long = entry.long_prompt
        if long is not None:
            assert entry.input_per_million is not None, entry
            assert long.threshold < entry.context_window, entry
            assert long.input_per_million >= entry.input_per_million, entry


def test_models_lists_one_provider() -> None:
    anthropic = models("anthropic")
    assert anthropic
    assert {entry.provider_id for entry in anthropic} == {"anthropic"}
    assert models("nowhere") == ()


def test_openrouter_carries_every_openai_anthropic_and_gemini_model() -> None:
    vendors = len(models("openai")) + len(models("anthropic")) + len(models("gemini"))
    assert len(models("openrouter")) == vendors


# --- unknown models --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("openai", "gpt-9"),
        ("openai", "claude-sonnet-4"),  # a model on another provider is not this provider's
        ("anthropic", "claude-sonnet-4-2025051"),  # seven digits are no date
        ("openai", "gpt-4o-2024"),
        ("openai", "gpt-4o-mini-search-preview"),
        ("openrouter", "gpt-4o"),
        ("openrouter", "meta-llama/llama-3.3-70b-instruct"),
        ("ollama", "llama3.2"),
        ("nowhere", "gpt-4o"),
    ],
)
def test_an_unknown_model_has_the_default_window_and_no_price(provider: str, model: str) -> None:
    usage = ModelUsage(prompt_tokens=1_000, completion_tokens=100)
    assert model_info(provider, model) is None
    assert context_window(provider, model) == DEFAULT_CONTEXT_WINDOW == 8192
    assert embedding_dimension(provider, model) is None
    if provider not in FREE_PROVIDERS:
        assert cost_usd(provider, model, usage) is None
        assert priced(provider, model, usage).cost_usd is None


# --- aliases and dated snapshots -------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "asked", "found"),
    [
        ("openai", "gpt-4o-2024-08-06", "gpt-4o"),
        ("openai", "gpt-4o-2024-11-20", "gpt-4o"),
        ("openai", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("openai", "gpt-4.1-2025-04-14", "gpt-4.1"),
        ("openai", "gpt-5-2025-08-07", "gpt-5"),
        ("anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("anthropic", "claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("anthropic", "claude-opus-4-5-20251101", "claude-opus-4-5"),
        ("anthropic", "claude-3-5-haiku-20241022", "claude-3-5-haiku"),
        ("anthropic", "claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("anthropic", "claude-sonnet-4-0", "claude-sonnet-4"),
        ("anthropic", "claude-opus-4-0", "claude-opus-4"),
        ("gemini", "models/gemini-2.5-flash", "gemini-2.5-flash"),
    ],
)
def test_a_dated_snapshot_or_alias_finds_its_model(provider: str, asked: str, found: str) -> None:
    assert info(provider, asked) == info(provider, found)
    assert context_window(provider, asked) == info(provider, found).context_window


def test_an_entry_for_the_exact_snapshot_wins_over_the_alias_rule() -> None:
    snapshot = info("openai", "gpt-4o-2024-05-13")
    assert snapshot.model_id == "gpt-4o-2024-05-13"
    assert (snapshot.input_per_million, snapshot.output_per_million) == (5.00, 15.00)
    assert snapshot.max_output_tokens == 4_096
    assert info("openai", "gpt-4o").input_per_million == 2.50


# --- OpenRouter ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("asked", "found", "vendor", "vendor_model"),
    [
        ("openai/gpt-4o", "openai/gpt-4o", "openai", "gpt-4o"),
        ("openai/gpt-4o-mini", "openai/gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("openai/gpt-4o-2024-08-06", "openai/gpt-4o", "openai", "gpt-4o"),
        (
            "anthropic/claude-sonnet-4.5",
            "anthropic/claude-sonnet-4.5",
            "anthropic",
            "claude-sonnet-4-5",
        ),
        (
            "anthropic/claude-sonnet-4-5",
            "anthropic/claude-sonnet-4.5",
            "anthropic",
            "claude-sonnet-4-5",
        ),
        (
            "anthropic/claude-3.5-haiku",
            "anthropic/claude-3.5-haiku",
            "anthropic",
            "claude-3-5-haiku",
        ),
        ("anthropic/claude-sonnet-4", "anthropic/claude-sonnet-4", "anthropic", "claude-sonnet-4"),
        ("google/gemini-2.5-pro", "google/gemini-2.5-pro", "gemini", "gemini-2.5-pro"),
        ("google/gemini-embedding-2", "google/gemini-embedding-2", "gemini", "gemini-embedding-2"),
    ],
)
def test_openrouter_models_carry_their_vendors_figures(
    asked: str, found: str, vendor: str, vendor_model: str
) -> None:
    routed = info("openrouter", asked)
    own = info(vendor, vendor_model)
    assert (routed.provider_id, routed.model_id) == ("openrouter", found)
    assert routed.context_window == own.context_window
    assert routed.max_output_tokens == own.max_output_tokens
    assert routed.input_per_million == own.input_per_million
    assert routed.output_per_million == own.output_per_million
    assert routed.cache_read_per_million == own.cache_read_per_million
    assert routed.cache_write_per_million == own.cache_write_per_million
    assert routed.embedding_dimension == own.embedding_dimension


# --- find_model ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "provider", "found"),
    [
        ("gpt-4o", "openai", "gpt-4o"),
        ("gpt-4o-2024-08-06", "openai", "gpt-4o"),
        ("claude-sonnet-4-20250514", "anthropic", "claude-sonnet-4"),
        ("gemini-2.5-flash", "gemini", "gemini-2.5-flash"),
        ("openai/gpt-4o", "openrouter", "openai/gpt-4o"),
        ("anthropic/claude-haiku-4.5", "openrouter", "anthropic/claude-haiku-4.5"),
        ("anthropic:claude-sonnet-4", "anthropic", "claude-sonnet-4"),
        ("openrouter:openai/gpt-4o", "openrouter", "openai/gpt-4o"),
        ("nomic-embed-text", "ollama", "nomic-embed-text"),
        (DEFAULT_LOCAL_MODEL, "local", DEFAULT_LOCAL_MODEL),
        (f"local:{DEFAULT_LOCAL_MODEL}", "local", DEFAULT_LOCAL_MODEL),
    ],
)
def test_find_model_looks_a_model_up_by_id_alone(model: str, provider: str, found: str) -> None:
    entry = find_model(model)
    assert entry is not None
    assert (entry.provider_id, entry.model_id) == (provider, found)


@pytest.mark.parametrize(
    "model", ["gpt-9", "llama3:8b", "anthropic:gpt-4o", "openai:claude-sonnet-4", "", ":"]
)
def test_find_model_gives_none_for_an_unknown_model(model: str) -> None:
    assert find_model(model) is None


# --- cost arithmetic -------------------------------------------------------------------------


def test_cost_of_input_and_output() -> None:
    usage = ModelUsage(prompt_tokens=1_200, completion_tokens=300)
    # 1,200 x $2.50 + 300 x $10.00, per million
    assert cost_usd("openai", "gpt-4o", usage) == pytest.approx(0.006)
    assert cost_usd("openai", "gpt-4o", ModelUsage(prompt_tokens=1_000_000)) == pytest.approx(2.50)
    assert cost_usd("openai", "gpt-4o", ModelUsage.zero()) == 0.0


def test_cost_bills_cache_reads_inside_the_prompt_at_the_cache_price() -> None:
    usage = ModelUsage(prompt_tokens=10_000, completion_tokens=500, cache_read_tokens=8_000)
    # 2,000 uncached x $2.50 + 8,000 cached x $1.25 + 500 x $10.00
    assert cost_usd("openai", "gpt-4o", usage) == pytest.approx(0.02)


def test_cost_bills_anthropic_cache_reads_and_writes() -> None:
    usage = ModelUsage(
        prompt_tokens=100_000,
        completion_tokens=2_000,
        cache_read_tokens=60_000,
        cache_write_tokens=30_000,
    )
    # 10,000 x $3 + 60,000 x $0.30 + 30,000 x $3.75 + 2,000 x $15
    assert cost_usd("anthropic", "claude-sonnet-4", usage) == pytest.approx(0.1905)
    dated = cost_usd("anthropic", "claude-sonnet-4-20250514", usage)
    assert dated == pytest.approx(0.1905)


def test_a_cache_price_the_catalog_lacks_bills_at_the_input_price() -> None:
    writes = ModelUsage(prompt_tokens=1_000, cache_write_tokens=1_000)
    assert cost_usd("gemini", "gemini-2.5-flash", writes) == pytest.approx(1_000 * 0.30 / 1e6)
    reads = ModelUsage(prompt_tokens=1_000, cache_read_tokens=1_000)
    assert cost_usd("openai", "gpt-4o-2024-05-13", reads) == pytest.approx(1_000 * 5.00 / 1e6)


def test_cache_tokens_beyond_the_prompt_never_make_the_cost_negative() -> None:
    usage = ModelUsage(prompt_tokens=100, cache_read_tokens=500)
    assert cost_usd("openai", "gpt-4o", usage) == pytest.approx(500 * 1.25 / 1e6)


def test_a_long_prompt_bills_every_token_at_the_long_prompt_prices() -> None:
    at_threshold = ModelUsage(prompt_tokens=200_000, completion_tokens=1_000)
    # 200,000 x $1.25 + 1,000 x $10
    assert cost_usd("gemini", "gemini-2.5-pro", at_threshold) == pytest.approx(0.26)
    over = ModelUsage(prompt_tokens=200_001, completion_tokens=1_000)
    # 200,001 x $2.50 + 1,000 x $15
    assert cost_usd("gemini", "gemini-2.5-pro", over) == pytest.approx(0.5150025)


def test_a_long_prompt_counts_its_cached_tokens() -> None:
    usage = ModelUsage(prompt_tokens=150_000, completion_tokens=1_000, cache_read_tokens=100_000)
    # over 100,000: 50,000 x $0.50 + 100,000 x $0.05 + 1,000 x $2.50
    assert cost_usd("anthropic", "claude-haiku-5-5", usage) == pytest.approx(0.0325)
    short = ModelUsage(prompt_tokens=90_000, completion_tokens=1_000, cache_read_tokens=80_000)
    # 10,000 x $0.10 + 80,000 x $0.01 + 1,000 x $0.50
    assert cost_usd("anthropic", "claude-haiku-5-5", short) == pytest.approx(0.0023)


def test_gpt_5_4_over_272k_prompt_tokens() -> None:
    usage = ModelUsage(prompt_tokens=300_000, completion_tokens=10_000)
    # 300,000 x $5.00 + 10,000 x $22.50
    assert cost_usd("openai", "gpt-5.4", usage) == pytest.approx(1.725)


def test_an_embedding_call_costs_its_input() -> None:
    usage = ModelUsage(prompt_tokens=1_000_000)
    assert cost_usd("openai", "text-embedding-3-small", usage) == pytest.approx(0.02)
    assert cost_usd("gemini", "gemini-embedding-2", usage) == pytest.approx(0.20)


def test_openrouter_costs_the_vendors_price() -> None:
    usage = ModelUsage(prompt_tokens=10_000, completion_tokens=500, cache_read_tokens=8_000)
    assert cost_usd("openrouter", "openai/gpt-4o", usage) == pytest.approx(0.02)


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("local", DEFAULT_LOCAL_MODEL),
        ("local", "tiny-chat"),
        ("ollama", "llama3.2"),
        ("ollama", "qwen2.5:7b"),
        ("ollama", "nomic-embed-text"),
    ],
)
def test_free_providers_cost_nothing_known_model_or_not(provider: str, model: str) -> None:
    usage = ModelUsage(prompt_tokens=5_000, completion_tokens=1_000, cache_read_tokens=1_000)
    assert cost_usd(provider, model, usage) == 0.0
    assert priced(provider, model, usage).cost_usd == 0.0


def test_priced_fills_in_the_cost_and_keeps_a_providers_own() -> None:
    usage = ModelUsage(prompt_tokens=1_200, completion_tokens=300)
    assert priced("openai", "gpt-4o", usage).cost_usd == pytest.approx(0.006)
    reported = ModelUsage(prompt_tokens=1_200, completion_tokens=300, cost_usd=0.5)
    assert priced("openai", "gpt-4o", reported) is reported
    assert priced("openai", "gpt-9", usage).cost_usd is None


_PRICED_CHAT = [
    entry
    for entry in models()
    if entry.price_known and entry.embedding_dimension is None and entry.provider_id != "local"
]


@given(
    entry=st.sampled_from(_PRICED_CHAT),
    prompt=st.integers(0, 2_000_000),
    completion=st.integers(0, 200_000),
    cached_share=st.floats(0.0, 1.0),
)
def test_reading_from_the_cache_never_costs_more_than_sending_the_tokens(
    entry: ModelInfo, prompt: int, completion: int, cached_share: float
) -> None:
    cached = int(prompt * cached_share)
    plain = entry.cost(ModelUsage(prompt_tokens=prompt, completion_tokens=completion))
    with_cache = entry.cost(
        ModelUsage(prompt_tokens=prompt, completion_tokens=completion, cache_read_tokens=cached)
    )
    assert plain is not None
    assert with_cache is not None
    assert 0.0 <= with_cache <= plain + 1e-12
