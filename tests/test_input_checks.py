"""Input that is checked before anything is stored (issue 11, items 9 and 10).

Every entry point that starts a turn (`generate_text()`, an agent's ``generate()``, a session's
``send()`` / ``stream()``, on the plain agent and on `gmi()`) refuses a bad prompt or a bad
per-call option with a `GMIError` (``INVALID_ARGUMENT``) naming it, before any model call and
any write; ``session(id, user_id=...)`` refuses ids that are not text. Construction refuses a
``store``, ``memory.store`` or ``memory.embedder`` that is not one, bad inline personas, and
``agentos chat --model ''``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import agentos
import agentos.cli
import agentos.cli.chat_run
from agentos import GMIError, GMIErrorCode, generate_text
from agentos.api.abort import AbortSignal
from agentos.api.gmi_agent import gmi
from agentos.core.messages import ImagePart, Message, TextPart
from agentos.llm.model import ChatModel
from agentos.persona.definition import PersonaDefinition
from agentos.persona.loaders import InMemoryPersonaLoader
from agentos.storage.session_store import SQLiteSessionStore
from agentos.storage.sqlite import AGENTOS_HOME_ENV
from agentos.testing import HashEmbedder, ScriptedModel

Runtime = Literal["legacy", "gmi"]
RUNTIMES: list[Runtime] = ["legacy", "gmi"]


def build(runtime: Runtime, model: ScriptedModel, **options: Any) -> Any:
    return agentos.agent(model=model, runtime=runtime, **options)


def assert_invalid(error: BaseException, option: str, message: str) -> None:
    assert isinstance(error, GMIError)
    assert error.code is GMIErrorCode.INVALID_ARGUMENT
    assert error.details["option"] == option
    assert error.message.startswith(message), error.message


# -- prompts --------------------------------------------------------------------------------------

BAD_PROMPTS: list[tuple[object, str]] = [
    (["not a part"], "prompt: part 0 is a str, not a content part (TextPart or ImagePart)"),
    ([{"type": "text", "text": "hi"}], "prompt: part 0 is a dict, not a content part"),
    ([TextPart("ok"), 7], "prompt: part 1 is a int, not a content part"),
    (b"x", "prompt: must be text (str) or a list of content parts, got bytes: decode it"),
    ([], "prompt: the list of content parts is empty"),
    (None, "prompt: give a prompt: text or a list of content parts"),
    (123, "prompt: must be text (str) or a list of content parts, got int"),
    (("a tuple",), "prompt: must be text (str) or a list of content parts, got tuple"),
    ("  \n", "prompt: the prompt is empty"),
    ([TextPart(" ")], "prompt: the prompt is empty"),
    ([ImagePart("")], "prompt: part 0: an image needs a url"),
    (
        "caf\udce9",
        "prompt: the text is not valid Unicode: a lone surrogate (U+DCE9) at position 3",
    ),
    ([TextPart("ok"), TextPart("\ud800!")], "prompt: part 1: the text is not valid Unicode"),
]


async def send_on_session(runtime: Runtime, prompt: object, tmp_path: Path) -> None:
    """Send ``prompt`` on a durable session; the model and the store must see nothing."""
    model = ScriptedModel(["never sent"])
    store = SQLiteSessionStore(path=tmp_path / f"{runtime}.db")
    agent = build(runtime, model, store=store)
    session = agent.session("s")
    with pytest.raises(GMIError) as caught:
        await session.send(prompt)
    with pytest.raises(GMIError):
        session.stream(prompt)  # refused at once, not when the stream is read
    assert model.calls == 0
    assert await session.messages() == []
    assert store.load_messages("s") == []
    raise caught.value


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize(("prompt", "message"), BAD_PROMPTS)
async def test_a_session_refuses_a_bad_prompt_before_any_call_or_write(
    runtime: Runtime, prompt: object, message: str, tmp_path: Path
) -> None:
    with pytest.raises(GMIError) as caught:
        await send_on_session(runtime, prompt, tmp_path)
    assert_invalid(caught.value, "prompt", message)


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize(("prompt", "message"), BAD_PROMPTS)
async def test_an_agents_one_off_call_refuses_a_bad_prompt(
    runtime: Runtime, prompt: object, message: str
) -> None:
    model = ScriptedModel(["never sent"])
    agent = build(runtime, model)
    with pytest.raises(GMIError) as caught:
        await agent.generate(prompt)
    assert_invalid(caught.value, "prompt", message)
    with pytest.raises(GMIError):
        agent.stream(prompt)
    assert model.calls == 0


@pytest.mark.parametrize(("prompt", "message"), BAD_PROMPTS)
async def test_generate_text_refuses_the_same_prompts(prompt: object, message: str) -> None:
    model = ScriptedModel(["never sent"])
    if prompt is None:
        message = "prompt: give a prompt, or messages ending with the turn to answer"
    with pytest.raises(GMIError) as caught:
        await generate_text(prompt, model=model)  # type: ignore[arg-type]
    assert_invalid(caught.value, "prompt", message)
    assert model.calls == 0


@pytest.mark.parametrize("runtime", RUNTIMES)
async def test_a_refused_prompt_leaves_the_session_usable_and_reopenable(
    runtime: Runtime, tmp_path: Path
) -> None:
    path = tmp_path / "sessions.db"
    model = ScriptedModel(["Hello."])
    session = build(runtime, model, store=SQLiteSessionStore(path=path)).session("s")
    with pytest.raises(GMIError):
        await session.send(["not a part"])
    parts: list[TextPart | ImagePart] = [
        TextPart("Look: "),
        ImagePart("https://example.com/a.png", "image/png"),
    ]
    assert (await session.send(parts)).text == "Hello."
    expected = [Message.user(parts), Message.assistant("Hello.")]
    assert await session.messages() == expected
    # Another agent on the same file reads the session whole (it was never made unopenable).
    again = build(runtime, ScriptedModel([]), store=SQLiteSessionStore(path=path)).session("s")
    assert await again.messages() == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prompt=st.text(alphabet=st.characters(codec=None), max_size=8))
async def test_any_text_is_either_sent_whole_or_refused_naming_the_prompt(prompt: str) -> None:
    model = ScriptedModel(lambda messages, tools, options: "ok")
    session = agentos.agent(model=model).session("s")
    sendable = bool(prompt.strip()) and not any("\ud800" <= c <= "\udfff" for c in prompt)
    if sendable:
        await session.send(prompt)
        assert (await session.messages())[0] == Message.user(prompt)
        assert model.requests[0].messages[-1] == Message.user(prompt)
    else:
        with pytest.raises(GMIError) as caught:
            await session.send(prompt)
        assert caught.value.details == {"option": "prompt"}
        assert model.calls == 0
        assert await session.messages() == []


# -- per-call options -----------------------------------------------------------------------------

BOTH_SESSIONS: list[tuple[dict[str, Any], str, str]] = [
    ({"max_tokens": -1}, "max_tokens", "max_tokens: must be an integer >= 1, got -1"),
    ({"max_tokens": "10"}, "max_tokens", "max_tokens: must be an integer >= 1, got '10'"),
    ({"request_timeout": 0}, "request_timeout", "request_timeout: must be > 0.0, got 0"),
    ({"tool_choice": 3}, "tool_choice", "tool_choice: must be auto, none, required or a tool"),
    ({"response_schema": 42}, "response_schema", "response_schema: give a pydantic model"),
    (
        {"response_schema": {"type": "object"}, "schema_name": 5},
        "schema_name",
        "schema_name: must be a string, got int",
    ),
    ({"cache_diagnostics": 5}, "cache_diagnostics", "cache_diagnostics: must be True or"),
    ({"budget": {"max_cost_usd": -1}}, "budget.max_cost_usd", "budget.max_cost_usd: must be"),
]
GMI_SESSION: list[tuple[dict[str, Any], str, str]] = [
    (
        {"abort_signal": "yes"},
        "abort_signal",
        "abort_signal: must be an AbortSignal or an asyncio.Event, got str",
    ),
    ({"block_label": 3}, "block_label", "block_label: must be a string, got int"),
    ({"cache": "2h"}, "cache", "cache: must be True, False, '5m' or '1h', got '2h'"),
    ({"max_token": 5}, "max_token", "max_token: unknown option 'max_token' (did you mean"),
]
LEGACY_SESSION: list[tuple[dict[str, Any], str, str]] = [
    ({"temperature": 5}, "temperature", "temperature: must be between 0.0 and 2.0, got 5"),
    ({"top_p": "high"}, "top_p", "top_p: must be a number, got 'high'"),
    ({"max_steps": 0}, "max_steps", "max_steps: must be an integer >= 1, got 0"),
    ({"model": 42}, "model", "model: must be a model id or a ChatModel, got int"),
    ({"usage_ledger": "x"}, "usage_ledger", "usage_ledger: must be a UsageLedger, got str"),
    ({"abort_signal": AbortSignal()}, "abort_signal", "abort_signal: session.send() does"),
    ({"max_token": 5}, "max_token", "max_token: session.send() does not take this option"),
]
CASES = [("legacy", *case) for case in BOTH_SESSIONS + LEGACY_SESSION] + [
    ("gmi", *case) for case in BOTH_SESSIONS + GMI_SESSION
]


@pytest.mark.parametrize(("runtime", "options", "option", "message"), CASES)
async def test_a_session_refuses_a_bad_option_before_any_call_or_write(
    runtime: Runtime, options: dict[str, Any], option: str, message: str, tmp_path: Path
) -> None:
    model = ScriptedModel(["never sent"])
    store = SQLiteSessionStore(path=tmp_path / "sessions.db")
    session = build(runtime, model, store=store).session("s")
    with pytest.raises(GMIError) as caught:
        await session.send("Hi", **options)
    assert_invalid(caught.value, option, message)
    with pytest.raises(GMIError):
        session.stream("Hi", **options)
    assert model.calls == 0
    assert store.load_messages("s") == []
    assert await session.messages() == []


ONE_OFF: list[tuple[dict[str, Any], str, str]] = [
    ({"max_tokens": -1}, "max_tokens", "max_tokens: must be an integer >= 1, got -1"),
    ({"temperature": 2.5}, "temperature", "temperature: must be between 0.0 and 2.0, got 2.5"),
    ({"max_steps": True}, "max_steps", "max_steps: must be an integer >= 1, got True"),
    ({"response_schema": "json"}, "response_schema", "response_schema: give a pydantic model"),
    ({"provider": 7}, "provider", "provider: must be a string, got int"),
]


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize(("options", "option", "message"), ONE_OFF)
async def test_an_agents_one_off_call_refuses_a_bad_option(
    runtime: Runtime, options: dict[str, Any], option: str, message: str
) -> None:
    model = ScriptedModel(["never sent"])
    agent = build(runtime, model)
    with pytest.raises(GMIError) as caught:
        await agent.generate("Hi", **options)
    assert_invalid(caught.value, option, message)
    assert model.calls == 0


async def test_a_gmi_agents_one_off_call_refuses_an_abort_signal_that_is_not_one() -> None:
    model = ScriptedModel(["never sent"])
    with pytest.raises(GMIError) as caught:
        gmi(model=model).stream("Hi", abort_signal="yes")
    assert_invalid(caught.value, "abort_signal", "abort_signal: must be an AbortSignal")
    assert model.calls == 0


# -- session ids ----------------------------------------------------------------------------------

BAD_IDS: list[tuple[dict[str, Any], str, str]] = [
    ({"session_id": 123}, "session_id", "session_id: must be a string, got int"),
    ({"session_id": ""}, "session_id", "session_id: must not be empty"),
    ({"session_id": "  "}, "session_id", "session_id: must not be empty"),
    ({"session_id": "s\udc80"}, "session_id", "session_id: the text is not valid Unicode"),
    (
        {"session_id": "s", "user_id": 123},
        "user_id",
        "user_id: must be a string or None, got int",
    ),
    ({"session_id": "s", "user_id": b"alice"}, "user_id", "user_id: must be a string or None"),
    ({"session_id": "s", "user_id": "al\ud800"}, "user_id", "user_id: the text is not valid"),
]


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize(("ids", "option", "message"), BAD_IDS)
def test_session_refuses_ids_that_are_not_text(
    runtime: Runtime, ids: dict[str, Any], option: str, message: str, tmp_path: Path
) -> None:
    store = SQLiteSessionStore(path=tmp_path / "sessions.db")
    agent = build(runtime, ScriptedModel([]), store=store)
    with pytest.raises(GMIError) as caught:
        agent.session(ids["session_id"], user_id=ids.get("user_id"))
    assert_invalid(caught.value, option, message)
    assert store.load_info("s") is None  # nothing was opened


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("user_id", ["", "  "])
async def test_a_blank_user_id_is_anonymous_and_sends_no_end_user_id(
    runtime: Runtime, user_id: str
) -> None:
    model = ScriptedModel(["Hi."])
    session = build(runtime, model).session("s", user_id=user_id)
    assert (await session.send("Hello")).text == "Hi."
    assert model.requests[0].options.user_id is None


@pytest.mark.parametrize("runtime", RUNTIMES)
async def test_a_user_id_is_sent_as_the_end_users_id(runtime: Runtime) -> None:
    model = ScriptedModel(["Hi."])
    await build(runtime, model).session("s", user_id="u-7").send("Hello")
    assert model.requests[0].options.user_id == "u-7"


# -- construction ---------------------------------------------------------------------------------

STORE_HINT = "SQLiteSessionStore(path=...)"


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("as_path", [str, Path])
def test_a_store_given_as_a_path_is_refused_naming_the_store_to_build(
    runtime: Runtime, as_path: Callable[[Path], object], tmp_path: Path
) -> None:
    path = as_path(tmp_path / "x.db")
    with pytest.raises(GMIError) as caught:
        build(runtime, ScriptedModel([]), store=path)
    message = f"store: must be a SessionStore object, got {path!r}: pass {STORE_HINT}"
    assert_invalid(caught.value, "store", message)
    assert not (tmp_path / "x.db").exists()  # nothing was opened or created


class HalfAStore:
    """Reads like a session store but cannot write one."""

    def load_info(self, session_id: str) -> None:
        return None

    def load_messages(self, session_id: str) -> list[Any]:
        return []

    save_info = None


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize(
    ("store", "lacks"),
    [(42, ["load_info", "save_info", "load_messages", "write"]), (HalfAStore(), ["save_info"])],
)
def test_a_store_that_is_not_a_session_store_is_refused_naming_what_it_lacks(
    runtime: Runtime, store: object, lacks: list[str]
) -> None:
    with pytest.raises(GMIError) as caught:
        build(runtime, ScriptedModel([]), store=store)
    kind = type(store).__name__
    prefix = (
        f"store: must be a SessionStore object (such as {STORE_HINT}), got {kind}, which has no"
    )
    assert_invalid(caught.value, "store", prefix)
    named = caught.value.message[len(prefix) :].strip().split(", ")
    assert set(lacks) <= set(named)
    assert "load_info" not in named or kind == "int"


EMBEDDER_HINT = "HashEmbedder(384) of agentos.testing, or set memory.embedding to name a model"
MEMORY_CASES: list[tuple[dict[str, Any], str, str]] = [
    (
        {"embedder": "hash"},
        "memory.embedder",
        f"memory.embedder: must be an Embedder object, got 'hash': pass {EMBEDDER_HINT}",
    ),
    (
        {"embedder": object()},
        "memory.embedder",
        f"memory.embedder: must be an Embedder object (such as {EMBEDDER_HINT}), got object, "
        "which has no model_id, dimension, embed",
    ),
    (
        {"store": "memory.db"},
        "memory.store",
        "memory.store: must be a MemoryStore object, got 'memory.db': pass "
        "SQLiteMemoryStore(path=...)",
    ),
    ({"store": 42}, "memory.store", "memory.store: must be a MemoryStore object (such as"),
]


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize(("memory", "option", "message"), MEMORY_CASES)
def test_memory_store_and_embedder_are_checked_at_construction(
    runtime: Runtime, memory: dict[str, Any], option: str, message: str
) -> None:
    with pytest.raises(GMIError) as caught:
        build(runtime, ScriptedModel([]), memory=memory)
    assert_invalid(caught.value, option, message)


async def test_a_real_embedder_and_memory_store_are_accepted() -> None:
    model = ScriptedModel(["ok"])
    agent = gmi(model=model, memory={"embedder": HashEmbedder(64)})
    assert (await agent.session("s").send("hi")).text == "ok"
    await agent.close()


def valid_persona(pid: str) -> dict[str, Any]:
    return {"id": pid, "name": pid.upper(), "version": "1.0.0", "baseSystemPrompt": "x"}


@pytest.mark.parametrize(
    ("personas", "option", "message"),
    [
        (
            [PersonaDefinition(id="a", name="A"), 42],
            "personas[1]",
            "personas[1]: must be a PersonaDefinition or a mapping, got int",
        ),
        (
            [valid_persona("a"), {**valid_persona("b"), "personalityTraits": "warm"}],
            "personas[1]",
            "personas[1] (id 'b') is not a valid persona: personalityTraits",
        ),
        ([{"name": "no id"}], "personas[0]", "personas[0] is not a valid persona: id: Field"),
        ("personas", "personas", "personas: must be a list of personas, got str"),
        (valid_persona("a"), "personas", "personas: must be a list of personas, got dict"),
        (None, "personas", "personas: must be a list of personas, got NoneType"),
    ],
)
def test_inline_personas_are_checked_naming_the_item(
    personas: Any, option: str, message: str
) -> None:
    with pytest.raises(GMIError) as caught:
        InMemoryPersonaLoader(personas)
    assert_invalid(caught.value, option, message)


async def test_inline_personas_that_validate_are_loaded() -> None:
    loader = InMemoryPersonaLoader([PersonaDefinition(id="a", name="A"), valid_persona("b")])
    assert [p.id for p in await loader.load_personas()] == ["a", "b"]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--model", ""], "model"),
        (["--model", "  "], "model"),
        (["--provider", ""], "provider"),
        (["--persona", ""], "persona"),
    ],
)
def test_agentos_chat_refuses_an_empty_model(
    args: list[str], option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(AGENTOS_HOME_ENV, str(tmp_path / "home"))
    model = ScriptedModel(["never sent"])

    def resolve(provider: str | None, name: str | None, **_: Any) -> ChatModel:
        return model

    monkeypatch.setattr(agentos.cli.chat_run, "resolve_model", resolve)
    result = CliRunner().invoke(agentos.cli.app, ["chat", *args, "Hello"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: {option}: must not be empty (leave the option out for the default)"
    ]
    assert result.stdout == ""
    assert model.calls == 0
