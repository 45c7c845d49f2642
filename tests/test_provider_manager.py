"""`AIModelProviderManager`: providers by id, a model's provider, injected and built models."""

from __future__ import annotations

import sys
import types
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from agentos import GMIError, GMIErrorCode
from agentos.llm import (
    DEFAULT_LOCAL_MODEL,
    FinishChunk,
    LocalModel,
    ModelChunk,
    ModelRequest,
    TextDelta,
)
from agentos.llm.model import closing_stream
from agentos.llm.provider_manager import AIModelProviderManager, ModelProvider
from agentos.llm.resolve import set_default_provider
from agentos.testing import ScriptedModel

NO_KEYS: dict[str, str] = {}


@dataclass(frozen=True)
class Built:
    """How a fake OpenAI-compatible adapter was constructed."""

    model_id: str
    provider_id: str
    api_key: str | None
    base_url: str | None


class FakeOpenAIModel:
    """Stands in for ``agentos.llm.providers.openai.OpenAIModel`` (and Anthropic's, Gemini's)."""

    built: list[Built]
    own_provider = "openai"

    def __init__(
        self,
        model_id: str,
        *,
        provider_id: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> None:
        self._provider_id = provider_id or self.own_provider
        self._model_id = model_id
        self.built.append(Built(model_id, self._provider_id, api_key, base_url))

    @property
    def provider_id(self) -> str:
        return self._provider_id

    @property
    def model_id(self) -> str:
        return self._model_id

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        yield FinishChunk("stop")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> None:
    """No process-wide default provider, and the local extra counts as installed."""
    monkeypatch.setattr("agentos.llm.resolve._default_provider", None)
    monkeypatch.setattr("agentos.llm.provider_manager.local_model_available", lambda: True)
    monkeypatch.setattr("agentos.llm.resolve.local_model_available", lambda: True)


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[Built]:
    """Fake adapter modules in sys.modules, so no test depends on the real adapters."""
    record: list[Built] = []
    for module_name, class_name, provider in (
        ("agentos.llm.providers.openai", "OpenAIModel", "openai"),
        ("agentos.llm.providers.anthropic", "AnthropicModel", "anthropic"),
        ("agentos.llm.providers.gemini", "GeminiModel", "gemini"),
    ):
        module = types.ModuleType(module_name)
        adapter = type(class_name, (FakeOpenAIModel,), {"built": record, "own_provider": provider})
        setattr(module, class_name, adapter)
        monkeypatch.setitem(sys.modules, module_name, module)
    return record


KEYS = {
    "OPENAI_API_KEY": "k-openai",
    "ANTHROPIC_API_KEY": "k-anthropic",
    "OPENROUTER_API_KEY": "k-openrouter",
    "GEMINI_API_KEY": "k-gemini",
    "GROQ_API_KEY": "k-groq",
    "OLLAMA_BASE_URL": "http://gpu-box:11434",
}


# --- registered models -----------------------------------------------------------------------


async def test_a_registered_model_serves_its_id() -> None:
    manager = AIModelProviderManager(environ=NO_KEYS)
    scripted = ScriptedModel(["Hello there"])
    manager.register_model(scripted)
    assert manager.get_provider_for_model("scripted-model") == "scripted"
    model = manager.get_model("scripted-model")
    assert model is scripted
    assert manager.get_model("scripted:scripted-model") is scripted
    assert manager.get_model(provider_id="scripted") is scripted
    request = ModelRequest(messages=[])
    async with closing_stream(model.stream(request)) as stream:
        text = "".join([c.text async for c in stream if isinstance(c, TextDelta)])
    assert text == "Hello there"


def test_a_registered_model_can_be_the_default() -> None:
    manager = AIModelProviderManager(environ=KEYS)
    scripted = ScriptedModel(["hi"])
    manager.register_model(scripted, default=True)
    assert manager.default_provider_id == "scripted"
    assert manager.get_model() is scripted
    assert manager.get_provider_for_model("some-other-model") == "scripted"


def test_a_registered_model_replaces_a_built_one_for_a_known_provider(built: list[Built]) -> None:
    manager = AIModelProviderManager(environ=KEYS)
    scripted = ScriptedModel(["hi"], provider_id="openai", model_id="gpt-4o")
    manager.register_model(scripted)
    assert manager.get_model("gpt-4o") is scripted
    assert manager.get_model("gpt-4o", "openai") is scripted
    assert manager.get_model("openai:gpt-4o") is scripted
    assert built == []


def test_a_registered_only_provider_serves_nothing_else() -> None:
    manager = AIModelProviderManager(environ=NO_KEYS)
    manager.register_model(ScriptedModel(["hi"]))
    with pytest.raises(GMIError) as caught:
        manager.get_model("another-model", "scripted")
    assert caught.value.code is GMIErrorCode.NOT_FOUND
    assert caught.value.message == (
        "Provider 'scripted' serves only its registered models (scripted-model), "
        "not 'another-model'"
    )
    assert caught.value.details == {
        "option": "model",
        "provider": "scripted",
        "model": "another-model",
    }


def test_register_model_refuses_what_is_not_a_chat_model() -> None:
    manager = AIModelProviderManager(environ=NO_KEYS)
    with pytest.raises(GMIError) as caught:
        manager.register_model("gpt-4o")  # type: ignore[arg-type]
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "model"}


