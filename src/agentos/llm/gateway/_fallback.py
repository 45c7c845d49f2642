"""Fallback chains: the providers a call tries, in order, after its primary fails.

Spec, "Model calls through a completion gateway": without ``fallback_providers`` the chain is
the one `build_policy_aware_fallback_chain()` builds for the policy tier from the provider keys
in the environment, without the primary's provider; ``fallback_providers=[]`` turns fallback
off; a fallback entry's ``effort``, ``cache`` and ``max_tokens_headroom`` apply to the steps its
hop serves. The legs and their order are the reference's ``buildFallbackChain`` and
``buildPolicyAwareFallbackChain`` (typescript-implementation.md §1.26). The models pinned here
are configuration, not behaviour: a caller who wants others passes its own chain.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final, Literal, NoReturn, get_args

from agentos.core.errors import GMIError, GMIErrorCode

__all__ = [
    "AVAILABILITY_LEGS",
    "POLICY_TIERS",
    "UNCENSORED_LEGS",
    "CacheSetting",
    "FallbackLeg",
    "PolicyTier",
    "build_fallback_chain",
    "build_policy_aware_fallback_chain",
]

PolicyTier = Literal["safe", "standard", "mature", "private-adult"]
"""A call's content tier; ``mature`` and ``private-adult`` route refusals to permissive models."""

POLICY_TIERS: Final[tuple[str, ...]] = get_args(PolicyTier)

CacheSetting = bool | Literal["5m", "1h"]
"""A leg's prompt caching: ``False`` off, ``True`` on at the provider's default lifetime, or
on with that lifetime (the TypeScript ``cache: false | { ttl?: '5m' | '1h' }``)."""

_CACHE_TTLS: Final = ("5m", "1h")


@dataclass(frozen=True, slots=True)
class FallbackLeg:
    """One fallback entry: a provider, its model, and what its hop sends differently.

    ``model=None`` lets the provider choose its default model. ``effort``, ``cache`` and
    ``max_tokens_headroom`` left ``None`` keep the call's own settings; set, they replace
    them for the steps this hop serves (``max_tokens_headroom`` is added to the call's
    ``max_tokens``, room for a thinking model's reasoning; a call without ``max_tokens``
    stays uncapped). Invalid values raise `GMIError` (``INVALID_ARGUMENT``) naming the field.

    ``api_key`` and ``base_url`` are this hop's own credentials and endpoint (DESIGN §5.20,
    `ProviderCredentials`): a leg that names neither takes the call's when it is on the
    primary's provider (a backup model on the same server), and its provider's from the
    environment otherwise; a leg that names either takes nothing of the call's. The key is
    left out of the leg's ``repr``.
    """

    provider: str
    model: str | None = None
    effort: str | None = None
    cache: CacheSetting | None = None
    max_tokens_headroom: int | None = None
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.provider, str) or not self.provider.strip():
            _invalid("provider", self.provider, "a provider id")
        if self.model is not None and (not isinstance(self.model, str) or not self.model):
            _invalid("model", self.model, "a model id or None")
        if self.effort is not None and (not isinstance(self.effort, str) or not self.effort):
            _invalid("effort", self.effort, "an effort level such as 'low', or None")
        if (
            self.cache is not None
            and not isinstance(self.cache, bool)
            and self.cache not in _CACHE_TTLS
        ):
            _invalid("cache", self.cache, "True, False, '5m', '1h' or None")
        headroom = self.max_tokens_headroom
        if headroom is not None and (
            not isinstance(headroom, int) or isinstance(headroom, bool) or headroom < 0
        ):
            _invalid("max_tokens_headroom", headroom, "a whole number of tokens >= 0, or None")
        if self.api_key is not None and (not isinstance(self.api_key, str) or not self.api_key):
            _invalid("api_key", self.api_key, "a non-empty string or None", secret=True)
        if self.base_url is not None and (not isinstance(self.base_url, str) or not self.base_url):
            _invalid("base_url", self.base_url, "an endpoint URL string or None")

    @classmethod
    def coerce(cls, entry: FallbackLeg | Mapping[str, Any]) -> FallbackLeg:
        """A leg from a leg or a mapping with its snake_case keys (``{"provider": ...}``).

        An unknown key raises `GMIError` naming it, so a misspelt option is not ignored.
        """
        if isinstance(entry, FallbackLeg):
            return entry
        if not isinstance(entry, Mapping):
            _invalid("fallback_providers", entry, "a FallbackLeg or a mapping")
        known = {f.name for f in fields(cls)}
        for key in entry:
            if key not in known:
                known_keys = ", ".join(sorted(known))
                _invalid(str(key), entry[key], f"one of the keys {known_keys}", secret=True)
        if "provider" not in entry:
            _invalid("provider", None, "a provider id")
        return cls(**entry)


