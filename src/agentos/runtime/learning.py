"""The full runtime's learning layer and self-modification tools (spec "Learning").

"Layer: One per AgentOS"; "Learner session: One per GMI, built with the GMI"; "Agent:
learning.agentKey, else the persona id" (`learner_sessions`). "the runtime uses a passed layer
and leaves it open at shutdown, and closes the layer it built from learning"
(`RuntimeLearning.owned`). `runtime_host_loops` reports the runtime's loops to the manifest.
"Only the full runtime registers these tools": `SelfImprovementWiring` builds them over the
runtime's model (the judge), tools and GMI manager (the calling GMI, by id).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from agentos.core.messages import Message
from agentos.emergent.forge import (
    ForgeCandidate,
    ForgedToolRegistry,
    ForgeJudge,
    forge_tool_tool,
)
from agentos.emergent.self_improvement import (
    Judge,
    SelfImprovementOptions,
    SkillRegistry,
    self_improvement_tools,
)
from agentos.learning import LearnerContext, LearningLayer, LoopState, create_learning_layer
from agentos.llm.model import ChatModel, CompletionOptions, ModelRequest, complete_text
from agentos.storage import (
    Database,
    InMemoryPersonalityMutationStore,
    PersonalityMutationStore,
    SQLitePersonalityMutationStore,
)
from agentos.substrate import GMI
from agentos.substrate.gmi_manager_config import LearnerSessionFactory, LearnerSessionRequest
from agentos.substrate.igmi import IGMI
from agentos.substrate.learning_seam import LearnerSessionLike
from agentos.tools import Tool, ToolExecutionContext, ToolOrchestrator

from .config import AgentOSConfig
from .learning_options import (
    SelfImprovementConfig,
    check_emergent_config,
    check_runtime_learning,
    forge_options,
)
from .request import AgentOSInput
from .turn_setup import TurnLearning

__all__ = [
    "RuntimeLearning",
    "SelfImprovementWiring",
    "composable_tools",
    "learner_sessions",
    "runtime_host_loops",
    "runtime_learning",
    "turn_learning",
]


@dataclass(frozen=True, slots=True)
class RuntimeLearning:
    """The runtime's layer (``None``: learning off) and whether the runtime built it."""

    layer: LearningLayer | None
    owned: bool

    def sessions(self) -> LearnerSessionFactory | None:
        """Each new GMI's learner session factory (`learner_sessions`), ``None`` with no layer."""
        return learner_sessions(self.layer) if self.layer is not None else None


def runtime_learning(config: AgentOSConfig) -> RuntimeLearning:
    """The layer the host passed, or one built from ``config.learning`` (surface ``runtime``).

    The layer is told the runtime's host loops (`runtime_host_loops`) for its manifest.
    """
    layer = config.learning_layer
    owned = False
    if layer is None:
        settings = check_runtime_learning(config.learning, None)
        if settings is None:
            return RuntimeLearning(None, owned=False)
        layer = create_learning_layer(settings, surface="runtime", profile="custom")
        owned = True
    layer.set_host_loops(runtime_host_loops(config))
    return RuntimeLearning(layer, owned)


def learner_sessions(layer: LearningLayer) -> LearnerSessionFactory:
    """Each new GMI's learner session: its user at its first turn, the persona id as agent."""

    def open_session(request: LearnerSessionRequest) -> LearnerSessionLike:
        context = LearnerContext(
            request.session_id,
            request.persona_id,
            request.authored_traits,
            request.overlay_traits,
        )
        agent_key = layer.settings.agent_key or request.persona_id
        return layer.gmi_session(context, agent_key=agent_key, seat=request.seat)

    return open_session


def runtime_host_loops(config: AgentOSConfig) -> dict[str, LoopState]:
    """The runtime's loops for the manifest, each with a detail (spec: The manifest)."""
    improvement = check_emergent_config(config.emergent_config)
    memory = (
        LoopState("varies", "the cognitive_memory_factory decides for each GMI")
        if config.cognitive_memory_factory is not None
        else LoopState(False, "no cognitive_memory_factory is configured")
    )
    tools_on = improvement.enabled
    sandboxed = tools_on and improvement.forge.get("allow_sandbox_tools") is True
    return {
        "memory": memory,
        "memory_mechanisms": memory,
        "memory_observer_reflector": memory,
        "memory_store": memory,
        "sentiment": LoopState("varies", "the persona's sentiment tracking decides"),
        "metaprompts": LoopState("varies", "the persona's metaprompts decide"),
        "emergent_tools": LoopState(
            tools_on, "emergent_config.self_improvement.enabled" + ("" if tools_on else " is off")
        ),
        "self_improvement_tools": LoopState(
            tools_on,
            "adapt_personality, manage_skills, create_workflow, self_evaluate, forge_tool"
            if tools_on
            else "emergent_config.self_improvement.enabled is off",
        ),
        "forged_code_executor": LoopState(
            sandboxed,
            "forge_tool runs Python code in the bubblewrap sandbox"
            if sandboxed
            else "forge_tool composes existing tools only (allow_sandbox_tools is off)"
            if tools_on
            else "emergent_config.self_improvement.enabled is off",
        ),
        "hitl": LoopState(
            config.tool_approver is not None,
            "tool_approver approves tools with side effects"
            if config.tool_approver is not None
            else "no tool_approver is configured",
        ),
        "tool_policy": LoopState(True, "the tool orchestrator's capability and approval checks"),
        "rag": LoopState(
            config.retrieval_augmentor is not None,
            "retrieval_augmentor retrieves for each user turn"
            if config.retrieval_augmentor is not None
            else "no retrieval_augmentor is configured",
        ),
    }