# --- get_provider_for_model: the reference's order -------------------------------------------


def test_the_model_map_comes_first() -> None:
    manager = AIModelProviderManager(model_map={"gpt-4o-mini": "openrouter"}, environ=KEYS)
    assert manager.get_provider_for_model("gpt-4o-mini") == "openrouter"


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("gpt-4o-mini", "openai"),
        ("claude-sonnet-4-6", "anthropic"),
        ("gemini-2.5-flash", "gemini"),
        # OpenRouter's default model: this rule comes before the "openai/" prefix.
        ("openai/gpt-4o-mini", "openrouter"),
        ("llama-3.3-70b-versatile", "groq"),
        ("llama3.2", "ollama"),
        (DEFAULT_LOCAL_MODEL, "local"),
    ],
)
def test_then_the_provider_whose_default_model_it_is(model: str, provider: str) -> None:
    manager = AIModelProviderManager("xai", environ=NO_KEYS)
    assert manager.get_provider_for_model(model) == provider


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("openai/gpt-4o", "openai"),
        ("anthropic/claude-opus-4-8", "anthropic"),
        ("anthropic:claude-opus-4-8", "anthropic"),
        ("ollama:llama3:8b", "ollama"),
        ("openrouter:openai/gpt-4o", "openrouter"),
    ],
)
def test_then_the_provider_named_before_a_slash_or_colon(model: str, provider: str) -> None:
    manager = AIModelProviderManager("xai", environ=NO_KEYS)
    assert manager.get_provider_for_model(model) == provider


@pytest.mark.parametrize("model", ["grok-4.5-mini", "llama3:8b", "meta-llama/Llama-3.3-70B"])
def test_then_the_default_provider(model: str) -> None:
    manager = AIModelProviderManager("groq", environ=NO_KEYS)
    assert manager.get_provider_for_model(model) == "groq"


def test_the_default_provider_falls_back_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = AIModelProviderManager("mistral", environ=KEYS)
    assert explicit.default_provider_id == "mistral"
    scanned = AIModelProviderManager(environ={"GEMINI_API_KEY": "k", "OLLAMA_BASE_URL": "h"})
    assert scanned.default_provider_id == "gemini"
    set_default_provider("together")
    assert scanned.default_provider_id == "together"
    assert explicit.default_provider_id == "mistral"
    set_default_provider(None)
    nothing = AIModelProviderManager(environ=NO_KEYS)
    assert nothing.default_provider_id == "local"
    monkeypatch.setattr("agentos.llm.provider_manager.local_model_available", lambda: False)
    assert nothing.default_provider_id is None


