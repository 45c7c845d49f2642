"""GatewayProviderManager answers only from the serving hop."""

from __future__ import annotations

from agentos import Message
from agentos.llm import FallbackLeg, GatewayDefaults, ModelRequest, create_completion_gateway
from agentos.llm.gateway import GatewayProviderManager
from agentos.testing import ScriptedModel, ScriptStep


async def test_it_answers_only_for_the_serving_hop() -> None:
    models = {
        "openai": ScriptedModel([ScriptStep.fail(503, "down")], provider_id="openai", model_id="o"),
        "anthropic": ScriptedModel(["ok"], provider_id="anthropic", model_id="a"),
    }
    gateway = create_completion_gateway(
        GatewayDefaults(
            provider="openai", fallback_providers=[FallbackLeg("anthropic")], environ={}
        ),
        resolver=lambda provider, model, **_: models[provider],
    )
    manager = GatewayProviderManager().as_provider_manager()
    turn = gateway.begin_turn()
    manager.bind(turn)
    assert manager.get_provider("openai") is None  # nothing served yet
    async for _ in turn.stream_step(lambda hop: ModelRequest([Message.user("Hi")])):
        pass
    assert manager.get_provider("openai") is None  # the persona's provider did not serve
    served = manager.get_provider("anthropic")
    assert served is not None
    assert served.get_model() is models["anthropic"]
    assert served.get_model("other") is None
    assert manager.get_provider_for_model("a") == "anthropic"
    assert manager.get_provider_for_model("o") is None
