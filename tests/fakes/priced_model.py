"""A priced model for budget and metering tests: ``acme:cheap`` in the model catalog."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest.mock import patch

from agentos.core.usage import ModelUsage
from agentos.llm import catalog
from agentos.llm.catalog import ModelInfo

# $1 per million prompt tokens, $2 per million output tokens.
CHEAP = ModelInfo(
    provider_id="acme",
    model_id="cheap",
    context_window=100_000,
    max_output_tokens=1000,
    input_per_million=1.0,
    output_per_million=2.0,
)


@contextmanager
def priced_catalog() -> Iterator[None]:
    """The model catalog with `CHEAP` in it, for the ``with`` block."""
    with patch.dict(catalog._CATALOG, {("acme", "cheap"): CHEAP}):
        yield


def price(usage: ModelUsage) -> float:
    """What ``usage`` costs on `CHEAP`."""
    cost = catalog.cost_usd("acme", "cheap", usage)
    assert cost is not None
    return cost
