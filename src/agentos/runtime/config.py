"""The full runtime's configuration (spec: Getting a GMI; reference §1.28, createAgentOSConfig).

Spec: "AgentOS.create() builds the default AgentOSConfig with createAgentOSConfig(), which reads
its settings from environment variables, and initializes the runtime. That configuration loads
persona definitions from ./personas and uses v_researcher as the default persona id
(DEFAULT_PERSONA_ID overrides it). For full control, construct new AgentOS() and call
initialize(config) with your own AgentOSConfig." `create_agentos_config()` is that function;
`AgentOSConfig` the configuration, whose `AgentOSConfig.check()` refuses a bad one before the
runtime starts anything; `persona_loader_for()` the persona source it names.

Environment variables `create_agentos_config()` reads. An unset or blank variable keeps the
default; keyword overrides win over every variable; a bad value raises ``CONFIGURATION_ERROR``
with ``details["option"]`` the variable's name and ``details["field"]`` the field.

- ``DEFAULT_PERSONA_ID`` (``default_persona_id``): the persona of a request that names none.
  Default ``v_researcher``. Example: ``DEFAULT_PERSONA_ID=nerf_generalist``.
- ``AGENTOS_PERSONA_DIR`` (``persona_directory``): the directory of persona JSON files; an
  inline ``personas`` list or a ``persona_loader`` given as an override replaces it. Default
  ``./personas`` (relative to the working directory). Example: ``/srv/agentos/personas``.
- ``MAX_TOOL_CALL_ITERATIONS`` (``max_tool_call_iterations``): the tool rounds one turn may
  run, a whole number >= 1. Default ``5``. Example: ``8``.
- ``AGENTOS_DEFAULT_ORGANIZATION_ID`` (``default_organization_id``): the organization of a
  request that names none, for single-tenant hosts. Default: none. Example: ``acme``.
- ``AGENTOS_REASONING_TRACE_MAX_ENTRIES`` (``default_reasoning_trace_max_entries``): the
  reasoning-trace entries a GMI keeps when its persona sets no limit, >= 1. Default: none (the
  persona's limit, else 500). Example: ``1000``.
- ``AGENTOS_UTILITY_AI`` (``utility_ai``): ``llm`` (`LLMUtilityAI`, one model call per scored
  turn) or ``statistical`` (`StatisticalUtilityAI`, a word lexicon, no call); case-insensitive.
  Default ``llm``. Example: ``statistical``.
- ``AGENTOS_CONVERSATION_STORE`` (``conversation_store``): where conversations live, ``memory``
  (the process) or ``sqlite`` (a durable file, DESIGN.md §5.9). Default ``memory``. Example:
  ``sqlite``.
- ``AGENTOS_DATABASE`` (``database_path``): the SQLite file of the ``sqlite`` store. Default
  ``$AGENTOS_HOME/agentos.db``. Example: ``/var/lib/agentos/runtime.db``.
- ``AGENTOS_HOME`` (``database_path``, when ``AGENTOS_DATABASE`` is unset): agentos's state
  directory; the database is ``agentos.db`` in it. Default ``~/.agentos``. Example:
  ``/var/lib/agentos``.
- ``AGENTOS_HISTORY_WINDOW`` (``history_window``): the stored messages sent to the model per
  turn, >= 1 (DESIGN.md §5.4). Default: none (the persona's, else 20). Example: ``40``.
- ``AGENTOS_GMI_CLEANUP_MINUTES`` (``gmi_inactivity_cleanup_minutes``): idle minutes after which
  ``cleanup_inactive_gmis()`` removes a GMI, a number >= 0. Default ``60``. Example: ``15``.
- ``AGENTOS_SHUTDOWN_TIMEOUT_MS`` (``shutdown_timeout_ms``): the bound on each GMI's shutdown,
  a whole number of milliseconds >= 1. Default ``8000``. Example: ``2000``.
- ``AGENTOS_PROVIDER`` (``provider``): the provider GMIs call directly. Default: none (the
  default provider chain). Example: ``openai``.
- ``AGENTOS_MODEL`` (``model``): a model id or ``provider:model`` (DESIGN.md §5.13). Default:
  none (the provider's default model). Example: ``openai:gpt-4o-mini``.

Channels (the messaging-platform adapters) are out of scope (DESIGN.md §5.25): a ``channels``
option (or any option naming channels) is refused with ``CONFIGURATION_ERROR``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from agentos.api.call_checks import refuse_unknown_options
from agentos.core.clock import Clock, system_clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.learning import LearningLayer, LearningSettings
from agentos.llm import ChatModel
from agentos.llm.model import ToolDefinition
from agentos.nlp import UtilityAI
from agentos.persona.definition import PersonaDefinition
from agentos.persona.loaders import (
    DEFAULT_PERSONA_DIRECTORY,
    PersonaLoader,
    resolve_persona_loader,
)
from agentos.persona.strict_mode import PersonaStrictConfig
from agentos.runtime.discovery import CapabilityDiscovery
from agentos.runtime.guardrails import Guardrail
from agentos.storage import SessionStore, ToolPauseStore
from agentos.substrate.collaborators import RetrievalAugmentor
from agentos.substrate.gmi_manager import CognitiveMemoryFactory, IGMIFactory
from agentos.tools import Tool, ToolApprover

from ._config_checks import (
    check_model,
    check_numbers,
    check_persona_sources,
    check_services,
    check_tools,
    recoded,
    refuse,
)
from ._config_env import read_environment
from .learning_options import check_emergent_config, check_runtime_learning

__all__ = ["AgentOSConfig", "create_agentos_config", "persona_loader_for"]


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentOSConfig:
    """The runtime's configuration (spec: AgentOSConfig; Getting a GMI).

    Personas come from one source: an inline ``personas`` list (`PersonaDefinition` objects or
    mappings, e.g. ``BUILT_IN_PERSONAS``), a custom ``persona_loader``, or the
    ``persona_directory`` (``./personas`` when none of the three is given). GMIs call their
    model directly: ``model`` (a `ChatModel`, a model id or ``"provider:model"``) and/or
    ``provider``, with ``api_key`` / ``base_url`` (DESIGN.md §5.20); the spec's GMIManager sets
    no gateway, so the runtime's GMIs "call their provider directly, one call per model step,
    with no fallback", and there is no fallback option.
    ``conversation_store`` ``"memory"`` keeps conversations in the process, ``"sqlite"`` in
    ``database_path`` (default ``$AGENTOS_HOME/agentos.db``), or give a `SessionStore`;
    ``tool_pause_store`` ``None`` follows it. ``external_tools`` are run by the host (DESIGN.md
    §5.24). ``cognitive_memory_factory`` is the GMI manager's factory (reference §1.9): it gets
    a `CognitiveMemoryRequest` for each new GMI and returns its memory bridge (or ``None``);
    ``igmi_factory`` builds the host's own GMIs (the spec's IGMI) in place of the built-in one;
    ``can_use_persona(user_id, persona)`` says whether a user may use a persona and
    ``persona_strict`` blocks personas strict validation refuses (both ``PERMISSION_DENIED``).
    ``tool_approver`` is the human-in-the-loop approval handler: a call to a tool with side
    effects runs only when it returns ``True`` (`ToolOrchestrator`'s ``approve``).
    ``capability_discovery`` (e.g. `KeywordCapabilityDiscovery`) words the tools a request may
    need into the priority-55 ``Capability Discovery Context`` prompt.

    Constructing one checks nothing; `check()` does, and `create_agentos_config()` and the
    runtime call it.
    """

    personas: Sequence[PersonaDefinition | Mapping[str, Any]] | None = None
    persona_loader: PersonaLoader | None = None
    persona_directory: str | os.PathLike[str] | None = None
    default_persona_id: str | None = "v_researcher"
    default_organization_id: str | None = None
    default_reasoning_trace_max_entries: int | None = None
    max_tool_call_iterations: int = 5
    model: ChatModel | str | None = None
    provider: str | None = None
    api_key: str | None = field(default=None, repr=False)  # never in a log line
    base_url: str | None = None
    utility_ai: Literal["llm", "statistical"] | UtilityAI = "llm"
    cognitive_memory_factory: CognitiveMemoryFactory | None = None
    igmi_factory: IGMIFactory | None = None
    can_use_persona: Callable[[str, PersonaDefinition], bool] | None = None
    persona_strict: PersonaStrictConfig | None = None
    conversation_store: SessionStore | Literal["memory", "sqlite"] = "memory"
    database_path: str | os.PathLike[str] | None = None
    tool_pause_store: ToolPauseStore | None = None
    tools: Sequence[Tool | Callable[..., Any]] = ()
    external_tools: Sequence[ToolDefinition | Tool] = ()
    tool_approver: ToolApprover | None = None
    capability_discovery: CapabilityDiscovery | None = None
    retrieval_augmentor: RetrievalAugmentor | None = None
    guardrails: Sequence[Guardrail] = ()
    history_window: int | None = None
    gmi_inactivity_cleanup_minutes: float = 60.0
    shutdown_timeout_ms: int = 8000
    learning: bool | Mapping[str, Any] | LearningSettings | None = None
    """The learning layer (spec "Learning": The option): ``True`` or a learning config; its
    ``namespace`` is refused (each turn's resolved organization is the namespace)."""
    learning_layer: LearningLayer | None = None
    """A layer the host built with `create_learning_layer` (the spec's
    ``gmiManagerConfig.learningLayer``), used as it is and left open at shutdown."""
    emergent_config: Mapping[str, Any] | None = None
    """``{"self_improvement": {"enabled": True, "skills_dir": ..., ...}}``: the
    self-modification tools (spec: The self-modification tools)."""
    clock: Clock = system_clock

    def check(self) -> None:
        """Refuse a configuration the runtime cannot start with, before it starts anything.

        Refused (each a `GMIError` ``CONFIGURATION_ERROR`` with ``details["option"]`` the
        field): ``personas`` together with ``persona_loader`` (spec: "the two cannot be
        combined"), ``persona_directory`` beside either, an inline persona that does not
        validate (``personas[i]``), a ``persona_loader`` without ``load_personas()``; a
        `ChatModel` instance together with ``provider``, a ``"provider:model"`` string naming
        another provider than ``provider``, blank strings; ``max_tool_call_iterations``,
        ``default_reasoning_trace_max_entries`` or ``history_window`` below 1,
        ``shutdown_timeout_ms`` <= 0, negative ``gmi_inactivity_cleanup_minutes``; a
        ``utility_ai`` string other than ``"llm"`` / ``"statistical"``, a
        ``conversation_store`` string other than ``"memory"`` / ``"sqlite"``, and any object
        that does not implement the protocol its field names; tools that are neither `Tool`
        nor functions, and tool names given twice (across ``tools`` and ``external_tools``);
        a bad ``learning`` (naming its field, ``namespace`` included), ``learning`` together
        with ``learning_layer``, and a bad ``emergent_config`` field.
        """
        check_persona_sources(
            self.personas, self.persona_loader, self.persona_directory, self.default_persona_id
        )
        check_model(self.model, self.provider, self.api_key, self.base_url)
        check_services(
            utility_ai=self.utility_ai,
            cognitive_memory_factory=self.cognitive_memory_factory,
            igmi_factory=self.igmi_factory,
            can_use_persona=self.can_use_persona,
            tool_approver=self.tool_approver,
            capability_discovery=self.capability_discovery,
            persona_strict=self.persona_strict,
            conversation_store=self.conversation_store,
            database_path=self.database_path,
            tool_pause_store=self.tool_pause_store,
            retrieval_augmentor=self.retrieval_augmentor,
            guardrails=self.guardrails,
            clock=self.clock,
        )
        check_tools(self.tools, self.external_tools)
        check_runtime_learning(self.learning, self.learning_layer)
        check_emergent_config(self.emergent_config)
        check_numbers(
            default_organization_id=self.default_organization_id,
            default_reasoning_trace_max_entries=self.default_reasoning_trace_max_entries,
            max_tool_call_iterations=self.max_tool_call_iterations,
            history_window=self.history_window,
            gmi_inactivity_cleanup_minutes=self.gmi_inactivity_cleanup_minutes,
            shutdown_timeout_ms=self.shutdown_timeout_ms,
        )


_FIELDS = frozenset(f.name for f in fields(AgentOSConfig))


def create_agentos_config(
    environ: Mapping[str, str] | None = None, **overrides: Any
) -> AgentOSConfig:
    """The default `AgentOSConfig`: the environment (see the module's table), then ``overrides``.

    ``environ`` defaults to `os.environ` (tests pass their own mapping). An inline ``personas``
    list or a ``persona_loader`` among the overrides replaces the persona directory, including
    one ``AGENTOS_PERSONA_DIR`` names (spec: it "replaces the ./personas file loader"); a
    ``model`` or ``provider`` override replaces both ``AGENTOS_MODEL`` and ``AGENTOS_PROVIDER``.
    The result is checked (`AgentOSConfig.check`).

    Raises:
        GMIError: ``CONFIGURATION_ERROR`` naming the option: a channel configuration (out of
            scope, DESIGN.md §5.25), an unknown override (with the closest field suggested), a
            bad environment value (named by its variable), or what `AgentOSConfig.check`
            refuses.
    """
    channel_keys = sorted(key for key in overrides if "channel" in key.lower())
    if channel_keys:
        refuse(
            channel_keys[0],
            "messaging-platform channels are not supported by this runtime "
            "(DESIGN.md §5.25); remove the option and connect channels in the host",
        )
    try:
        refuse_unknown_options(overrides, _FIELDS)
    except GMIError as exc:
        raise recoded(exc, exc.details["option"]) from exc
    values = read_environment(os.environ if environ is None else environ)
    if overrides.get("personas") is not None or overrides.get("persona_loader") is not None:
        values.pop("persona_directory", None)
    if "model" in overrides or "provider" in overrides:
        # The pair names one model: an override of either replaces both variables, so a
        # model instance passed in code never meets an AGENTOS_PROVIDER from the shell.
        values.pop("model", None)
        values.pop("provider", None)
    values.update(overrides)
    config = AgentOSConfig(**values)
    config.check()
    return config


def persona_loader_for(config: AgentOSConfig) -> PersonaLoader:
    """The persona source ``config`` names: the inline list, the custom loader or the directory.

    The directory (``persona_directory``, else ``./personas``) is resolved to an absolute path
    now, against the current working directory, so a later ``chdir`` does not move it.

    Raises:
        GMIError: ``CONFIGURATION_ERROR``: what `AgentOSConfig.check` refuses (inline and
            custom combined, ...); and, when neither an inline list nor a custom loader is
            given and the directory does not exist, one naming its absolute path
            (``details["path"]``, ``details["option"]`` ``"persona_directory"``).
    """
    config.check()
    if config.persona_loader is not None:
        return resolve_persona_loader(persona_loader=config.persona_loader)
    if config.personas is not None:
        return resolve_persona_loader(personas=config.personas)
    directory = Path(config.persona_directory or DEFAULT_PERSONA_DIRECTORY).expanduser().resolve()
    if not directory.is_dir():
        what = "is not a directory" if directory.exists() else "does not exist"
        raise GMIError(
            f"The persona directory {directory} {what}, and no other persona source is "
            "configured. Create it with persona JSON files, point AGENTOS_PERSONA_DIR (or "
            "persona_directory) at one, or pass personas=[...] (e.g. BUILT_IN_PERSONAS) or "
            "persona_loader=...",
            GMIErrorCode.CONFIGURATION_ERROR,
            {"option": "persona_directory", "path": str(directory)},
            component="runtime",
        )
    return resolve_persona_loader(persona_definition_path=directory)
