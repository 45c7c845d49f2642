"""`AgentOS`: the full runtime (spec: Getting a GMI; Output stream; the first table's runtime rows).

``agentos = await AgentOS.create(personas=BUILT_IN_PERSONAS)`` builds the configuration from the
environment (`create_agentos_config`) with the given overrides and initializes it; for full
control, ``AgentOS()`` and ``await agentos.initialize(config)``. `process_request()` streams one
turn's `AgentOSResponse` chunks: the request is checked before any work (`parse_request`), the
persona is the request's ``selected_persona_id`` or the configuration's ``default_persona_id``
(neither: ``VALIDATION_ERROR``), the session's GMI comes from `GMIManager` (``PERSONA_NOT_FOUND``,
``PERMISSION_DENIED``), the stored conversation, bounded by the history window, is passed to the
GMI as ``conversation_history_for_prompt``, and the request's options are the turn's options.
`handle_tool_results()` continues a turn that paused for the host. `shutdown()` shuts the manager
down after the turns it stops; afterwards every call raises ``NOT_INITIALIZED``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, ToolResult
from agentos.learning import LearningLayer
from agentos.llm.model import ToolDefinition
from agentos.persona.definition import PersonaDefinition
from agentos.persona.loaders import PersonaRegistry
from agentos.storage import ToolPause
from agentos.storage.turn_writer import TurnWriter
from agentos.substrate.gmi_manager import GMIManager, GMIManagerConfig
from agentos.substrate.igmi import IGMITurnStream
from agentos.substrate.turn_options import TurnOptions

from .chunks import AgentOSResponse
from .config import AgentOSConfig, create_agentos_config, persona_loader_for
from .continuation import check_organization_id, continuation_namespace, take_pause
from .conversations import Conversations, history_window
from .guardrails import GuardrailRunner
from .learning import RuntimeLearning, SelfImprovementWiring, runtime_learning, turn_learning
from .request import AgentOSInput, parse_request
from .services import RuntimeStores, base_gmi_config, open_stores, runtime_model
from .transformer import GMIChunkTransformer
from .turn_runner import TurnPlace, stream_turn
from .turn_setup import (
    check_input,
    continue_with,
    history_size,
    resume_paused_round,
    turn_input,
)

__all__ = ["AgentOS"]


class AgentOS:
    """The full runtime: personas, one GMI per session, the response stream (module doc)."""

    def __init__(self) -> None:
        self._config: AgentOSConfig | None = None
        self._manager: GMIManager | None = None
        self._stores: RuntimeStores | None = None
        self._conversations: Conversations | None = None
        self._personas: PersonaRegistry | None = None
        self._guardrails: GuardrailRunner | None = None
        self._offered_tools: list[ToolDefinition] = []
        self._learning = RuntimeLearning(None, owned=False)
        self._improvement: SelfImprovementWiring | None = None
        self._improvement_on = False
        self._shut = False

    @classmethod
    async def create(cls, **overrides: Any) -> AgentOS:
        """A runtime initialized with `create_agentos_config(**overrides)`.

        The configuration reads the environment variables, then ``overrides`` replace them.
        """
        runtime = cls()
        await runtime.initialize(create_agentos_config(**overrides))
        return runtime

    async def initialize(self, config: AgentOSConfig) -> None:
        """Check ``config``, load the personas, open the stores and start the GMI manager.

        Raises `GMIError` ``CONFIGURATION_ERROR`` naming the option before any service starts.
        """
        if self._config is not None:
            raise GMIError("AgentOS is already initialized", GMIErrorCode.INVALID_STATE)
        config.check()
        guardrails = GuardrailRunner(config.guardrails) if config.guardrails else None
        registry = PersonaRegistry(persona_loader_for(config))
        await registry.load()
        stores = open_stores(config)
        try:
            improvement = SelfImprovementWiring(config, runtime_model(config), stores.database)
        except BaseException:
            stores.close()
            raise
        base = base_gmi_config(config, guardrails, improvement.tools, improvement.session_tools)
        learning = runtime_learning(config)
        self._manager = GMIManager(
            GMIManagerConfig(
                base_config=base,
                personas=registry,
                cognitive_memory_factory=config.cognitive_memory_factory,
                igmi_factory=config.igmi_factory,
                can_use_persona=config.can_use_persona,
                persona_strict=config.persona_strict,
                inactivity_cleanup_minutes=config.gmi_inactivity_cleanup_minutes,
                shutdown_timeout_ms=config.shutdown_timeout_ms,
                default_reasoning_trace_max_entries=config.default_reasoning_trace_max_entries,
                learning_sessions=learning.sessions(),
            )
        )
        orchestrator = base.tool_orchestrator
        improvement.bind(self._manager.gmi_by_id, orchestrator)
        self._improvement = improvement
        self._improvement_on = improvement.settings.enabled
        self._learning = learning
        self._stores = stores
        self._conversations = Conversations(
            stores.conversations, private=config.conversation_store == "memory"
        )
        self._personas = registry
        self._guardrails = guardrails
        self._offered_tools = orchestrator.list_tools() if orchestrator is not None else []
        self._config = config

    # -- requests -------------------------------------------------------------------------------

    async def process_request(
        self, request: AgentOSInput | Mapping[str, Any]
    ) -> AsyncIterator[AgentOSResponse]:
        """One turn's response chunks (see the module doc); the request is checked first.

        With guardrails configured, the input is checked before the turn (a block ends it with
        a final ERROR ``GUARDRAIL_BLOCKED`` and nothing is stored; a redaction is what the GMI
        and the conversation get), the reply as it streams, and each tool call before it runs.
        """
        turn = parse_request(request)
        config, manager, conversations, _ = self._ready()
        persona_id = turn.selected_persona_id or config.default_persona_id
        if not persona_id:
            raise GMIError(
                "no persona: the request names no selected_persona_id and the configuration "
                "no default_persona_id",
                GMIErrorCode.VALIDATION_ERROR,
                {"option": "selected_persona_id"},
            )
        conversation = conversations.open(turn.session_id, turn.user_id)
        gmi = await manager.get_or_create_gmi_for_session(
            turn.user_id,
            turn.session_id,
            persona_id,
            agency_id=turn.agency_id,
            role_id=turn.role_id,
        )
        manager.touch(turn.session_id)
        interaction_id = f"{turn.session_id}_turn_{os.urandom(16).hex()}"
        # The turn's organization: its chunks' and its learner's namespace (spec: Learners).
        organization = turn.organization_id or config.default_organization_id
        transformer = GMIChunkTransformer(
            stream_id=interaction_id,
            gmi_instance_id=gmi.gmi_id,
            persona_id=persona_id,
            session_id=turn.session_id,
            organization_id=organization,
            clock=config.clock,
        )
        checked = await check_input(self._guardrails, turn.text_input, transformer)
        for response in checked.responses:
            yield response
        if checked.blocked:
            return
        # One turn at a time per session here; across processes a durable store's lease too.
        async with conversations.turn_lock(turn.session_id):
            writer = await conversation.start_turn(name=turn.session_id)
            try:
                window = history_size(gmi.persona, config.history_window)
                # The newest messages only, with room for whole rounds at the window's start.
                recent = conversation.recent_prompt_messages(2 * window + 16)
                earlier = history_window(recent, window)
                discovery = config.capability_discovery
                context = (
                    await discovery.discover(checked.text, self._offered_tools)
                    if discovery is not None and checked.text
                    else None
                )
                args = (turn, interaction_id, checked.text, earlier, context, gmi.persona)
                wanted = self._learning.layer is not None or self._improvement_on
                learning = turn_learning(turn, organization, self._improvement) if wanted else None
                stream = gmi.process_turn_stream(turn_input(*args, learning=learning))
            except BaseException:
                await writer.discard()
                raise
            place = TurnPlace(
                turn.session_id,
                turn.user_id,
                persona_id,
                gmi.gmi_id,
                interaction_id,
                gmi.persona,
                organization or None,
            )
            user_message = Message.user(checked.text) if checked.text else None
            async for response in self._stream(stream, transformer, place, writer, user_message):
                yield response

    async def handle_tool_results(
        self,
        session_id: str,
        user_id: str,
        results: Sequence[ToolResult],
        *,
        organization_id: str | None = None,
    ) -> AsyncIterator[AgentOSResponse]:
        """Continue the turn that paused for the host with the host's ``results``.

        The session's pending request is taken (exactly once, however many callers race); a
        result naming a call the request does not hold raises ``VALIDATION_ERROR`` before any
        work. The session's GMI continues the paused round (a GMI rebuilt after a restart is
        given the stored conversation first); each call the host left out is answered with
        ``EXTERNAL_TOOL_NOT_RUN`` by a GMI that implements ``handle_tool_results``. It runs under
        ``organization_id``, else the paused turn's (`continuation_namespace`).
        """
        check_organization_id(organization_id)
        config, manager, conversations, stores = self._ready()
        taken, answered = await take_pause(stores.pauses, session_id, user_id, results)
        namespace = continuation_namespace(organization_id, taken, config.default_organization_id)
        org = namespace or None
        conversation = conversations.open(session_id, user_id)
        gmi = await manager.get_or_create_gmi_for_session(user_id, session_id, taken.persona_id)
        manager.touch(session_id)
        async with conversations.turn_lock(session_id):
            writer = await conversation.start_turn(name=session_id)
            try:
                resume_paused_round(gmi, conversation, taken)
                options = TurnOptions(learning_namespace=namespace)
                stream = await continue_with(gmi, results, answered, user_id, options)
            except BaseException:
                await writer.discard()
                raise
            interaction_id = f"{session_id}_continue_{os.urandom(16).hex()}"
            transformer = GMIChunkTransformer(
                stream_id=interaction_id,
                gmi_instance_id=gmi.gmi_id,
                persona_id=taken.persona_id,
                session_id=session_id,
                organization_id=org,
                clock=config.clock,
            )
            place = TurnPlace(
                session_id, user_id, taken.persona_id, gmi.gmi_id, interaction_id, gmi.persona, org
            )
            async for response in self._stream(
                stream,
                transformer,
                place,
                writer,
                None,
                continuation=True,
                answered=[Message.tool(result) for result in answered],
            ):
                yield response

    def _stream(
        self,
        stream: IGMITurnStream,
        transformer: GMIChunkTransformer,
        place: TurnPlace,
        writer: TurnWriter,
        user_message: Message | None,
        *,
        continuation: bool = False,
        answered: Sequence[Message] = (),
    ) -> AsyncIterator[AgentOSResponse]:
        """A turn's or a continuation's chunks, under the output guardrails (`stream_turn`)."""
        config, _, _, stores = self._ready()
        guardrails = self._guardrails
        return stream_turn(
            stream,
            transformer,
            place,
            pauses=stores.pauses,
            writer=writer,
            user_message=user_message,
            clock=config.clock,
            guard=guardrails.output_stream() if guardrails is not None else None,
            continuation=continuation,
            answered=answered,
        )

    def handle_tool_result(
        self,
        session_id: str,
        user_id: str,
        tool_call_id: str,
        tool_name: str,
        output: Any,
        *,
        is_success: bool = True,
        error_message: str | None = None,
        organization_id: str | None = None,
    ) -> AsyncIterator[AgentOSResponse]:
        """`handle_tool_results()` with one call's outcome (reference ``handleToolResult``)."""
        details = None if is_success else {"message": error_message or str(output)}
        result = ToolResult(tool_call_id, tool_name, output, not is_success, details)
        return self.handle_tool_results(
            session_id, user_id, [result], organization_id=organization_id
        )

    def resume_external_tool_request(
        self,
        pause: ToolPause,
        results: Sequence[ToolResult],
        *,
        organization_id: str | None = None,
    ) -> AsyncIterator[AgentOSResponse]:
        """Continue a pending request read earlier (`get_pending_external_tool_request`).

        The same continuation as `handle_tool_results()` for the pause's session and user, on
        whichever runtime now serves it: a GMI rebuilt after a restart is hydrated first and
        binds its learner under the paused turn's organization (or ``organization_id``).
        """
        return self.handle_tool_results(
            pause.session_id, pause.user_id, results, organization_id=organization_id
        )

    async def get_pending_external_tool_request(
        self, session_id: str, *, user_id: str
    ) -> ToolPause | None:
        """The session's pending request for the host's tools, or ``None``.

        Raises ``PERMISSION_DENIED`` naming ``user_id`` when the pause is another user's.
        """
        stores = self._ready()[3]
        return await stores.pauses.load(session_id, user_id=user_id)

    async def conversation(self, session_id: str, *, user_id: str) -> list[Message]:
        """The session's stored conversation: each input and reply.

        Raises ``PERMISSION_DENIED`` for a session another user owns.
        """
        conversations = self._ready()[2]
        history = conversations.open(session_id, user_id)
        await history.load()
        return history.messages()

    def get_learning_layer(self) -> LearningLayer | None:
        """The runtime's learning layer, or ``None`` with learning off (spec: The option)."""
        self._ready()
        return self._learning.layer

    # -- the runtime ----------------------------------------------------------------------------

    @property
    def gmi_manager(self) -> GMIManager:
        """The runtime's `GMIManager` (``NOT_INITIALIZED`` outside initialize and shutdown)."""
        return self._ready()[1]

    @property
    def config(self) -> AgentOSConfig:
        """The configuration the runtime was initialized with."""
        return self._ready()[0]

    def personas(self) -> list[PersonaDefinition]:
        """The personas the runtime loaded (copies)."""
        self._ready()
        assert self._personas is not None
        return self._personas.personas()

    async def shutdown(self) -> None:
        """Shut the GMI manager down (each GMI within the bound), then close the stores.

        Afterwards every call raises ``NOT_INITIALIZED``; a second call does nothing.
        """
        if self._shut or self._manager is None:
            self._shut = True
            return
        self._shut = True
        try:
            await self._manager.shutdown()  # ends every GMI's learner session
        finally:
            if self._learning.owned and self._learning.layer is not None:
                await self._learning.layer.close()  # a passed layer stays open
            if self._stores is not None:
                self._stores.close()

    def _ready(self) -> tuple[AgentOSConfig, GMIManager, Conversations, RuntimeStores]:
        if (
            self._shut
            or self._config is None
            or self._manager is None
            or self._conversations is None
            or self._stores is None
        ):
            raise GMIError(
                "AgentOS is not initialized (or was shut down)", GMIErrorCode.NOT_INITIALIZED
            )
        return self._config, self._manager, self._conversations, self._stores
