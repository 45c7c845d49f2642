"""The services a GMI's turns call, as one explicit value (spec: What a GMI holds, GMIBaseConfig).

`GMIServices` is what `GMI.initialize()` resolves from its `GMIConfig` and the persona: the
completion gateway (a single `ChatModel` is wrapped in a gateway with no fallback), the prompt
engine, the tool orchestrator, the provider manager that answers metaprompt calls from the hop
that served the turn, and the optional sentiment tracker and metaprompt runner (built-in ones when
the persona asks for them and the config gives none). The hooks and settings stay in ``config``.
A turn receives these services beside the GMI's state (`agentos.substrate.state.GMIState`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agentos.llm.gateway import CompletionGateway, GatewayDefaults, GatewayProviderManager
from agentos.llm.model import ChatModel
from agentos.persona.definition import PersonaDefinition
from agentos.substrate.collaborators import MetapromptRunner, TurnSentimentTracker
from agentos.substrate.config import GMIConfig
from agentos.substrate.metaprompts import MetapromptExecutor
from agentos.substrate.prompt_engine import PromptEngine
from agentos.substrate.sentiment_tracker import SentimentTracker
from agentos.tools.orchestrator import ToolOrchestrator

__all__ = ["GMIServices", "resolve_services"]


@dataclass(frozen=True, slots=True)
class GMIServices:
    """What a GMI's turns call; ``config`` carries the hooks and settings.

    ``authored_traits`` are the traits of the persona the GMI was initialized with, which the
    personality section renders whatever `GMI.set_personality_trait()` changes later.
    """

    config: GMIConfig
    gateway: CompletionGateway
    prompt_engine: PromptEngine
    tool_orchestrator: ToolOrchestrator
    provider_manager: GatewayProviderManager
    sentiment_tracker: TurnSentimentTracker | None = None
    metaprompt_runner: MetapromptRunner | None = None
    authored_traits: Mapping[str, object] = field(default_factory=dict)


def resolve_services(
    persona: PersonaDefinition, config: GMIConfig, provider_manager: GatewayProviderManager
) -> GMIServices:
    """The services ``config`` gives, with the defaults ``persona`` calls for.

    A persona that enables sentiment tracking gets a `SentimentTracker` over the config's utility
    AI when the config names no tracker; a persona with metaprompts a `MetapromptExecutor`.
    """
    tracking = persona.sentiment_tracking
    tracked = tracking is not None and tracking.enabled
    return GMIServices(
        config=config,
        gateway=config.gateway if config.gateway is not None else _single_model_gateway(config),
        prompt_engine=config.prompt_engine or PromptEngine(),
        tool_orchestrator=config.tool_orchestrator or ToolOrchestrator(),
        provider_manager=provider_manager,
        sentiment_tracker=config.sentiment_tracker
        or (SentimentTracker(config.utility_ai) if tracked else None),
        metaprompt_runner=config.metaprompt_runner
        or (MetapromptExecutor() if persona.meta_prompts else None),
        authored_traits=dict(persona.personality_traits or {}),
    )


def _single_model_gateway(config: GMIConfig) -> CompletionGateway:
    """A gateway over the config's one model, with no fallback."""
    model = config.model
    assert model is not None

    def resolver(*_args: object, **_kwargs: object) -> ChatModel:
        assert model is not None
        return model

    return CompletionGateway(
        GatewayDefaults(provider=model.provider_id, model=model.model_id, fallback_providers=[]),
        resolver=resolver,
        clock=config.clock,
    )
