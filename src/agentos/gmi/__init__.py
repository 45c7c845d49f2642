"""The GMI layer (rank 3): the GMI and its turn loop, history and prompt construction."""

from agentos.gmi.chunks import (
    GMIOutput,
    GMIOutputChunk,
    GMIOutputChunkType,
    StepFinishedPayload,
    ToolResultPayload,
)
from agentos.gmi.gmi import (
    DEFAULT_MAX_TOOL_LOOP_ITERATIONS,
    GMI,
    BeforeModelCall,
    GMIConfig,
    GMITurnStream,
    ModelCallInfo,
)
from agentos.gmi.history import (
    DEFAULT_MAX_MESSAGES,
    SUMMARY_PREFIX,
    ConversationHistoryManager,
    DroppedTurn,
    TurnsDroppedCallback,
    normalize_history,
    trim_history,
)
from agentos.gmi.mood import GMIMood, PADState
from agentos.gmi.options import (
    FORWARDED_COMPLETION_OPTION_KEYS,
    forwarded_options,
    to_completion_options,
)
from agentos.gmi.prompt_engine import (
    DISCOVERY_PRIORITY,
    FORMAT_PREFERENCE_PRIORITY,
    HISTORY_BUDGET_PERCENT,
    PERSONA_BASE_PRIORITY,
    PERSONALITY_SECTION_PRIORITY,
    PROFILE_PRIORITY,
    ROLLING_SUMMARY_PRIORITY,
    SKILLS_PRIORITY,
    VERBOSITY_PREFERENCE_PRIORITY,
    BuiltPrompt,
    ContextWindowExceededError,
    PromptEngine,
    SystemPrompt,
    history_budget,
    message_tokens,
)
from agentos.gmi.state import GMIPrimeState
from agentos.gmi.trace import (
    DEFAULT_MAX_TRACE_ENTRIES,
    ReasoningEntryType,
    ReasoningTrace,
    ReasoningTraceEntry,
)
from agentos.gmi.turn_input import GMIInteractionType, GMITurnInput
from agentos.gmi.working_memory import InMemoryWorkingMemory

__all__ = [
    "DEFAULT_MAX_TOOL_LOOP_ITERATIONS",
    "DEFAULT_MAX_TRACE_ENTRIES",
    "FORWARDED_COMPLETION_OPTION_KEYS",
    "GMI",
    "BeforeModelCall",
    "GMIConfig",
    "GMIInteractionType",
    "GMIMood",
    "GMIOutput",
    "GMIOutputChunk",
    "GMIOutputChunkType",
    "GMIPrimeState",
    "GMITurnInput",
    "GMITurnStream",
    "InMemoryWorkingMemory",
    "ModelCallInfo",
    "PADState",
    "ReasoningEntryType",
    "ReasoningTrace",
    "ReasoningTraceEntry",
    "StepFinishedPayload",
    "ToolResultPayload",
    "forwarded_options",
    "to_completion_options",
    "DEFAULT_MAX_MESSAGES",
    "DISCOVERY_PRIORITY",
    "FORMAT_PREFERENCE_PRIORITY",
    "HISTORY_BUDGET_PERCENT",
    "PERSONALITY_SECTION_PRIORITY",
    "PERSONA_BASE_PRIORITY",
    "PROFILE_PRIORITY",
    "ROLLING_SUMMARY_PRIORITY",
    "SKILLS_PRIORITY",
    "SUMMARY_PREFIX",
    "VERBOSITY_PREFERENCE_PRIORITY",
    "BuiltPrompt",
    "ContextWindowExceededError",
    "ConversationHistoryManager",
    "DroppedTurn",
    "PromptEngine",
    "SystemPrompt",
    "TurnsDroppedCallback",
    "history_budget",
    "message_tokens",
    "normalize_history",
    "trim_history",
]
