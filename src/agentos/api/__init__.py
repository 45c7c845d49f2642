"""The public entry points: `generate_text()` and `stream_text()`."""

from agentos.api.agent import GENERATE_CALL_OPTIONS, Agent, agent
from agentos.api.agent_session import SESSION_CALL_OPTIONS, AgentSession
from agentos.api.generate import (
    DEFAULT_COT_INSTRUCTION,
    DEFAULT_MAX_STEPS,
    TextOptions,
    generate_text,
    stream_text,
)
from agentos.api.memory_provider import (
    DEFAULT_MEMORY_TIMEOUT_MS,
    MemoryProvider,
    MemoryProviderWarning,
)
from agentos.api.results import (
    ErrorPart,
    FinishPart,
    GenerateTextResult,
    StepFinishPart,
    StepResult,
    StreamPart,
    TextDeltaPart,
    ToolCallPart,
    ToolResultPart,
)
from agentos.api.stream_result import StreamTextResult

__all__ = [
    "DEFAULT_COT_INSTRUCTION",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MEMORY_TIMEOUT_MS",
    "GENERATE_CALL_OPTIONS",
    "SESSION_CALL_OPTIONS",
    "Agent",
    "AgentSession",
    "ErrorPart",
    "FinishPart",
    "GenerateTextResult",
    "MemoryProvider",
    "MemoryProviderWarning",
    "StepFinishPart",
    "StepResult",
    "StreamPart",
    "StreamTextResult",
    "TextOptions",
    "TextDeltaPart",
    "ToolCallPart",
    "ToolResultPart",
    "agent",
    "generate_text",
    "stream_text",
]