def turn_learning(
    turn: AgentOSInput, organization: str | None, improvement: SelfImprovementWiring | None
) -> TurnLearning:
    """The turn's namespace, workflow, seat flag and skills (spec "Learning": Learners).

    The namespace is the turn's resolved ``organization`` (the request's ``organization_id``,
    else the config's ``default_organization_id``), else none; the workflow id is the request's
    ``metadata.workflow_id``; a request with an agency and a role runs on a seat's GMI.
    """
    workflow = turn.metadata.get("workflow_id")
    return TurnLearning(
        namespace=organization or "",
        workflow_id=workflow if isinstance(workflow, str) and workflow else None,
        seat=turn.agency_id is not None and turn.role_id is not None,
        skills=improvement.skill_prompt_context(turn.session_id) if improvement else None,
    )


def _judge(model: ChatModel) -> Judge:
    async def judge(prompt: str) -> str:
        request = ModelRequest(
            messages=[Message.user(prompt)], options=CompletionOptions(temperature=0.0)
        )
        return await complete_text(model, request)

    return judge


_FORGE_VERDICT = (
    "You review a tool an agent built before it is offered to the agent. Answer APPROVE if it "
    "is safe and useful and its tests show it works, else REJECT: <why>, on one line.\n\n{tool}"
)


def _forge_judge(judge: Judge) -> ForgeJudge:
    """The model as ``forge_tool``'s judge: one call, ``APPROVE`` registers the tool."""

    async def verdict(candidate: ForgeCandidate) -> tuple[bool, str | None]:
        shown = json.dumps(dataclasses.asdict(candidate), default=str, indent=1)
        reply = (await judge(_FORGE_VERDICT.format(tool=shown))).strip()
        if reply.upper().startswith("APPROVE"):
            return True, None
        return False, reply.partition(":")[2].strip() or reply or None

    return verdict


class _LiveTools(Mapping[str, Tool]):
    """The runtime's tools as they are at each read (the orchestrator is built after forge)."""

    def __init__(self, read: Callable[[], Mapping[str, Tool]]) -> None:
        self._read = read

    def __getitem__(self, name: str) -> Tool:
        return self._read()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())


def composable_tools(orchestrator: ToolOrchestrator | None) -> dict[str, Tool]:
    """The runtime's tools a forged tool may call: those its orchestrator runs unasked.

    A disabled tool, one whose capabilities are not allowed and one that waits for the
    ``tool_approver`` are left out: ``forge_tool`` runs a composed tool's steps directly, so
    composing one must not get round those checks.
    """
    if orchestrator is None:
        return {}
    return {
        name: tool
        for name, tool in orchestrator.tools.items()
        if name not in orchestrator.disabled
        and not orchestrator.missing_capabilities(tool)
        and not orchestrator.needs_approval(tool)
    }


class SelfImprovementWiring:
    """The self-modification tools of one runtime, bound to its GMI manager once it exists.

    The tools are built before the manager (they go into its tool orchestrator); the lookups
    they make (`bind`) are read at each call.
    """

    def __init__(
        self,
        config: AgentOSConfig,
        model: ChatModel,
        database: Database | None,
    ) -> None:
        self.settings: SelfImprovementConfig = check_emergent_config(config.emergent_config)
        self.skills = SkillRegistry(self.settings.skills_dir)  # spec: always registered
        self.mutation_store: PersonalityMutationStore = (
            SQLitePersonalityMutationStore(database, clock=config.clock)
            if database is not None
            else InMemoryPersonalityMutationStore(config.clock)
        )
        self._gmi_by_id: Callable[[str], GMI | IGMI | None] = lambda _gmi_id: None
        self.forged: ForgedToolRegistry | None = None
        """The tools ``forge_tool`` registered, per session (session tier); ``None``: off."""
        self._tools: Callable[[], Mapping[str, Tool]] = dict
        self.tools: list[Tool] = []
        if not self.settings.enabled:
            return
        judge = _judge(model)
        options = SelfImprovementOptions(
            gmi_for=self._gmi_for,
            judge=judge,
            tools=lambda: self._tools(),
            mutation_store=self.mutation_store,
            skills=self.skills,
            clock=config.clock,
            **self.settings.tunables,
        )
        forge = forge_options(
            self.settings.forge, tools=_LiveTools(lambda: self._tools()), judge=_forge_judge(judge)
        )
        self.forged = forge.registry
        self.tools = [*self_improvement_tools(options), forge_tool_tool(forge)]

    def bind(
        self,
        gmi_by_id: Callable[[str], GMI | IGMI | None],
        orchestrator: ToolOrchestrator | None,
    ) -> None:
        """Point the tools at the runtime's manager (the calling GMI) and its tools.

        The tools are read at each call (`composable_tools`: those ``orchestrator`` would run).
        """
        self._gmi_by_id = gmi_by_id
        self._tools = lambda: composable_tools(orchestrator)

    def session_tools(self, context: ToolExecutionContext) -> tuple[Tool, ...]:
        """The tools ``forge_tool`` registered in ``context``'s session, and only that session's.

        Issue 15, item 7: a forged tool joins its session at session level; the runtime's tool
        orchestrator offers and runs these for that session's calls only (privacy: another
        session never sees them).
        """
        if self.forged is None:
            return ()
        return self.forged.tools(ForgedToolRegistry.session_key(context))

    def _gmi_for(self, gmi_id: str) -> GMI | None:
        found = self._gmi_by_id(gmi_id)
        return found if isinstance(found, GMI) else None

    def skill_prompt_context(self, session_id: str) -> str | None:
        """The session's enabled skills' text for ``TurnOptions.skill_prompt_context``."""
        if not self.settings.enabled:
            return None
        return self.skills.prompt_context(f"session:{session_id}")