def test_no_default_provider_at_all_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agentos.llm.provider_manager.local_model_available", lambda: False)
    manager = AIModelProviderManager(environ=NO_KEYS)
    for call in (lambda: manager.get_provider_for_model("some-model"), manager.get_model):
        with pytest.raises(GMIError) as caught:
            call()
        assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
        assert caught.value.message.startswith(
            "No provider is configured: pass default_provider_id"
        )
        assert caught.value.details == {"option": "provider", "extra": "local"}


# --- get_model: built on first use, kept ------------------------------------------------------


def test_get_model_builds_the_model_once(built: list[Built]) -> None:
    manager = AIModelProviderManager(environ=KEYS)
    first = manager.get_model("gpt-4o")
    assert (first.provider_id, first.model_id) == ("openai", "gpt-4o")
    assert manager.get_model("gpt-4o") is first
    assert manager.get_model("openai:gpt-4o") is first
    assert manager.get_model("gpt-4o", "openai") is first
    assert manager.get_model("gpt-4.1") is not first
    assert built == [
        Built("gpt-4o", "openai", "k-openai", None),
        Built("gpt-4.1", "openai", "k-openai", None),
    ]


def test_get_model_takes_a_slash_id_whole_on_a_named_provider(built: list[Built]) -> None:
    manager = AIModelProviderManager(environ=KEYS)
    routed = manager.get_model("openai/gpt-4o", "openrouter")
    direct = manager.get_model("openai/gpt-4o")
    assert (routed.provider_id, routed.model_id) == ("openrouter", "openai/gpt-4o")
    assert (direct.provider_id, direct.model_id) == ("openai", "gpt-4o")
    assert built == [
        Built("openai/gpt-4o", "openrouter", "k-openrouter", "https://openrouter.ai/api/v1"),
        Built("gpt-4o", "openai", "k-openai", None),
    ]


def test_get_model_without_a_model_gives_the_providers_default(built: list[Built]) -> None:
    manager = AIModelProviderManager("anthropic", environ=KEYS)
    assert manager.get_model().model_id == "claude-sonnet-4-6"
    assert manager.get_model(provider_id="gemini").model_id == "gemini-2.5-flash"
    assert manager.get_model(provider_id="ollama").model_id == "llama3.2"
    assert built[-1] == Built("llama3.2", "ollama", "ollama", "http://gpu-box:11434/v1")


def test_get_model_serves_the_local_model_by_default() -> None:
    model = AIModelProviderManager(environ=NO_KEYS).get_model()
    assert isinstance(model, LocalModel)
    assert model.model_id == DEFAULT_LOCAL_MODEL


def test_keys_and_endpoints_given_to_the_manager_win(built: list[Built]) -> None:
    manager = AIModelProviderManager(
        api_keys={"openai": "k-arg"},
        base_urls={"groq": "http://127.0.0.1:9/v1"},
        environ=KEYS,
    )
    manager.get_model("gpt-4o")
    manager.get_model(provider_id="groq")
    assert built == [
        Built("gpt-4o", "openai", "k-arg", None),
        Built("llama-3.3-70b-versatile", "groq", "k-groq", "http://127.0.0.1:9/v1"),
    ]


def test_keys_set_after_construction_are_read_on_first_use(built: list[Built]) -> None:
    environ: dict[str, str] = {}
    manager = AIModelProviderManager("openai", environ=environ)
    with pytest.raises(GMIError) as caught:
        manager.get_model("gpt-4o")
    assert caught.value.details == {
        "option": "api_key",
        "provider": "openai",
        "env": "OPENAI_API_KEY",
    }
    environ["OPENAI_API_KEY"] = "k-late"
    assert manager.get_model("gpt-4o").model_id == "gpt-4o"  # the failed build was not kept
    assert built == [Built("gpt-4o", "openai", "k-late", None)]


