"""The hops of a turn: the primary or the router's choice, then the fallback chain.

Spec ("Model calls through a completion gateway"): the hops are resolved before the prompt. The
first is the router's choice or the primary; the rest are the fallback chain
(``fallback_providers``; unset: the policy-aware chain from the provider keys in the
environment, without the primary's provider). A hop that cannot be set up is kept as its error
(`UnstartableHop`), so the step reports it to ``on_hop_failure`` when it reaches it; a primary
that cannot be set up raises ``CONFIGURATION_ERROR``. Credentials follow the provider they are
for (DESIGN §5.20, `ProviderCredentials`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.credentials import ProviderCredentials
from agentos.llm.gateway._fallback import FallbackLeg, build_policy_aware_fallback_chain
from agentos.llm.gateway._hops import GatewayDefaults, Hop, ModelResolver, UnstartableHop
from agentos.llm.model import ChatModel
from agentos.llm.resolve import split_model_string

__all__ = ["plan_hops"]


def plan_hops(
    defaults: GatewayDefaults,
    resolver: ModelResolver,
    provider: str | None,
    model: str | None,
    task_hint: str,
) -> list[Hop | UnstartableHop]:
    """Every hop of a turn on ``provider`` / ``model``, each resolved by ``resolver``."""
    planner = _Planner(
        defaults, resolver, defaults.environ if defaults.environ is not None else os.environ
    )
    try:
        credentials, given = _primary_credentials(defaults, provider, model)
        primary = planner.resolve(provider, model, given, 0)
    except GMIError as exc:
        raise GMIError(
            exc.message, GMIErrorCode.CONFIGURATION_ERROR, {**exc.details, "hop": 0}
        ) from exc
    if credentials.provider is None and given != (None, None):
        credentials = replace(credentials, provider=primary.provider_id)
    legs: list[FallbackLeg] = list(
        defaults.fallback_providers
        if defaults.fallback_providers is not None
        else build_policy_aware_fallback_chain(
            defaults.policy_tier,
            exclude_provider=primary.provider_id,
            environ=planner.environ,
        )
    )
    first = planner.first(primary, legs, credentials, task_hint)
    hops: list[Hop | UnstartableHop] = [
        first
        if isinstance(first, UnstartableHop)
        else Hop(0, first.provider_id, first.model_id, first)
    ]
    for position, leg in enumerate(legs, start=1):
        hops.append(planner.leg_hop(position, leg, credentials))
    return hops


def _primary_credentials(
    defaults: GatewayDefaults, provider: str | None, model: str | None
) -> tuple[ProviderCredentials, tuple[str | None, str | None]]:
    """The defaults' credentials with the provider they are for, and what the primary gets.

    They are for the provider the defaults name (``provider``, or a ``provider:`` prefix of
    ``model``). A turn naming no provider runs on the defaults' credentials; one naming
    another provider runs without them. When the defaults name no provider, they are for
    the provider the primary resolves to (set by `plan_hops` once it has).
    """
    owner = split_model_string(defaults.provider, defaults.model)[0]
    named = split_model_string(provider, model)[0]
    theirs = named is None or named == owner
    given = (defaults.api_key, defaults.base_url) if theirs else (None, None)
    return ProviderCredentials(owner, defaults.api_key, defaults.base_url), given


@dataclass(frozen=True, slots=True)
class _Planner:
    """Resolves the hops of one plan with the gateway's resolver and environment."""

    defaults: GatewayDefaults
    resolver: ModelResolver
    environ: Mapping[str, str]

    def resolve(
        self,
        provider: str | None,
        model: str | None,
        credentials: tuple[str | None, str | None],
        hop: int,
    ) -> ChatModel:
        api_key, base_url = credentials
        return self.resolver(
            provider, model, api_key=api_key, base_url=base_url, environ=self.environ, hop=hop
        )

    def first(
        self,
        primary: ChatModel,
        legs: list[FallbackLeg],
        credentials: ProviderCredentials,
        task_hint: str,
    ) -> ChatModel | UnstartableHop:
        """The router's choice among the primary and the legs, else the primary."""
        router = self.defaults.router
        if router is None:
            return primary
        candidates = [(primary.provider_id, primary.model_id)] + [
            (leg.provider, leg.model or "") for leg in legs
        ]
        choice = router(task_hint, candidates)
        if choice is None or choice == (primary.provider_id, primary.model_id):
            return primary
        try:
            return self.resolve(choice[0], choice[1], credentials.for_provider(choice[0]), 0)
        except GMIError as exc:
            return UnstartableHop(choice[0], choice[1], exc)

    def leg_hop(
        self, position: int, leg: FallbackLeg, credentials: ProviderCredentials
    ) -> Hop | UnstartableHop:
        """The hop of fallback ``leg`` at ``position``, or its error."""
        try:
            model = self.resolve(
                leg.provider,
                leg.model,
                credentials.for_provider(leg.provider, api_key=leg.api_key, base_url=leg.base_url),
                position,
            )
        except GMIError as exc:
            return UnstartableHop(leg.provider, leg.model or "", exc)
        return Hop(position, model.provider_id, model.model_id, model, leg)
