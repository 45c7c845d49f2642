"""The full runtime's configuration: environment, overrides, refusals, persona sources.

Spec (Getting a GMI): "AgentOS.create() builds the default AgentOSConfig with
createAgentOSConfig(), which reads its settings from environment variables ... That
configuration loads persona definitions from ./personas and uses v_researcher as the default
persona id (DEFAULT_PERSONA_ID overrides it)." and "An inline personas list ... or a custom
personaLoader replaces the ./personas file loader; the two cannot be combined. A ./personas
directory of persona JSON files works without either override."
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentos.core import GMIError, GMIErrorCode
from agentos.core.clock import system_clock
from agentos.llm.model import ToolDefinition
from agentos.nlp import StatisticalUtilityAI
from agentos.persona import (
    BUILT_IN_PERSONAS,
    DirectoryPersonaLoader,
    InMemoryPersonaLoader,
    PersonaDefinition,
    PersonaRegistry,
)
from agentos.runtime.config import AgentOSConfig, create_agentos_config, persona_loader_for
from agentos.storage import InMemorySessionStore
from agentos.testing import FakeClock, ScriptedModel
from agentos.tools import Tool

CONFIG_ERROR = GMIErrorCode.CONFIGURATION_ERROR


def lookup(query: str) -> str:
    """Look something up."""
    return query


class _Loader:
    """A custom persona source."""

    def __init__(self, personas: Sequence[PersonaDefinition]) -> None:
        self.personas = list(personas)

    async def load_personas(self) -> list[PersonaDefinition]:
        return list(self.personas)


def _persona_json(pid: str) -> dict[str, object]:
    return {"id": pid, "name": pid.upper(), "version": "1.0.0", "baseSystemPrompt": f"I am {pid}."}


def _refused(call: Any, **kwargs: Any) -> GMIError:
    with pytest.raises(GMIError) as caught:
        call(**kwargs)
    assert caught.value.code is CONFIG_ERROR
    return caught.value


# --- environment ---------------------------------------------------------------------------


def test_defaults_with_an_empty_environment() -> None:
    config = create_agentos_config(environ={})
    assert config.default_persona_id == "v_researcher"
    assert config.persona_directory is None
    assert config.max_tool_call_iterations == 5
    assert config.default_organization_id is None
    assert config.default_reasoning_trace_max_entries is None
    assert config.utility_ai == "llm"
    assert config.conversation_store == "memory"
    assert config.database_path is None
    assert config.history_window is None
    assert config.gmi_inactivity_cleanup_minutes == 60.0
    assert config.shutdown_timeout_ms == 8000
    assert config.model is None
    assert config.provider is None
    assert config.clock is system_clock
    assert create_agentos_config(environ={}) == AgentOSConfig()


def test_every_variable_is_read_with_its_exact_value() -> None:
    config = create_agentos_config(
        environ={
            "DEFAULT_PERSONA_ID": "nerf_generalist",
            "AGENTOS_PERSONA_DIR": "/srv/personas",
            "MAX_TOOL_CALL_ITERATIONS": "8",
            "AGENTOS_DEFAULT_ORGANIZATION_ID": "acme",
            "AGENTOS_REASONING_TRACE_MAX_ENTRIES": "1000",
            "AGENTOS_UTILITY_AI": "Statistical",
            "AGENTOS_CONVERSATION_STORE": "sqlite",
            "AGENTOS_DATABASE": "/var/lib/agentos/runtime.db",
            "AGENTOS_HISTORY_WINDOW": "40",
            "AGENTOS_GMI_CLEANUP_MINUTES": "12.5",
            "AGENTOS_SHUTDOWN_TIMEOUT_MS": "2000",
            "AGENTOS_PROVIDER": "openai",
            "AGENTOS_MODEL": "gpt-4o-mini",
        }
    )
    assert config.default_persona_id == "nerf_generalist"
    assert config.persona_directory == Path("/srv/personas")
    assert config.max_tool_call_iterations == 8
    assert config.default_organization_id == "acme"
    assert config.default_reasoning_trace_max_entries == 1000
    assert config.utility_ai == "statistical"
    assert config.conversation_store == "sqlite"
    assert config.database_path == Path("/var/lib/agentos/runtime.db")
    assert config.history_window == 40
    assert config.gmi_inactivity_cleanup_minutes == 12.5
    assert config.shutdown_timeout_ms == 2000
    assert config.provider == "openai"
    assert config.model == "gpt-4o-mini"


def test_blank_variables_keep_the_defaults() -> None:
    config = create_agentos_config(
        environ={"MAX_TOOL_CALL_ITERATIONS": "  ", "DEFAULT_PERSONA_ID": "", "AGENTOS_HOME": " "}
    )
    assert config.max_tool_call_iterations == 5
    assert config.default_persona_id == "v_researcher"
    assert config.database_path is None


def test_agentos_home_places_the_database_unless_agentos_database_names_one() -> None:
    home = create_agentos_config(environ={"AGENTOS_HOME": "/data/agentos"})
    assert home.database_path == Path("/data/agentos/agentos.db")
    both = create_agentos_config(
        environ={"AGENTOS_HOME": "/data/agentos", "AGENTOS_DATABASE": "/tmp/other.db"}
    )
    assert both.database_path == Path("/tmp/other.db")


def test_the_process_environment_is_read_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEFAULT_PERSONA_ID", "atlas-systems-architect")
    monkeypatch.setenv("MAX_TOOL_CALL_ITERATIONS", "3")
    config = create_agentos_config()
    assert config.default_persona_id == "atlas-systems-architect"
    assert config.max_tool_call_iterations == 3


@pytest.mark.parametrize(
    ("variable", "value", "field"),
    [
        ("MAX_TOOL_CALL_ITERATIONS", "five", "max_tool_call_iterations"),
        ("MAX_TOOL_CALL_ITERATIONS", "0", "max_tool_call_iterations"),
        ("AGENTOS_REASONING_TRACE_MAX_ENTRIES", "-3", "default_reasoning_trace_max_entries"),
        ("AGENTOS_UTILITY_AI", "gpt", "utility_ai"),
        ("AGENTOS_CONVERSATION_STORE", "postgres", "conversation_store"),
        ("AGENTOS_HISTORY_WINDOW", "0", "history_window"),
        ("AGENTOS_GMI_CLEANUP_MINUTES", "-1", "gmi_inactivity_cleanup_minutes"),
        ("AGENTOS_GMI_CLEANUP_MINUTES", "nan", "gmi_inactivity_cleanup_minutes"),
        ("AGENTOS_GMI_CLEANUP_MINUTES", "soon", "gmi_inactivity_cleanup_minutes"),
        ("AGENTOS_SHUTDOWN_TIMEOUT_MS", "0", "shutdown_timeout_ms"),
        ("AGENTOS_SHUTDOWN_TIMEOUT_MS", "1.5", "shutdown_timeout_ms"),
    ],
)
def test_a_bad_variable_is_refused_naming_it(variable: str, value: str, field: str) -> None:
    error = _refused(create_agentos_config, environ={variable: value})
    assert error.details == {"option": variable, "field": field}
    assert error.message.startswith(f"{variable}={value!r}: {field} must be")


def test_a_model_string_naming_another_provider_is_refused_from_the_environment() -> None:
    error = _refused(
        create_agentos_config,
        environ={"AGENTOS_PROVIDER": "anthropic", "AGENTOS_MODEL": "openai:x"},
    )
    assert error.details["option"] == "model"


# --- overrides ------------------------------------------------------------------------------


def test_overrides_win_over_the_environment() -> None:
    clock = FakeClock()
    config = create_agentos_config(
        environ={"MAX_TOOL_CALL_ITERATIONS": "8", "DEFAULT_PERSONA_ID": "nerf_generalist"},
        max_tool_call_iterations=2,
        default_persona_id=None,
        clock=clock,
    )
    assert config.max_tool_call_iterations == 2
    assert config.default_persona_id is None
    assert config.clock is clock


def test_inline_personas_replace_the_directory_the_environment_names() -> None:
    config = create_agentos_config(
        environ={"AGENTOS_PERSONA_DIR": "/srv/personas"}, personas=BUILT_IN_PERSONAS
    )
    assert config.persona_directory is None
    assert config.personas == BUILT_IN_PERSONAS


def test_a_model_override_replaces_the_provider_and_model_variables() -> None:
    model = ScriptedModel(["hi"])
    config = create_agentos_config(
        environ={"AGENTOS_PROVIDER": "openai", "AGENTOS_MODEL": "gpt-4o"}, model=model
    )
    assert config.model is model
    assert config.provider is None
    by_provider = create_agentos_config(
        environ={"AGENTOS_MODEL": "openai:gpt-4o"}, provider="anthropic"
    )
    assert (by_provider.provider, by_provider.model) == ("anthropic", None)


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("maxToolCallIterations", "max_tool_call_iterations"),
        ("personaLoader", "persona_loader"),
        ("persona_loadr", "persona_loader"),
        ("defaultPersonaId", "default_persona_id"),
        ("xyzzy", None),
    ],
)
def test_an_unknown_override_is_refused_with_a_suggestion(key: str, suggestion: str | None) -> None:
    error = _refused(create_agentos_config, environ={}, **{key: 1})
    assert error.details == {"option": key}
    hint = f" (did you mean {suggestion!r}?)" if suggestion else ""
    assert error.message == f"{key}: unknown option {key!r}{hint}"


@pytest.mark.parametrize("key", ["channels", "channel_adapters", "discordChannel"])
def test_a_channel_configuration_is_refused(key: str) -> None:
    error = _refused(create_agentos_config, environ={}, **{key: {"discord": {}}})
    assert error.details == {"option": key}
    assert "DESIGN.md §5.25" in error.message
    assert "not supported" in error.message


# --- check() --------------------------------------------------------------------------------


def _refusals() -> list[tuple[dict[str, Any], str]]:
    model = ScriptedModel(["hi"])
    tool = Tool.coerce(lookup)
    return [
        ({"personas": BUILT_IN_PERSONAS, "persona_loader": _Loader([])}, "personas"),
        ({"personas": BUILT_IN_PERSONAS, "persona_directory": "p"}, "persona_directory"),
        ({"persona_loader": _Loader([]), "persona_directory": "p"}, "persona_directory"),
        ({"persona_directory": " "}, "persona_directory"),
        ({"persona_directory": 42}, "persona_directory"),
        ({"personas": "v_researcher"}, "personas"),
        ({"personas": [{"name": "no id"}]}, "personas[0]"),
        ({"personas": [BUILT_IN_PERSONAS[0], 7]}, "personas[1]"),
        ({"persona_loader": object()}, "persona_loader"),
        ({"default_persona_id": "  "}, "default_persona_id"),
        ({"default_organization_id": 7}, "default_organization_id"),
        ({"model": model, "provider": "openai"}, "provider"),
        ({"model": "openai:gpt-4o", "provider": "anthropic"}, "model"),
        ({"model": ""}, "model"),
        ({"model": 3}, "model"),
        ({"provider": ""}, "provider"),
        ({"api_key": ""}, "api_key"),
        ({"base_url": 5}, "base_url"),
        ({"max_tool_call_iterations": 0}, "max_tool_call_iterations"),
        ({"max_tool_call_iterations": True}, "max_tool_call_iterations"),
        ({"max_tool_call_iterations": 2.0}, "max_tool_call_iterations"),
        ({"default_reasoning_trace_max_entries": 0}, "default_reasoning_trace_max_entries"),
        ({"history_window": 0}, "history_window"),
        ({"shutdown_timeout_ms": 0}, "shutdown_timeout_ms"),
        ({"shutdown_timeout_ms": -5}, "shutdown_timeout_ms"),
        ({"gmi_inactivity_cleanup_minutes": -1}, "gmi_inactivity_cleanup_minutes"),
        ({"gmi_inactivity_cleanup_minutes": math.nan}, "gmi_inactivity_cleanup_minutes"),
        ({"gmi_inactivity_cleanup_minutes": "60"}, "gmi_inactivity_cleanup_minutes"),
        ({"utility_ai": "fancy"}, "utility_ai"),
        ({"utility_ai": 3}, "utility_ai"),
        ({"cognitive_memory_factory": 5}, "cognitive_memory_factory"),
        ({"conversation_store": "postgres"}, "conversation_store"),
        ({"conversation_store": object()}, "conversation_store"),
        ({"database_path": ""}, "database_path"),
        ({"tool_pause_store": object()}, "tool_pause_store"),
        ({"tools": [42]}, "tools"),
        ({"tools": [tool, tool]}, "tools"),
        ({"external_tools": [object()]}, "external_tools[0]"),
        ({"tools": [tool], "external_tools": [tool]}, "external_tools[0]"),
        ({"external_tools": "lookup"}, "external_tools"),
        ({"retrieval_augmentor": object()}, "retrieval_augmentor"),
        ({"guardrails": [object()]}, "guardrails[0]"),
        ({"guardrails": None}, "guardrails"),
        ({"clock": object()}, "clock"),
    ]


@pytest.mark.parametrize(("kwargs", "option"), _refusals())
def test_check_refuses_naming_the_field(kwargs: dict[str, Any], option: str) -> None:
    config = AgentOSConfig(**kwargs)
    error = _refused(config.check)
    assert error.details["option"] == option
    assert error.message.startswith(option)


def test_inline_and_custom_personas_cannot_be_combined() -> None:
    error = _refused(
        create_agentos_config, environ={}, personas=BUILT_IN_PERSONAS, persona_loader=_Loader([])
    )
    assert error.details == {"option": "personas"}
    assert "cannot be combined" in error.message


def test_check_accepts_a_full_configuration() -> None:
    AgentOSConfig(
        personas=[*BUILT_IN_PERSONAS, _persona_json("extra")],
        model="openai:gpt-4o",
        provider="openai",
        utility_ai=StatisticalUtilityAI(),
        conversation_store=InMemorySessionStore(),
        tools=[lookup],
        external_tools=[ToolDefinition("approve", "Ask a human.", {"type": "object"})],
        gmi_inactivity_cleanup_minutes=0,
        history_window=1,
        clock=FakeClock(),
    ).check()
    AgentOSConfig(model=ScriptedModel(["hi"]), conversation_store="sqlite").check()


# --- persona sources ------------------------------------------------------------------------


async def test_a_personas_directory_of_json_files_works_without_an_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "personas"
    directory.mkdir()
    for pid in ("alpha", "v_researcher"):
        (directory / f"{pid}.json").write_text(json.dumps(_persona_json(pid)), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    loader = persona_loader_for(create_agentos_config(environ={}))
    assert isinstance(loader, DirectoryPersonaLoader)
    assert loader.directory == directory.resolve()
    monkeypatch.chdir(tmp_path.parent)  # resolved when built: a later chdir does not move it
    registry = PersonaRegistry(loader)
    assert sorted(persona.id for persona in await registry.load()) == ["alpha", "v_researcher"]
    assert registry.get("alpha").base_system_prompt == "I am alpha."


def test_a_missing_personas_directory_names_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    error = _refused(persona_loader_for, config=create_agentos_config(environ={}))
    path = str((tmp_path / "personas").resolve())
    assert error.details == {"option": "persona_directory", "path": path}
    assert error.message == (
        f"The persona directory {path} does not exist, and no other persona source is "
        "configured. Create it with persona JSON files, point AGENTOS_PERSONA_DIR (or "
        "persona_directory) at one, or pass personas=[...] (e.g. BUILT_IN_PERSONAS) or "
        "persona_loader=..."
    )


def test_a_configured_directory_that_is_missing_or_a_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    missing = create_agentos_config(environ={"AGENTOS_PERSONA_DIR": "conf/personas"})
    error = _refused(persona_loader_for, config=missing)
    assert error.details["path"] == str(tmp_path.resolve() / "conf" / "personas")
    (tmp_path / "file.json").write_text("{}", encoding="utf-8")
    error = _refused(persona_loader_for, config=AgentOSConfig(persona_directory="file.json"))
    assert "is not a directory" in error.message
    assert error.details["path"] == str(tmp_path.resolve() / "file.json")


async def test_inline_personas_need_no_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    loader = persona_loader_for(create_agentos_config(environ={}, personas=BUILT_IN_PERSONAS))
    assert isinstance(loader, InMemoryPersonaLoader)
    ids = [persona.id for persona in await loader.load_personas()]
    assert ids == [persona.id for persona in BUILT_IN_PERSONAS]
    assert "v_researcher" in ids


async def test_a_custom_loader_is_used_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    custom = _Loader([PersonaDefinition.model_validate(_persona_json("custom"))])
    assert persona_loader_for(create_agentos_config(environ={}, persona_loader=custom)) is custom


def test_persona_loader_for_refuses_inline_and_custom_together() -> None:
    config = AgentOSConfig(personas=BUILT_IN_PERSONAS, persona_loader=_Loader([]))
    error = _refused(persona_loader_for, config=config)
    assert error.details == {"option": "personas"}


def test_there_is_no_fallback_option_as_the_runtimes_gmis_call_their_provider_directly() -> None:
    # Spec: "GMIManager sets no gateway, so the GMIs of the full runtime call their provider
    # directly, one call per model step, with no fallback."
    with pytest.raises(GMIError) as caught:
        create_agentos_config(environ={}, fallback_providers=[{"provider": "anthropic"}])
    assert caught.value.code is GMIErrorCode.CONFIGURATION_ERROR
    assert caught.value.details["option"] == "fallback_providers"