def test_get_model_refuses_a_model_string_naming_another_provider() -> None:
    manager = AIModelProviderManager(environ=KEYS)
    with pytest.raises(GMIError) as caught:
        manager.get_model("openai:gpt-4o", "anthropic")
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "model"}


def test_get_model_refuses_an_unknown_provider() -> None:
    manager = AIModelProviderManager(environ=KEYS)
    with pytest.raises(GMIError) as caught:
        manager.get_model("m", "nowhere")
    assert caught.value.code is GMIErrorCode.PROVIDER_NOT_FOUND
    assert caught.value.details == {"option": "provider", "provider": "nowhere"}


# --- providers by id ---------------------------------------------------------------------------


def test_list_provider_ids_names_the_providers_it_can_serve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manager = AIModelProviderManager(
        api_keys={"gemini": "k"},
        environ={"OPENAI_API_KEY": "k", "OLLAMA_BASE_URL": "http://h"},
    )
    manager.register_model(ScriptedModel(["hi"], provider_id="xai", model_id="grok-x"))
    manager.register_model(ScriptedModel(["hi"]))
    assert manager.list_provider_ids() == ["openai", "gemini", "xai", "ollama", "local", "scripted"]
    monkeypatch.setattr("agentos.llm.provider_manager.local_model_available", lambda: False)
    assert "local" not in manager.list_provider_ids()


def test_get_provider_answers_for_the_providers_it_serves(built: list[Built]) -> None:
    manager = AIModelProviderManager(environ={"OPENAI_API_KEY": "k"})
    manager.register_model(ScriptedModel(["hi"]))
    openai = manager.get_provider("openai")
    assert openai == ModelProvider(manager, "openai", "gpt-4o-mini")
    assert openai is not None
    assert openai.get_model().model_id == "gpt-4o-mini"
    assert openai.get_model("gpt-4.1").model_id == "gpt-4.1"
    scripted = manager.get_provider("scripted")
    assert scripted is not None
    assert scripted.default_model_id == "scripted-model"
    assert manager.get_provider("anthropic") is None
    assert manager.get_provider("nowhere") is None


# --- refusals at construction -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "option", "code"),
    [
        (
            {"default_provider_id": "nowhere"},
            "default_provider_id",
            GMIErrorCode.PROVIDER_NOT_FOUND,
        ),
        ({"api_keys": {"nowhere": "k"}}, "api_keys", GMIErrorCode.PROVIDER_NOT_FOUND),
        ({"base_urls": {"nowhere": "http://h"}}, "base_urls", GMIErrorCode.PROVIDER_NOT_FOUND),
        ({"model_map": {"m": "nowhere"}}, "model_map", GMIErrorCode.PROVIDER_NOT_FOUND),
        ({"api_keys": {"openai": ""}}, "api_keys", GMIErrorCode.INVALID_ARGUMENT),
        ({"model_map": {"m": 3}}, "model_map", GMIErrorCode.INVALID_ARGUMENT),
    ],
)
def test_bad_arguments_are_refused_naming_the_option(
    kwargs: dict[str, object], option: str, code: GMIErrorCode
) -> None:
    with pytest.raises(GMIError) as caught:
        AIModelProviderManager(**kwargs)  # type: ignore[arg-type]
    assert caught.value.code is code
    assert caught.value.details["option"] == option


def test_configured_provider_is_the_default_else_the_first_with_credentials() -> None:
    from agentos.llm import configured_provider

    assert configured_provider({}) is None  # nothing set: the local model
    assert configured_provider({"ANTHROPIC_API_KEY": "k", "GROQ_API_KEY": "k"}) == "anthropic"
    assert configured_provider({"OLLAMA_BASE_URL": "http://127.0.0.1:1"}) == "ollama"
    set_default_provider("groq")
    assert configured_provider({"ANTHROPIC_API_KEY": "k"}) == "groq"
