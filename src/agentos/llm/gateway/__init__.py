"""The completion gateway (spec: "Model calls through a completion gateway").

Every model step reaches its provider through a `CompletionGateway`: the hops of a turn are
resolved before the prompt (the router's choice or the primary, then the fallback chain), an
attempt that fails before output moves to the next hop when the failure is retryable, a
provider that keeps failing is skipped while its circuit is open, and a step left early is
charged (DESIGN §5.19). This package is the gateway's public entry; its parts are private
modules:

- `_gateway`: `CompletionGateway` and `GatewayTurn`, one turn's hops, one step at a time;
- `_hops`: `Hop`, `AttemptFailed`, `GatewayDefaults` and the `Router` it may name;
- `_plan`: the hops of a turn, resolved with credentials that follow their provider;
- `_fallback`: `FallbackLeg` and the fallback chains (`build_policy_aware_fallback_chain`);
- `_circuit`: per-provider circuit breakers (`ProviderHealthRegistry`);
- `_retry`: which failures may move to the next hop (`is_retryable_error`);
- `_provider_manager`: `GatewayProviderManager`, the serving hop as a GMI's provider manager.
"""

from __future__ import annotations

from agentos.llm.gateway._circuit import (
    AUTH_POLICY,
    QUOTA_POLICY,
    RATE_LIMIT_POLICY,
    TRANSIENT_POLICY,
    CircuitPolicy,
    CircuitState,
    ProviderHealthRegistry,
    ProviderHealthStatus,
    failure_policy,
)
from agentos.llm.gateway._fallback import (
    AVAILABILITY_LEGS,
    POLICY_TIERS,
    UNCENSORED_LEGS,
    CacheSetting,
    FallbackLeg,
    PolicyTier,
    build_fallback_chain,
    build_policy_aware_fallback_chain,
)
from agentos.llm.gateway._gateway import CompletionGateway, GatewayTurn, create_completion_gateway
from agentos.llm.gateway._hops import (
    AttemptFailed,
    FallbackCallback,
    GatewayDefaults,
    Hop,
    HopFailureCallback,
    ModelResolver,
    Router,
    UnstartableHop,
)
from agentos.llm.gateway._provider_manager import GatewayProviderManager
from agentos.llm.gateway._retry import (
    RETRYABLE_STATUS_CODES,
    http_status_of,
    is_caller_abort,
    is_caller_stop,
    is_content_policy_refusal,
    is_quota_exhaustion,
    is_retryable_error,
)

__all__ = [
    "AUTH_POLICY",
    "AVAILABILITY_LEGS",
    "POLICY_TIERS",
    "QUOTA_POLICY",
    "RATE_LIMIT_POLICY",
    "RETRYABLE_STATUS_CODES",
    "TRANSIENT_POLICY",
    "UNCENSORED_LEGS",
    "AttemptFailed",
    "CacheSetting",
    "CircuitPolicy",
    "CircuitState",
    "CompletionGateway",
    "FallbackCallback",
    "FallbackLeg",
    "GatewayDefaults",
    "GatewayProviderManager",
    "GatewayTurn",
    "Hop",
    "HopFailureCallback",
    "ModelResolver",
    "PolicyTier",
    "ProviderHealthRegistry",
    "ProviderHealthStatus",
    "Router",
    "UnstartableHop",
    "build_fallback_chain",
    "build_policy_aware_fallback_chain",
    "create_completion_gateway",
    "failure_policy",
    "http_status_of",
    "is_caller_abort",
    "is_caller_stop",
    "is_content_policy_refusal",
    "is_quota_exhaustion",
    "is_retryable_error",
]
