"""The GMI layer (rank 3): the GMI and its turn loop, history and prompt construction."""

from agentos.core.errors import ContextWindowExceededError
from agentos.loop import (
    AfterModelStep,
    BeforeModelCall,
    BeforeToolCall,
    ModelCallInfo,
    StepInfo,
)
from agentos.substrate.chunks import (
    GMIOutput,
    GMIOutputChunk,
    GMIOutputChunkType,
    StepFinishedPayload,
    ToolResultPayload,
)
from agentos.substrate.collaborators import (
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
from agentos.substrate.config import DEFAULT_MAX_TOOL_LOOP_ITERATIONS, GMIConfig
from agentos.substrate.contexts import TASK_CONTEXT_KEY, USER_CONTEXT_KEY
from agentos.substrate.events import (
    EventSeverity,
    GMIEvent,
    GMIEventLog,
    GMIEventMetadata,
    GMIEventType,
)
from agentos.substrate.gmi import GMI
from agentos.substrate.history import (
    DEFAULT_MAX_MESSAGES,
    SUMMARY_PREFIX,
    ConversationHistoryManager,
    DroppedTurn,
    TurnsDroppedCallback,
    normalize_history,
    trim_history,
)
from agentos.substrate.learning_seam import (
    LEARNING_KEY,
    PERSONALITY_PRIORITY,
    PREPARE_TIMEOUT_S,
    LearnerSessionLike,
    PreparedTurn,
    TurnPreparation,
)
from agentos.substrate.metaprompts import MetapromptExecutor, render_template
from agentos.substrate.mood import MOOD_KEY, GMIMood, PADState
from agentos.substrate.options import (
    FORWARDED_COMPLETION_OPTION_KEYS,
    forwarded_options,
    to_completion_options,
)
from agentos.substrate.prompt_engine import (
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
from agentos.substrate.retrieval import ExchangeSummarizer
from agentos.substrate.sentiment_tracker import (
    CONFUSION_PHRASES,
    SENTIMENT_HISTORY_KEY,
    SentimentThresholds,
    SentimentTracker,
    matched_confusion_phrases,
)
from agentos.substrate.services import GMIServices
from agentos.substrate.state import ClosableMemory, GMIPrimeState, GMIState
from agentos.substrate.system_prompts import preference_prompts, turn_system_prompts
from agentos.substrate.tool_continuation import ExternalToolOutcome
from agentos.substrate.trace import (
    DEFAULT_MAX_TRACE_ENTRIES,
    ReasoningEntryType,
    ReasoningTrace,
    ReasoningTraceEntry,
)
from agentos.substrate.turn_input import GMIInteractionType, GMITurnInput
from agentos.substrate.turn_options import ToolFailureMode, TurnOptions
from agentos.substrate.turn_stream import GMITurnStream
from agentos.substrate.working_memory import InMemoryWorkingMemory

__all__ = [
    "LEARNING_KEY",
    "PERSONALITY_PRIORITY",
    "PREPARE_TIMEOUT_S",
    "LearnerSessionLike",
    "PreparedTurn",
    "TurnPreparation",
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
    "ClosableMemory",
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