def _invalid(name: str, value: object, expected: str, *, secret: bool = False) -> NoReturn:
    # A secret's value is not echoed: a wrong-typed or empty key may still be a key.
    shown = f"a {type(value).__name__}" if secret else repr(value)
    raise GMIError(
        f"fallback leg {name}={shown} is invalid: expected {expected}",
        GMIErrorCode.INVALID_ARGUMENT,
        {"option": "fallback_providers", "field": name},
    )


AVAILABILITY_LEGS: Final[tuple[tuple[str, str, FallbackLeg], ...]] = (
    ("openai", "OPENAI_API_KEY", FallbackLeg("openai", "gpt-5.6-sol", cache=False)),
    ("anthropic", "ANTHROPIC_API_KEY", FallbackLeg("anthropic", "claude-sonnet-5", cache=False)),
    (
        "openrouter",
        "OPENROUTER_API_KEY",
        FallbackLeg("openrouter", "openai/gpt-5.6-sol", cache=False),
    ),
    ("gemini", "GEMINI_API_KEY", FallbackLeg("gemini", None, cache=False)),
)
"""The availability chain in the reference's order: (provider, key variable, leg). Every leg
pins ``cache=False``: a rescue hop is a one-shot, so a cache write would rarely be read back.
The OpenRouter leg routes around an OpenAI outage through another door; Gemini takes the
provider's default model."""

UNCENSORED_LEGS: Final[tuple[FallbackLeg, ...]] = (
    FallbackLeg("openrouter", "nousresearch/hermes-3-llama-3.1-405b", cache=False),
    FallbackLeg("openrouter", "anthropic/claude-sonnet-4", cache=False),
)
"""The OpenRouter legs a ``mature`` or ``private-adult`` chain starts with (reference)."""


def build_fallback_chain(
    exclude_provider: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[FallbackLeg]:
    """The availability chain: one leg per provider whose key is set (reference order).

    OpenAI ``gpt-5.6-sol``, Anthropic ``claude-sonnet-5``, OpenRouter ``openai/gpt-5.6-sol``,
    Gemini's default model; each only when its key variable (``OPENAI_API_KEY``,
    ``ANTHROPIC_API_KEY``, ``OPENROUTER_API_KEY``, ``GEMINI_API_KEY``) is set and not empty, and
    not for ``exclude_provider`` (the primary's provider, which already failed). ``environ``
    replaces `os.environ` (tests, hosts that keep keys elsewhere).
    """
    env = os.environ if environ is None else environ
    return [
        leg
        for provider, variable, leg in AVAILABILITY_LEGS
        if env.get(variable) and provider != exclude_provider
    ]


def build_policy_aware_fallback_chain(
    policy_tier: str | None,
    exclude_provider: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[FallbackLeg]:
    """The chain for a policy tier (reference ``buildPolicyAwareFallbackChain``).

    ``mature`` and ``private-adult`` with ``OPENROUTER_API_KEY`` set: the two OpenRouter legs
    of `UNCENSORED_LEGS` first, so a refusal or an outage of the primary walks to a permissive
    model, then the availability chain, without a second leg of the same provider and model.
    The uncensored legs ignore ``exclude_provider``: another model of the primary's provider is
    a fair rescue, since a refusal by one model is not a refusal by another. Other tiers
    (``safe``, ``standard``, ``None``) get `build_fallback_chain()`. A tier outside
    `POLICY_TIERS` raises `GMIError` (``INVALID_ARGUMENT``) naming ``policy_tier``.
    """
    if policy_tier is not None and policy_tier not in POLICY_TIERS:
        raise GMIError(
            f"policy_tier={policy_tier!r} is not a policy tier: expected one of "
            f"{', '.join(POLICY_TIERS)} or None",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "policy_tier", "value": policy_tier},
        )
    availability = build_fallback_chain(exclude_provider, environ)
    if policy_tier not in ("mature", "private-adult"):
        return availability
    env = os.environ if environ is None else environ
    chain: list[FallbackLeg] = list(UNCENSORED_LEGS) if env.get("OPENROUTER_API_KEY") else []
    for leg in availability:
        if not any(leg.provider == kept.provider and leg.model == kept.model for kept in chain):
            chain.append(leg)
    return chain
