"""Shared fixtures: every test runs without provider keys in its environment.

Under CI (``CI`` set) hypothesis runs derandomized, so a run is repeatable; elsewhere it
searches with fresh randomness each run, which is how new counterexamples are found.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from agentos.llm.resolve import set_default_provider

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "OLLAMA_BASE_URL",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "MISTRAL_API_KEY",
    "XAI_API_KEY",
)


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's keys, so nothing reaches a real provider."""
    for key in PROVIDER_KEYS:
        monkeypatch.delenv(key, raising=False)


@pytest.fixture(autouse=True)
def _no_default_provider() -> Iterator[None]:
    """A test that sets the process-wide default provider leaves none behind."""
    set_default_provider(None)
    yield
    set_default_provider(None)
