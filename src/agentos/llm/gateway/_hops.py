"""What a gateway is set up with and what its steps run on (spec: completion gateway).

A `Hop` is one place a step can run; `AttemptFailed` reports an attempt that failed;
`GatewayDefaults` holds the routing inputs a turn does not carry, with the `Router` and the
callbacks it may name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from agentos.core.errors import GMIError
from agentos.core.usage import ModelUsage
from agentos.llm.gateway._fallback import FallbackLeg
from agentos.llm.model import ChatModel, ModelRequest
from agentos.llm.resolve import resolve_model

__all__ = [
    "AttemptFailed",
    "FallbackCallback",
    "GatewayDefaults",
    "Hop",
    "HopFailureCallback",
    "ModelResolver",
    "Router",
    "UnstartableHop",
    "resolve_any_hop",
]


@dataclass(frozen=True, slots=True)
class Hop:
    """One place a step can run: its position (0 = the primary or the router's choice)."""

    index: int
    provider_id: str
    model_id: str
    model: ChatModel
    leg: FallbackLeg | None = None


@dataclass(frozen=True, slots=True)
class UnstartableHop:
    """A hop whose provider could not be set up (no credentials, no adapter, a bad model)."""

    provider_id: str
    model_id: str
    error: GMIError


@dataclass(frozen=True, slots=True)
class AttemptFailed:
    """An attempt that failed; ``usage`` is what its provider billed, when it said."""

    hop: Hop
    error: BaseException
    usage: ModelUsage | None
    after_output: bool


Router = Callable[[str, Sequence[tuple[str, str]]], "tuple[str, str] | None"]
"""Chooses a route: given the task hint and the candidate (provider, model) pairs, returns the
(provider, model) to try first, or ``None`` for the primary."""

ModelResolver = Callable[..., ChatModel]
"""Builds a hop's model: ``(provider, model, *, api_key, base_url, environ, hop)``; ``hop`` is
the hop's position (0 for the primary or the router's choice). The default is `resolve_model`,
which does not need the position."""


def resolve_any_hop(
    provider: str | None,
    model: str | None,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    environ: Mapping[str, str] | None = None,
    hop: int = 0,
) -> ChatModel:
    """The default `ModelResolver`: `resolve_model`, whatever the hop's position."""
    return resolve_model(provider, model, api_key=api_key, base_url=base_url, environ=environ)


FallbackCallback = Callable[[BaseException, str], None]
"""``on_fallback(error, provider)``: the step moves to ``provider`` after ``error``."""

HopFailureCallback = Callable[[str, str, BaseException], None]
"""``on_hop_failure(provider, model, error)``: a hop was skipped or failed."""


@dataclass(frozen=True, slots=True)
class GatewayDefaults:
    """The routing inputs a turn does not carry (spec: ``createCompletionGateway(defaults)``).

    ``api_key`` and ``base_url`` are the primary's credentials: they apply to every hop on the
    primary's provider (the primary, a router's choice, a fallback leg) unless a leg names its
    own, and to no hop on another provider (DESIGN §5.20, `ProviderCredentials`). A turn that
    names another provider runs there without them. ``fallback_providers=None`` builds the
    policy-aware chain from the environment; ``[]`` turns fallback off.
    """

    provider: str | None = None
    model: str | None = None
    api_key: str | None = None
    base_url: str | None = None
    fallback_providers: Sequence[FallbackLeg] | None = None
    router: Router | None = None
    policy_tier: str | None = None
    on_fallback: FallbackCallback | None = None
    on_hop_failure: HopFailureCallback | None = None
    before_attempt: Callable[[Hop, ModelRequest], None] | None = None
    environ: Mapping[str, str] | None = field(default=None, repr=False)
