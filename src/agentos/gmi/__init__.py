"""The GMI layer (rank 3): the GMI and its turn loop, history and prompt construction."""

from agentos.core.errors import ContextWindowExceededError
from agentos.gmi.chunks import (
    GMIOutput,
    GMIOutputChunk,
    GMIOutputChunkType,
    StepFinishedPayload,
    ToolResultPayload,
)
from agentos.gmi.collaborators import (
    IngestedDocument,
    MemoryBridge,
    MetapromptRunner,
    RagRetrievalOptions,
    RetrievalAugmentor,
    RetrievalResult,
    RetrievedChunk,
    TurnExchange,
    TurnSentimentTracker,
)
from agentos.gmi.config import DEFAULT_MAX_TOOL_LOOP_ITERATIONS, GMIConfig
from agentos.gmi.contexts import TASK_CONTEXT_KEY, USER_CONTEXT_KEY
from agentos.gmi.events import (
    EventSeverity,
    GMIEvent,
    GMIEventLog,
    GMIEventMetadata,
    GMIEventType,
)
from agentos.gmi.gmi import GMI
from agentos.gmi.history import (
    DEFAULT_MAX_MESSAGES,
    SUMMARY_PREFIX,
    ConversationHistoryManager,
    DroppedTurn,
    TurnsDroppedCallback,
    normalize_history,
    trim_history,
)
from agentos.gmi.metaprompts import MetapromptExecutor, render_template
from agentos.gmi.mood import MOOD_KEY, GMIMood, PADState
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
    PromptEngine,
    SystemPrompt,
    history_budget,
    message_tokens,
)
from agentos.gmi.retrieval import ExchangeSummarizer
from agentos.gmi.sentiment_tracker import (
    CONFUSION_PHRASES,
    SENTIMENT_HISTORY_KEY,
    SentimentThresholds,
    SentimentTracker,
    matched_confusion_phrases,
)
from agentos.gmi.services import GMIServices
from agentos.gmi.state import GMIPrimeState, GMIState
from agentos.gmi.system_prompts import preference_prompts, turn_system_prompts
from agentos.gmi.tool_continuation import ExternalToolOutcome
from agentos.gmi.trace import (
    DEFAULT_MAX_TRACE_ENTRIES,
    ReasoningEntryType,
    ReasoningTrace,
    ReasoningTraceEntry,
)
from agentos.gmi.turn_input import GMIInteractionType, GMITurnInput
from agentos.gmi.turn_options import ToolFailureMode, TurnOptions
from agentos.gmi.turn_stream import GMITurnStream
from agentos.gmi.working_memory import InMemoryWorkingMemory
from agentos.loop import (
    AfterModelStep,
    BeforeModelCall,
    BeforeToolCall,
    ModelCallInfo,
    StepInfo,
)

__all__ = [
    "AfterModelStep",
    "BeforeToolCall",
    "StepInfo",
    "CONFUSION_PHRASES",
    "SENTIMENT_HISTORY_KEY",
    "EventSeverity",
    "GMIEvent",
    "GMIEventLog",
    "GMIEventMetadata",
    "GMIEventType",
    "MetapromptExecutor",
    "SentimentThresholds",
    "SentimentTracker",
    "matched_confusion_phrases",
    "render_template",
    "MOOD_KEY",
    "TASK_CONTEXT_KEY",
    "USER_CONTEXT_KEY",
    "ExchangeSummarizer",
    "ExternalToolOutcome",
    "IngestedDocument",
    "MemoryBridge",
    "MetapromptRunner",
    "RagRetrievalOptions",
    "RetrievalAugmentor",
    "RetrievalResult",
    "RetrievedChunk",
    "TurnExchange",
    "TurnSentimentTracker",
    "preference_prompts",
    "turn_system_prompts",
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
    "GMIServices",
    "GMIState",
    "GMITurnInput",
    "GMITurnStream",
    "ToolFailureMode",
    "TurnOptions",
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
