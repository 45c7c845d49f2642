"""agentos: a Python runtime for stateful LLM agents.

The spec's GMI layer (personas, mood, memory, the turn loop) and its lightweight helpers.
Start with `generate_text()` / `stream_text()`; test with `agentos.testing`.
"""

from importlib.metadata import PackageNotFoundError, version

from agentos.api import (
    DEFAULT_COT_INSTRUCTION,
    ErrorPart,
    FinishPart,
    GenerateTextResult,
    StepFinishPart,
    StepResult,
    StreamPart,
    StreamTextResult,
    TextDeltaPart,
    TextOptions,
    ToolCallPart,
    ToolResultPart,
    generate_text,
    stream_text,
)
from agentos.core import (
    GMIError,
    GMIErrorCode,
    ImagePart,
    Message,
    ModelUsage,
    ReplayBlock,
    Role,
    TextPart,
    ToolCall,
    ToolResult,
    dump_messages,
    load_messages,
)
from agentos.llm import (
    AIModelProviderManager,
    ChatModel,
    CostCapExceededError,
    Embedder,
    FallbackLeg,
    ProviderError,
    SpendBudget,
    SpendLimitInfo,
    UnpricedModelError,
    create_completion_gateway,
    set_default_provider,
    set_global_llm_observer,
)
from agentos.persona import BUILT_IN_PERSONAS, PersonaDefinition, get_built_in_persona
from agentos.tools import Tool, ToolArgumentsError, tool

try:
    __version__ = version("agentos")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "get_built_in_persona",
    "PersonaDefinition",
    "BUILT_IN_PERSONAS",
    "set_global_llm_observer",
    "set_default_provider",
    "create_completion_gateway",
    "UnpricedModelError",
    "SpendLimitInfo",
    "SpendBudget",
    "FallbackLeg",
    "CostCapExceededError",
    "AIModelProviderManager",
    "DEFAULT_COT_INSTRUCTION",
    "ChatModel",
    "Embedder",
    "ErrorPart",
    "FinishPart",
    "GMIError",
    "GMIErrorCode",
    "GenerateTextResult",
    "ImagePart",
    "Message",
    "ModelUsage",
    "ProviderError",
    "ReplayBlock",
    "Role",
    "StepFinishPart",
    "StepResult",
    "StreamPart",
    "StreamTextResult",
    "TextDeltaPart",
    "TextOptions",
    "TextPart",
    "Tool",
    "ToolArgumentsError",
    "ToolCall",
    "ToolCallPart",
    "ToolResult",
    "ToolResultPart",
    "__version__",
    "dump_messages",
    "generate_text",
    "load_messages",
    "stream_text",
    "tool",
]
