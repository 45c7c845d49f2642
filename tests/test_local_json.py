"""JSON on the local model (issue 11, item 13): grammars, metaprompts, and any GGUF file.

A ``response_schema`` on ``provider="local"`` is enforced with llama.cpp's grammar for the
schema; a metaprompt on the local model is capped at 160 tokens and held to a grammar of its
preset's required fields plus the mood, with strings bounded so every answer fits the cap; the
local provider serves any GGUF file named by ``model="local:/path"`` or ``AGENTOS_LOCAL_MODEL``.
Tests marked ``local_model`` run the real SmolLM2 model with short generations; the others
need no model (the grammar's text comes from llama-cpp-python's converter).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from agentos import GMIError, GMIErrorCode, generate_text, gmi
from agentos.core.messages import Message
from agentos.llm._local_llama import bundled_gguf_path, load_gguf
from agentos.llm.local import (
    LOCAL_CONTEXT_WINDOW,
    LOCAL_MODEL_ENV,
    LocalModel,
    local_model_available,
)
from agentos.llm.local_grammar import (
    SAFE_TEXT_CHARS,
    fitted_object_schema,
    json_object_grammar,
    longest_answer,
    schema_grammar,
)
from agentos.llm.model import CompletionOptions, ToolDefinition
from agentos.llm.resolve import resolve_model
from agentos.persona import (
    METAPROMPT_PRESETS,
    PRESET_NAMES,
    get_preset_metaprompt,
    without_answer_format,
)
from agentos.substrate import GMIMood, ReasoningEntryType
from agentos.testing import ScriptedModel, ScriptStep

needs_local = pytest.mark.skipif(
    not local_model_available(), reason="the 'local' extra is not installed"
)
local_model = [pytest.mark.local_model, needs_local]

MOOD = "updatedGmiMood"
LOCAL_CAP = 160
FRUSTRATED = "This is awful and terrible, I hate it!"


class City(BaseModel):
    name: str
    country: str


def grammar_rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.splitlines())


# -- the grammar of a metaprompt's schema (no model) --------------------------------------------


@needs_local
@pytest.mark.parametrize("preset_id", sorted(METAPROMPT_PRESETS))
def test_the_grammar_of_a_preset_schema_requires_every_required_field(preset_id: str) -> None:
    schema = METAPROMPT_PRESETS[preset_id].output_schema
    assert schema is not None
    fitted = fitted_object_schema(schema, max_tokens=LOCAL_CAP, require=(MOOD,))
    keys = [key for key in schema["properties"] if key in {*schema["required"], MOOD}]
    assert fitted["required"] == keys == list(fitted["properties"])
    assert fitted["properties"][MOOD]["enum"] == schema["properties"][MOOD]["enum"]
    # The root rule lists every key, none of them optional: no "( ... )?" group.
    kvs = ' "," space '.join(f"{key}-kv" for key in keys)
    assert grammar_rules(schema_grammar(fitted))["root"] == f'"{{" space {kvs} "}}" space'
    assert longest_answer(fitted) <= LOCAL_CAP


@needs_local
def test_a_fitted_schema_shares_the_budget_among_its_free_strings() -> None:
    schema = get_preset_metaprompt("frustration_recovery").output_schema
    assert schema is not None
    fitted = fitted_object_schema(schema, max_tokens=LOCAL_CAP, require=(MOOD,))
    text = {"type": "string", "pattern": f"^{SAFE_TEXT_CHARS}{{1,34}}$"}
    assert fitted == {
        "type": "object",
        "properties": {
            "adjustmentRationale": {**schema["properties"]["adjustmentRationale"], **text},
            "recoveryStrategy": {**schema["properties"]["recoveryStrategy"], **text},
            MOOD: schema["properties"][MOOD],
        },
        "required": ["adjustmentRationale", "recoveryStrategy", MOOD],
    }
    assert longest_answer(fitted) == 159  # one more character per string would pass 160


def one_character_strings(schema: dict[str, Any]) -> dict[str, Any]:
    """A fitted schema whose free strings hold one character: the shortest it can be."""
    fitted = fitted_object_schema(schema, max_tokens=10_000, require=(MOOD,))
    for prop in fitted["properties"].values():
        if "pattern" in prop:
            prop["pattern"] = f"^{SAFE_TEXT_CHARS}{{1,1}}$"
    return fitted


@given(st.integers(min_value=1, max_value=2000), st.sampled_from(sorted(METAPROMPT_PRESETS)))
def test_every_fitted_answer_fits_its_budget_or_the_budget_is_refused(
    budget: int, preset_id: str
) -> None:
    schema = METAPROMPT_PRESETS[preset_id].output_schema
    assert schema is not None
    if budget < longest_answer(one_character_strings(schema)):
        with pytest.raises(ValueError, match=f"^{budget} tokens cannot hold an answer"):
            fitted_object_schema(schema, max_tokens=budget, require=(MOOD,))
    else:
        fitted = fitted_object_schema(schema, max_tokens=budget, require=(MOOD,))
        assert longest_answer(fitted) <= budget


def test_a_property_that_cannot_be_bounded_is_refused() -> None:
    schema = {
        "type": "object",
        "properties": {"notes": {"type": "array", "items": {"type": "string"}}},
        "required": ["notes"],
    }
    with pytest.raises(ValueError, match="property 'notes' \\(array\\) cannot be bounded"):
        fitted_object_schema(schema, max_tokens=LOCAL_CAP)


@needs_local
def test_the_grammar_a_local_request_is_held_to() -> None:
    schema = City.model_json_schema()
    assert LocalModel.grammar_for(CompletionOptions(response_schema=schema)) == (
        schema_grammar(schema)
    )
    assert LocalModel.grammar_for(CompletionOptions(json_mode=True)) == json_object_grammar()
    assert LocalModel.grammar_for(CompletionOptions()) is None
    # A schema the converter does not support still gets one JSON object, validated after.
    unsupported = {"type": "object", "properties": {"a": {"type": "tensor"}}}
    assert LocalModel.grammar_for(CompletionOptions(response_schema=unsupported)) == (
        json_object_grammar()
    )


def _metaprompt_script(
    messages: Sequence[Message], tools: Sequence[ToolDefinition], options: CompletionOptions
) -> ScriptStep:
    if options.json_mode:
        return ScriptStep(text=json.dumps({"adjustmentRationale": "calm", MOOD: "empathetic"}))
    return ScriptStep(text="ok")


@pytest.mark.parametrize(("provider_id", "local"), [("local", True), ("scripted", False)])
async def test_a_metaprompt_on_the_local_provider_is_capped_and_held_to_its_schema(
    provider_id: str, local: bool
) -> None:
    model = ScriptedModel(_metaprompt_script, provider_id=provider_id)
    cognition: Any = {"sentiment": True, "metaprompts": ["frustration_recovery"]}
    agent = gmi(model=model, cognition=cognition)
    session = agent.session("s")
    await session.send(FRUSTRATED)
    assert session.gmi is not None
    await session.gmi.wait_for_metaprompts()
    [request] = [r for r in model.requests if r.options.json_mode]
    schema = get_preset_metaprompt("frustration_recovery").output_schema
    assert schema is not None
    if local:
        fitted = fitted_object_schema(schema, max_tokens=LOCAL_CAP, require=(MOOD,))
        assert request.options.max_tokens == LOCAL_CAP
        assert request.options.response_schema == fitted
        assert request.options.schema_prompt_given  # the grammar gives the shape
        assert len(request.messages) == 1  # no schema message was added
    else:
        assert request.options.max_tokens == 512
        assert request.options.response_schema is None
    # The preset's answer-format lines go only to a model that cannot enforce the schema.
    prompt = request.messages[0].text
    assert ("Answer with ONLY one JSON object" in prompt) is not local
    assert ("updatedUserSkillLevel is one of" in prompt) is not local
    assert prompt.endswith("Answer with one JSON object.") is local
    assert session.gmi.mood is GMIMood.EMPATHETIC
    await agent.close()


# -- the real model -----------------------------------------------------------------------------


@pytest.mark.local_model
@needs_local
async def test_a_response_schema_on_the_local_model_returns_an_object_that_validates() -> None:
    result = await generate_text(
        "Name a city in France.", provider="local", response_schema=City, seed=1, max_tokens=40
    )
    assert isinstance(result.object, City)
    jsonschema.validate(json.loads(result.text), City.model_json_schema())


@pytest.mark.local_model
@needs_local
async def test_a_metaprompt_on_the_local_model_applies_a_valid_mood() -> None:
    cognition: Any = {"sentiment": True, "metaprompts": ["frustration_recovery"]}
    agent = gmi(provider="local", cognition=cognition, max_tokens=4)
    session = agent.session("s")
    await session.send(FRUSTRATED)
    found = session.gmi
    assert found is not None
    await found.wait_for_metaprompts()
    changes = [
        (e.details or {}).get("changes")
        for e in found.trace.entries()
        if e.type is ReasoningEntryType.STATE_CHANGE
        and (e.details or {}).get("metaprompt_id") == "gmi_frustration_recovery"
    ]
    assert len(changes) == 1
    assert changes[0] is not None
    assert changes[0]["mood"] == found.mood.value
    assert found.mood in set(GMIMood)
    await agent.close()


@pytest.mark.local_model
@needs_local
def test_a_grammar_llama_cpp_cannot_parse_falls_back_to_one_json_object() -> None:
    loaded = load_gguf(bundled_gguf_path(), LOCAL_CONTEXT_WINDOW)
    assert loaded.parsable_grammar('root ::= "{" broken') == json_object_grammar()
    boolean = schema_grammar({"type": "boolean"})
    assert loaded.parsable_grammar(boolean) == boolean


@pytest.mark.local_model
@needs_local
async def test_a_gguf_file_given_as_a_path_answers_as_the_bundled_model_does() -> None:
    path = bundled_gguf_path()
    by_path = await generate_text("Say hello.", model=f"local:{path}", seed=2, max_tokens=5)
    bundled = await generate_text("Say hello.", provider="local", seed=2, max_tokens=5)
    assert by_path.model_id == "SmolLM2-135M-Instruct.Q4_1"
    assert by_path.text == bundled.text != ""


@needs_local
def test_agentos_local_model_replaces_the_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOCAL_MODEL_ENV, str(bundled_gguf_path()))
    assert resolve_model("local").model_id == "SmolLM2-135M-Instruct.Q4_1"
    # A model named by path is that file, whatever the variable says.
    monkeypatch.setenv(LOCAL_MODEL_ENV, "/nowhere/else.gguf")
    assert resolve_model(model=f"local:{bundled_gguf_path()}").model_id == (
        "SmolLM2-135M-Instruct.Q4_1"
    )


@needs_local
@pytest.mark.parametrize("via", ["model", LOCAL_MODEL_ENV])
async def test_a_missing_gguf_file_is_refused_naming_the_path_and_the_option(
    via: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = "/nowhere/model.gguf"
    if via == "model":
        options: dict[str, Any] = {"model": f"local:{missing}"}
    else:
        monkeypatch.setenv(LOCAL_MODEL_ENV, missing)
        options = {"provider": "local"}
    with pytest.raises(GMIError) as resolving:
        resolve_model(**options)
    assert resolving.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert resolving.value.details == {"option": via, "path": missing}
    assert resolving.value.message == f"{via}: no GGUF model file at '{missing}'"
    # A call reports it before any work, as the gateway reports a hop that cannot start.
    with pytest.raises(GMIError) as calling:
        await generate_text("Hi", **options)
    assert calling.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert calling.value.details == {"option": via, "path": missing, "hop": 0}
    assert calling.value.message == resolving.value.message


def test_only_a_presets_own_answer_format_is_left_out() -> None:
    for name in PRESET_NAMES:
        template = get_preset_metaprompt(name).prompt_template
        assert isinstance(template, str)
        body = without_answer_format(template)
        assert "Answer with ONLY" not in body
        assert body.endswith("Answer with one JSON object.")
        # What the template asks of the model stays; only the shape lines go.
        assert template.startswith(body.removesuffix("Answer with one JSON object."))
    own = "Rate the mood.\nAnswer with ONLY one JSON object, no prose and no code fence: {}"
    assert without_answer_format(own) == own
