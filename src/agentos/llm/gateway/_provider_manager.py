"""`GatewayProviderManager`: the provider manager of a GMI whose model calls go through a gateway.

Spec ("Metaprompts and utility calls"): metaprompts and utility calls reach a provider through
it, and it answers only from the hop serving the turn: `get_provider()` only for that hop's
provider id, `get_provider_for_model()` only for its model id. When a fallback hop on another
provider serves the turn, a call on the persona's provider finds none; such calls have no
fallback of their own.
"""

from __future__ import annotations

from agentos.llm.gateway._gateway import GatewayTurn
from agentos.llm.gateway._hops import Hop
from agentos.llm.model import ChatModel

__all__ = ["GatewayProviderManager"]


class ServingProvider:
    """The serving hop's provider: it hands out that hop's model only."""

    def __init__(self, provider_id: str, model: ChatModel) -> None:
        self.provider_id = provider_id
        self._model = model

    def get_model(self, model_id: str | None = None) -> ChatModel | None:
        """The serving model, when ``model_id`` is its id or ``None``."""
        if model_id is None or model_id == self._model.model_id:
            return self._model
        return None


class GatewayProviderManager:
    """Answers from the hop that served the current turn's last step (none before one has)."""

    def __init__(self) -> None:
        self._turn: GatewayTurn | None = None

    def bind(self, turn: GatewayTurn | None) -> None:
        """Follow ``turn`` (the GMI binds each user turn's gateway turn as it starts)."""
        self._turn = turn

    def as_provider_manager(self) -> GatewayProviderManager:
        """Return itself where a provider manager is expected (spec: ``asProviderManager()``)."""
        return self

    def serving_hop(self) -> Hop | None:
        """The hop that served the bound turn's last step, or ``None``."""
        return self._turn.serving_hop if self._turn is not None else None

    def get_provider(self, provider_id: str) -> ServingProvider | None:
        """The serving hop's provider when ``provider_id`` is its id, else ``None``."""
        hop = self._turn.serving_hop if self._turn is not None else None
        if hop is None or hop.provider_id != provider_id:
            return None
        return ServingProvider(hop.provider_id, hop.model)

    def get_provider_for_model(self, model_id: str) -> str | None:
        """The serving hop's provider id when ``model_id`` is its model, else ``None``."""
        hop = self._turn.serving_hop if self._turn is not None else None
        if hop is None or hop.model_id != model_id:
            return None
        return hop.provider_id
