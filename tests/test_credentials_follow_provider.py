"""Credentials follow the provider (spec, "Model calls through a completion gateway"; DESIGN §5.20).

The ``api_key`` / ``base_url`` given beside a provider apply to every hop and every embedding on
that provider unless the hop or the embedding names its own; a hop or an embedding on another
provider runs on its own credentials or on that provider's from the environment. Each test runs
the real OpenAI SDK against loopback servers that speak its wire format and checks the exact
``Authorization`` header, path and model of every request each server received.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos import (
    GenerateTextResult,
    GmiAgent,
    GMIError,
    GMIErrorCode,
    Message,
    agent,
    generate_text,
    gmi,
    stream_text,
)
from agentos.llm import (
    FallbackLeg,
    GatewayDefaults,
    ModelRequest,
    TextDelta,
    create_completion_gateway,
)
from agentos.llm.credentials import ProviderCredentials
from agentos.substrate import GMI, GMIConfig, TurnOptions
from agentos.testing import ScriptedModel
from fakes.gmi_helpers import persona, run, turn
from fakes.loopback import LoopbackServer, RecordedRequest, Reply
from fakes.openai_server import ChunkMaker, embeddings_reply, error_body, error_reply, stream_reply

EMBEDDING_SIZE = 1536  # text-embedding-3-small

Seen = tuple[str, str | None, str | None]
"""One request as a server saw it: path, Authorization header, model."""


class Endpoint:
    """A loopback OpenAI-wire server: chat replies scripted per model, embeddings of any text.

    A chat request for a model with no reply left gets HTTP 418 (no gateway falls back on it),
    so an unexpected request fails the test loudly.
    """

    def __init__(self, chat: Mapping[str, Sequence[Reply]] | None = None) -> None:
        self._chat = {model: deque(replies) for model, replies in (chat or {}).items()}
        self.server = LoopbackServer(self._answer)

    def _answer(self, request: RecordedRequest) -> Reply:
        body = request.json or {}
        if request.path.endswith("/embeddings"):
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            return embeddings_reply([_vector(text) for text in texts])
        replies = self._chat.get(str(body.get("model")))
        if replies:
            return replies.popleft()
        return Reply(status=418, json=error_body("unscripted", "unscripted", None))

    @property
    def base_url(self) -> str:
        return f"{self.server.url}/v1"

    @property
    def seen(self) -> list[Seen]:
        return [
            (r.path, r.headers.get("authorization"), (r.json or {}).get("model"))
            for r in self.server.requests
        ]


def _vector(text: object) -> list[float]:
    vector = [0.0] * EMBEDDING_SIZE
    vector[len(str(text)) % EMBEDDING_SIZE] = 1.0
    return vector


def answer(*pieces: str) -> Reply:
    return stream_reply(ChunkMaker().text_events(list(pieces)))


def unavailable() -> Reply:
    """HTTP 503 before any output: a retryable failure, so the gateway falls back."""
    return error_reply(503, error_body("The server is overloaded.", "server_error", None))


def primary(endpoint: Endpoint) -> dict[str, Any]:
    """The call's primary: OpenAI's ``primary-model`` on ``endpoint`` with the key ``sk-a``."""
    return {
        "provider": "openai",
        "model": "primary-model",
        "api_key": "sk-a",
        "base_url": endpoint.base_url,
    }


async def send_once(agent: GmiAgent, text: str) -> GenerateTextResult:
    """One turn of session ``s``; the agent is closed after it, whatever happens."""
    try:
        return await agent.session("s").send(text)
    finally:
        await agent.close()


CHAT = "/v1/chat/completions"
EMBED = "/v1/embeddings"


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Endpoint]]:
    """Started endpoints (append to the list, then start with `start`); no SDK variable set."""
    for variable in ("OPENAI_BASE_URL", "OPENROUTER_BASE_URL", "OPENAI_ORG_ID"):
        monkeypatch.delenv(variable, raising=False)
    started: list[Endpoint] = []
    yield started
    for endpoint in started:
        endpoint.server.__exit__()


def start(servers: list[Endpoint], chat: Mapping[str, Sequence[Reply]] | None = None) -> Endpoint:
    endpoint = Endpoint(chat)
    endpoint.server.__enter__()
    servers.append(endpoint)
    return endpoint


# --- (a) a fallback hop on the primary's provider: the same server, the same key -----------------


async def test_generate_text_backup_model_on_the_primarys_server_serves(
    servers: list[Endpoint],
) -> None:
    a = start(servers, {"primary-model": [unavailable()], "backup-model": [answer("backup")]})
    result = await generate_text(
        "Hi",
        **primary(a),
        fallback_providers=[{"provider": "openai", "model": "backup-model"}],
    )
    assert result.text == "backup"
    assert a.seen == [
        (CHAT, "Bearer sk-a", "primary-model"),
        (CHAT, "Bearer sk-a", "backup-model"),
    ]


async def test_stream_text_backup_model_named_by_a_provider_prefix_serves(
    servers: list[Endpoint],
) -> None:
    a = start(servers, {"primary-model": [unavailable()], "backup-model": [answer("back", "up")]})
    stream = stream_text(
        "Hi",
        model="openai:primary-model",
        api_key="sk-a",
        base_url=a.base_url,
        fallback_providers=[FallbackLeg("openai", "backup-model")],
    )
    assert [piece async for piece in stream.text_stream] == ["back", "up"]
    assert a.seen == [
        (CHAT, "Bearer sk-a", "primary-model"),
        (CHAT, "Bearer sk-a", "backup-model"),
    ]


async def test_gmi_backup_model_on_the_primarys_server_serves(servers: list[Endpoint]) -> None:
    a = start(servers, {"primary-model": [unavailable()], "backup-model": [answer("backup")]})
    agent = gmi(
        **primary(a),
        fallback_providers=[{"provider": "openai", "model": "backup-model"}],
    )
    result = await send_once(agent, "Hi")
    assert result.text == "backup"
    assert a.seen == [
        (CHAT, "Bearer sk-a", "primary-model"),
        (CHAT, "Bearer sk-a", "backup-model"),
    ]


async def test_agent_backup_model_on_the_primarys_server_serves(servers: list[Endpoint]) -> None:
    a = start(servers, {"primary-model": [unavailable()], "backup-model": [answer("backup")]})
    plain = agent(**primary(a), fallback_providers=[FallbackLeg("openai", "backup-model")])
    try:
        result = await plain.session("s").send("Hi")
    finally:
        await plain.close()
    assert result.text == "backup"
    assert a.seen == [
        (CHAT, "Bearer sk-a", "primary-model"),
        (CHAT, "Bearer sk-a", "backup-model"),
    ]


# --- (b) a hop on another provider never receives the primary's credentials ----------------------


async def test_generate_text_hop_on_another_provider_uses_its_own_from_the_environment(
    servers: list[Endpoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    a = start(servers, {"primary-model": [unavailable()]})
    b = start(servers, {"router-model": [answer("routed")]})
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-env")
    monkeypatch.setenv("OPENROUTER_BASE_URL", b.base_url)
    result = await generate_text(
        "Hi",
        **primary(a),
        fallback_providers=[{"provider": "openrouter", "model": "router-model"}],
    )
    assert result.text == "routed"
    assert a.seen == [(CHAT, "Bearer sk-a", "primary-model")]
    assert b.seen == [(CHAT, "Bearer sk-or-env", "router-model")]


async def test_gmi_hop_on_another_provider_without_credentials_is_skipped_not_lent_the_key(
    servers: list[Endpoint],
) -> None:
    a = start(servers, {"primary-model": [unavailable()]})
    skipped: list[str] = []
    agent = gmi(
        **primary(a),
        fallback_providers=[{"provider": "openrouter", "model": "router-model"}],
        on_fallback=lambda error, provider: skipped.append(provider),
    )
    with pytest.raises(GMIError) as caught:
        await send_once(agent, "Hi")
    # The OpenRouter leg has no key of its own and none in the environment: it cannot start,
    # so the primary's failure ends the turn; the primary's key went nowhere but its server.
    assert caught.value.code == GMIErrorCode.LLM_PROVIDER_ERROR
    assert skipped == []
    assert a.seen == [(CHAT, "Bearer sk-a", "primary-model")]


async def test_a_turn_naming_another_provider_runs_there_on_its_own(
    servers: list[Endpoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    a = start(servers)
    b = start(servers, {"router-model": [answer("there"), answer("there")]})
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-env")
    monkeypatch.setenv("OPENROUTER_BASE_URL", b.base_url)
    gateway = create_completion_gateway(
        GatewayDefaults(
            **primary(a),
            fallback_providers=[],
        )
    )
    for gateway_turn in (
        gateway.begin_turn(provider="openrouter", model="router-model"),
        gateway.begin_turn(model="openrouter:router-model"),
    ):
        text = [
            chunk.text
            async for chunk in gateway_turn.stream_step(
                lambda hop: ModelRequest([Message.user("Hi")])
            )
            if isinstance(chunk, TextDelta)
        ]
        assert text == ["there"]
    assert b.seen == [(CHAT, "Bearer sk-or-env", "router-model")] * 2
    assert a.seen == []


# --- (c) a leg with its own api_key / base_url ---------------------------------------------------


async def test_generate_text_leg_with_its_own_key_and_endpoint_uses_them(
    servers: list[Endpoint],
) -> None:
    a = start(servers, {"primary-model": [unavailable()]})
    b = start(servers, {"backup-model": [answer("own")]})
    result = await generate_text(
        "Hi",
        **primary(a),
        fallback_providers=[
            FallbackLeg("openai", "backup-model", api_key="sk-b", base_url=b.base_url)
        ],
    )
    assert result.text == "own"
    assert a.seen == [(CHAT, "Bearer sk-a", "primary-model")]
    assert b.seen == [(CHAT, "Bearer sk-b", "backup-model")]


async def test_gmi_dict_legs_with_their_own_credentials_on_any_provider(
    servers: list[Endpoint],
) -> None:
    a = start(servers, {"primary-model": [unavailable()]})
    b = start(servers, {"backup-model": [unavailable()]})
    c = start(servers, {"router-model": [answer("third")]})
    agent = gmi(
        **primary(a),
        fallback_providers=[
            {
                "provider": "openai",
                "model": "backup-model",
                "api_key": "sk-b",
                "base_url": b.base_url,
            },
            {
                "provider": "openrouter",
                "model": "router-model",
                "api_key": "sk-c",
                "base_url": c.base_url,
            },
        ],
    )
    result = await send_once(agent, "Hi")
    assert result.text == "third"
    assert a.seen == [(CHAT, "Bearer sk-a", "primary-model")]
    assert b.seen == [(CHAT, "Bearer sk-b", "backup-model")]
    assert c.seen == [(CHAT, "Bearer sk-c", "router-model")]


async def test_a_leg_naming_only_its_endpoint_takes_no_key_of_the_primarys(
    servers: list[Endpoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    a = start(servers, {"primary-model": [unavailable()]})
    b = start(servers, {"backup-model": [answer("env key")]})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    result = await generate_text(
        "Hi",
        **primary(a),
        fallback_providers=[
            {"provider": "openai", "model": "backup-model", "base_url": b.base_url}
        ],
    )
    assert result.text == "env key"
    assert a.seen == [(CHAT, "Bearer sk-a", "primary-model")]
    assert b.seen == [(CHAT, "Bearer sk-env", "backup-model")]


# --- (d) memory.embedding with its own api_key / base_url ----------------------------------------


async def test_memory_embedding_with_its_own_credentials_embeds_on_that_server(
    servers: list[Endpoint],
) -> None:
    e = start(servers)
    agent = gmi(
        model=ScriptedModel(["Noted."]),
        memory={"embedding": {"provider": "openai", "api_key": "sk-emb", "base_url": e.base_url}},
    )
    result = await send_once(agent, "I keep bees on the roof.")
    assert result.text == "Noted."
    assert e.seen  # the test embedding, the query, the traces the turn filed
    assert set(e.seen) == {(EMBED, "Bearer sk-emb", "text-embedding-3-small")}


# --- (e) an embedding on the agent's provider inherits the agent's -------------------------------


@pytest.mark.parametrize(
    "memory", [{"embedding": {"provider": "openai"}}, True], ids=["named", "default-chain"]
)
async def test_an_embedding_on_the_agents_provider_uses_the_agents_credentials(
    servers: list[Endpoint], monkeypatch: pytest.MonkeyPatch, memory: bool | Mapping[str, Any]
) -> None:
    a = start(servers, {"chat-model": [answer("Hello.")]})
    # The default chain picks OpenAI by its key variable; the agent's own key and endpoint win,
    # as they do for its chat model.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    agent = gmi(
        provider="openai", model="chat-model", api_key="sk-a", base_url=a.base_url, memory=memory
    )
    result = await send_once(agent, "I keep bees on the roof.")
    assert result.text == "Hello."
    assert (CHAT, "Bearer sk-a", "chat-model") in a.seen
    assert {seen for seen in a.seen if seen[0] == EMBED} == {
        (EMBED, "Bearer sk-a", "text-embedding-3-small")
    }
    assert {auth for _, auth, _ in a.seen} == {"Bearer sk-a"}


async def test_an_embedding_on_another_provider_uses_its_own_from_the_environment(
    servers: list[Endpoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    b = start(servers, {"router-model": [answer("Hello.")]})
    e = start(servers)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-env")
    monkeypatch.setenv("OPENAI_BASE_URL", e.base_url)
    agent = gmi(
        provider="openrouter",
        model="router-model",
        api_key="sk-or",
        base_url=b.base_url,
        memory={"embedding": {"provider": "openai"}},
    )
    result = await send_once(agent, "I keep bees on the roof.")
    assert result.text == "Hello."
    assert b.seen == [(CHAT, "Bearer sk-or", "router-model")]
    assert e.seen
    assert set(e.seen) == {(EMBED, "Bearer sk-openai-env", "text-embedding-3-small")}


async def test_an_embedding_on_another_provider_is_never_lent_the_agents_key(
    servers: list[Endpoint],
) -> None:
    b = start(servers, {"router-model": [answer("Hello.")]})
    agent = gmi(
        provider="openrouter",
        model="router-model",
        api_key="sk-or",
        base_url=b.base_url,
        memory={"embedding": {"provider": "openai"}},
    )
    with pytest.raises(GMIError) as caught:
        await send_once(agent, "Hi")
    assert caught.value.code == GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.details["option"] == "memory.embedding"
    assert "OPENAI_API_KEY" in caught.value.message
    assert b.seen == []


# --- construction checks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("leg", "field", "shown"),
    [
        ({"provider": "openai", "api_key": 42}, "api_key", "api_key=a int"),
        ({"provider": "openai", "api_key": ""}, "api_key", "api_key=a str"),
        ({"provider": "openai", "base_url": 5}, "base_url", "base_url=5"),
        ({"provider": "openai", "base_url": ""}, "base_url", "base_url=''"),
    ],
)
def test_a_legs_bad_credentials_are_refused_naming_the_field(
    leg: dict[str, Any], field: str, shown: str
) -> None:
    with pytest.raises(GMIError) as caught:
        gmi(model="openai:gpt-4o-mini", fallback_providers=[leg])
    assert caught.value.code == GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "fallback_providers", "field": field}
    assert caught.value.message.startswith(f"fallback_providers[0]: fallback leg {shown} ")
    with pytest.raises(GMIError) as direct:
        FallbackLeg(**leg)
    assert direct.value.details == {"option": "fallback_providers", "field": field}


async def test_generate_text_refuses_a_bad_leg_before_any_request(
    servers: list[Endpoint],
) -> None:
    a = start(servers, {"primary-model": [answer("never")]})
    with pytest.raises(GMIError) as caught:
        await generate_text(
            "Hi",
            **primary(a),
            fallback_providers=[{"provider": "openai", "api_key": ["sk-x"]}],
        )
    assert caught.value.details["field"] == "api_key"
    assert a.seen == []


@pytest.mark.parametrize(
    ("embedding", "option"),
    [
        ({"provider": "openai", "api_key": 7}, "memory.embedding.api_key"),
        ({"provider": "openai", "api_key": ""}, "memory.embedding.api_key"),
        ({"provider": "openai", "base_url": 7}, "memory.embedding.base_url"),
        ({"provider": "local", "api_key": "sk-x"}, "memory.embedding.api_key"),
        ({"provider": "openai", "apikey": "sk-x"}, "memory.embedding"),
    ],
)
def test_bad_embedding_credentials_are_refused_naming_the_field(
    embedding: dict[str, Any], option: str
) -> None:
    with pytest.raises(GMIError) as caught:
        gmi(model="openai:gpt-4o-mini", memory={"embedding": embedding})
    assert caught.value.code == GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details["option"] == option
    assert "sk-x" not in caught.value.message


def test_keys_stay_out_of_reprs_and_exports() -> None:
    leg = FallbackLeg("openai", "backup-model", api_key="sk-leg", base_url="http://h/v1")
    assert "sk-leg" not in repr(leg)
    assert "sk-cred" not in repr(ProviderCredentials("openai", "sk-cred"))
    agent = gmi(
        model="openai:gpt-4o-mini",
        fallback_providers=[{"provider": "openai", "api_key": "sk-leg"}],
        memory={"embedding": {"provider": "openai", "api_key": "sk-emb"}},
    )
    document = agent.export()
    assert "sk-leg" not in json.dumps(document)
    assert "sk-emb" not in json.dumps(document)
    assert document["config"]["fallback_providers"] == [{"provider": "openai"}]
    assert document["config"]["memory"] == {"embedding": {"provider": "openai"}}
    assert {"fallback_providers[0].api_key", "memory.embedding.api_key"} <= set(document["omitted"])


# --- the rule, for every provider and credential -------------------------------------------------

PROVIDERS = st.sampled_from(["openai", "anthropic", "gemini", "openrouter", "ollama", None])
SECRETS = st.one_of(st.none(), st.text(min_size=1, max_size=8))


@given(PROVIDERS, SECRETS, SECRETS, PROVIDERS, SECRETS, SECRETS)
def test_credentials_go_only_to_their_provider_unless_a_hop_names_its_own(
    owner: str | None,
    key: str | None,
    url: str | None,
    hop: str | None,
    own_key: str | None,
    own_url: str | None,
) -> None:
    got = ProviderCredentials(owner, key, url).for_provider(hop, api_key=own_key, base_url=own_url)
    if own_key is not None or own_url is not None:
        assert got == (own_key, own_url)
    elif owner is not None and hop == owner:
        assert got == (key, url)
    else:
        assert got == (None, None)


async def test_a_gmi_turn_whose_preferred_model_names_another_provider_runs_there_on_its_own(
    servers: list[Endpoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    a = start(servers, {"primary-model": [answer("primary")]})
    b = start(servers, {"router-model": [answer("there")]})
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-env")
    monkeypatch.setenv("OPENROUTER_BASE_URL", b.base_url)
    gateway = create_completion_gateway(
        GatewayDefaults(
            **primary(a),
            fallback_providers=[],
        )
    )
    gmi_ = GMI("g1")
    await gmi_.initialize(
        persona(default_provider_id="openai", default_model_id="primary-model"),
        GMIConfig(gateway=gateway),
    )
    options = TurnOptions(preferred_model_id="openrouter:router-model")
    _, output = await run(gmi_, turn("Hi", options=options))
    assert output.response_text == "there"
    _, output = await run(gmi_, turn("Hi again", turn_id="t2"))
    assert output.response_text == "primary"
    assert b.seen == [(CHAT, "Bearer sk-or-env", "router-model")]
    assert a.seen == [(CHAT, "Bearer sk-a", "primary-model")]
