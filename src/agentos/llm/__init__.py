"""Models and providers: the streaming seam, the local model and provider resolution."""

from agentos.llm.embedding import Embedder
from agentos.llm.errors import ProviderError
from agentos.llm.local import DEFAULT_LOCAL_MODEL, LocalModel, local_model_available
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
from agentos.llm.resolve import KNOWN_PROVIDERS, ProviderInfo, register_provider, resolve_model

__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "KNOWN_PROVIDERS",
    "ChatModel",
    "CompletionOptions",
    "Embedder",
    "FinishChunk",
    "FinishReason",
    "LocalModel",
    "ModelChunk",
    "ModelRequest",
    "ProviderError",
    "ProviderInfo",
    "ReplayChunk",
    "TextDelta",
    "ToolCallChunk",
    "ToolChoice",
    "ToolDefinition",
    "UsageChunk",
    "local_model_available",
    "register_provider",
    "resolve_model",
]
