"""An agent's export() and import_agent() (spec: the Agent surface's export())."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from agentos import agent, gmi, import_agent
from agentos.api.agent import PlainAgent
from agentos.api.gmi_agent import GmiAgent
from agentos.core.messages import Role, ToolCall
from agentos.testing import ScriptedModel, ScriptStep
from fakes.tools import add

OPTIONS = {
    "name": "Tutor",
    "instructions": "You are a patient CS tutor.",
    "personality": {"openness": 0.9, "conscientiousness": 0.95},
    "max_steps": 3,
    "budget": {"max_total_tokens": 50_000},
}


def test_a_gmi_agents_export_is_json_with_live_objects_and_the_key_named_as_omitted() -> None:
    tutor = gmi(**OPTIONS, cognition="full", tools=[add], api_key="sk-secret")  # type: ignore[arg-type]
    document = tutor.export({"author": "ada", "tags": ["cs"]})
    assert json.loads(json.dumps(document)) == document
    assert document["version"] == "1.0.0"
    assert document["type"] == "agent"
    assert datetime.fromisoformat(document["exported_at"]).tzinfo is not None
    assert document["config"] == {**OPTIONS, "cognition": "full", "runtime": "gmi"}
    assert document["omitted"] == ["api_key", "tools"]
    assert document["metadata"] == {"author": "ada", "tags": ["cs"]}
    assert "sk-secret" not in json.dumps(document)


async def test_an_imported_gmi_agent_answers_with_the_same_persona() -> None:
    first = ScriptedModel([ScriptStep(tool_calls=[ToolCall("c", "add", {"a": 1, "b": 2})]), "3"])
    original = gmi(**OPTIONS, model=first, tools=[add])  # type: ignore[arg-type]
    await original.session("s").send("1+2?")
    document = json.loads(json.dumps(original.export()))
    assert document["omitted"] == ["model", "tools"]
    second = ScriptedModel([ScriptStep(tool_calls=[ToolCall("c", "add", {"a": 1, "b": 2})]), "3"])
    restored = import_agent(document, model=second, tools=[add])
    assert isinstance(restored, GmiAgent)
    result = await restored.session("s").send("1+2?")
    assert [r.output for r in result.tool_results] == [3]

    def systems(model: ScriptedModel) -> list[str]:
        return [m.text for m in model.requests[0].messages if m.role is Role.SYSTEM]

    assert systems(second) == systems(first)
    assert restored.budget is not None
    assert restored.budget.max_total_tokens == 50_000


def test_a_legacy_agent_exports_and_imports_as_a_legacy_agent() -> None:
    plain = agent(instructions="Be brief.", max_tokens=200, on_fallback=print)
    assert isinstance(plain, PlainAgent)
    document = plain.export()
    assert "runtime" not in document["config"]
    assert document["omitted"] == ["on_fallback"]
    restored = import_agent(document)
    assert isinstance(restored, PlainAgent)
    assert restored.system_prompt == plain.system_prompt


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ([], "mapping"),
        ({"version": "2.0.0", "type": "agent", "config": {}}, "version"),
        ({"version": "1.0.0", "type": "agency", "config": {}}, "type"),
        ({"version": "1.0.0", "type": "agent", "config": "x"}, "config"),
    ],
)
def test_a_document_that_is_not_an_agent_export_is_refused_naming_the_field(
    document: object, field: str
) -> None:
    with pytest.raises(ValueError, match=field):
        import_agent(document)  # type: ignore[arg-type]


def test_metadata_that_is_not_plain_data_is_refused() -> None:
    with pytest.raises(ValueError, match="metadata"):
        gmi(instructions="x").export({"when": datetime.now()})
