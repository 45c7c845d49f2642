"""Models and providers.

The streaming seam, adapters, the catalog, the completion gateway, fallback and circuit
breakers, spend budgets and metering.
"""

from agentos.llm.budget import (
    BudgetedModel,
    CostCapExceededError,
    SpendBudget,
    SpendCall,
    SpendLimitError,
    SpendLimitInfo,
    UnpricedModelError,
)
from agentos.llm.catalog import ModelInfo, context_window, find_model, model_info
from agentos.llm.embedding import Embedder
from agentos.llm.errors import ProviderError
from agentos.llm.gateway import (
    AttemptFailed,
    CompletionGateway,
    FallbackLeg,
    GatewayDefaults,
    GatewayTurn,
    Hop,
    ProviderHealthRegistry,
    build_fallback_chain,
    build_policy_aware_fallback_chain,
    create_completion_gateway,
    is_retryable_error,
)
from agentos.llm.local import DEFAULT_LOCAL_MODEL, LocalModel, local_model_available
from agentos.llm.metering import MeteredModel, get_global_llm_observer, set_global_llm_observer
from agentos.llm.model import (
    ChatModel,
    CompletionOptions,
    FinishChunk,
    FinishReason,
    ModelChunk,
    ModelRequest,
    ReplayChunk,
    TextDelta,
    ToolCallChunk,
    ToolChoice,
    ToolDefinition,
    UsageChunk,
)
from agentos.llm.provider_manager import AIModelProviderManager
from agentos.llm.resolve import (
    KNOWN_PROVIDERS,
    ProviderInfo,
    configured_provider,
    get_default_provider,
    register_provider,
    resolve_model,
    set_default_provider,
)

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "KNOWN_PROVIDERS",
    "AIModelProviderManager",
    "AttemptFailed",
    "BudgetedModel",
    "ChatModel",
    "CompletionGateway",
    "CompletionOptions",
    "CostCapExceededError",
    "Embedder",
    "FallbackLeg",
    "FinishChunk",
    "FinishReason",
    "GatewayDefaults",
    "GatewayTurn",
    "Hop",
    "LocalModel",
    "MeteredModel",
    "ModelChunk",
    "ModelInfo",
    "ModelRequest",
    "ProviderError",
    "ProviderHealthRegistry",
    "ProviderInfo",
    "ReplayChunk",
    "SpendBudget",
    "SpendCall",
    "SpendLimitError",
    "SpendLimitInfo",
    "TextDelta",
    "ToolCallChunk",
    "ToolChoice",
    "ToolDefinition",
    "UnpricedModelError",
    "UsageChunk",
    "build_fallback_chain",
    "build_policy_aware_fallback_chain",
    "context_window",
    "create_completion_gateway",
    "find_model",
    "configured_provider",
    "get_default_provider",
    "get_global_llm_observer",
    "is_retryable_error",
    "local_model_available",
    "model_info",
    "register_provider",
    "resolve_model",
    "set_default_provider",
    "set_global_llm_observer",
]
