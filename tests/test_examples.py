"""The examples under examples/ run as documented (on the scripted model)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from agentos.core.messages import ToolCall
from agentos.testing import ScriptedModel, ScriptStep

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_gmi_turn_example(capsys: pytest.CaptureFixture[str]) -> None:
    example = load("gmi_turn")
    model = ScriptedModel(
        [
            ScriptStep(tool_calls=[ToolCall("c1", "word_count", {"text": "the quick brown fox"})]),
            "Four words.",
        ]
    )
    output = await example.main(model)
    assert output.response_text == "Four words."
    printed = capsys.readouterr().out
    assert "[tool word_count -> 4]" in printed
    assert "Four words." in printed
    system = [m.text for m in model.requests[0].messages if m.role.value == "system"]
    assert system[-1] == "User response preference: keep the answer concise and to the point."


async def test_cognitive_memory_example(capsys: pytest.CaptureFixture[str]) -> None:
    from agentos.testing import HashEmbedder

    example = load("cognitive_memory")
    recalled = await example.main(HashEmbedder(384))
    assert len(recalled) == 2
    assert "## How To Use Your Memories" in capsys.readouterr().out


async def test_tutor_session_example(capsys: pytest.CaptureFixture[str]) -> None:
    from agentos.testing import HashEmbedder

    example = load("tutor_session")
    model = ScriptedModel(
        lambda messages, tools, options: (
            '{"updatedGmiMood": "empathetic"}' if options.json_mode else "Think of mirrors."
        )
    )
    memories = await example.main(model, HashEmbedder(256))
    printed = capsys.readouterr().out
    assert "Tutor: Think of mirrors." in printed
    assert "[event] user_frustrated" in printed
    assert "[mood] empathetic" in printed
    assert "I hate recursion: it is awful and confusing and I feel stupid." in memories


async def test_runtime_quickstart_example(capsys: pytest.CaptureFixture[str]) -> None:
    example = load("runtime_quickstart")
    model = ScriptedModel(lambda messages, tools, options: "Two incidents are open.")
    reply = await example.main(model)
    assert reply == "Two incidents are open."
    printed = capsys.readouterr().out
    assert printed.startswith("Two incidents are open.\n[")
    assert printed.rstrip().endswith("tokens]")


def test_runtime_external_tools_example_pauses_in_one_process_and_resumes_in_another(
    tmp_path: Path,
) -> None:
    example = load("runtime_external_tools")
    reply = example.main(scripted=True, directory=str(tmp_path))
    assert reply == "Your refund of 30 dollars was approved."


async def test_the_review_loop_example_runs_offline(capsys: pytest.CaptureFixture[str]) -> None:
    result = await load("agency_review_loop").main()
    assert [c.agent for c in result.agent_calls] == ["writer", "editor", "writer", "editor"]
    assert result.text.startswith("This double-walled steel bottle")
    assert "Final copy: This double-walled" in capsys.readouterr().out


async def test_the_hierarchical_example_runs_offline(capsys: pytest.CaptureFixture[str]) -> None:
    result = await load("agency_hierarchical").main()
    assert [c.agent for c in result.agent_calls] == ["writer", "fact_checker", "manager"]
    assert result.metadata["emergent_agents"] == ["fact_checker"]
    assert "(Checked: The Moon is about 384,000 km away: correct." in result.text
    assert "Specialists spawned: ['fact_checker']" in capsys.readouterr().out
