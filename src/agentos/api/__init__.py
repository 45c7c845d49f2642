"""The public entry points: `generate_text()` / `stream_text()`, `agent()` and `gmi()`."""

from agentos.api.abort import AbortError, AbortSignal
from agentos.api.agency import (
    Agency,
    AgencyConfigError,
    AgencyFinished,
    AgencyResult,
    AgencySession,
    AgencyStreamResult,
    AgentCall,
    AgentFinished,
    AgentStarted,
    AgentTextDelta,
    agency,
)
from agentos.api.agent import PlainAgent, agent, import_agent
from agentos.api.agent_export import AgentExport, export_agent_config
from agentos.api.agent_hooks import (
    SKIP_TOOL,
    AfterGenerationContext,
    BeforeGenerationContext,
    BeforeToolExecutionContext,
    HookWarning,
)
from agentos.api.agent_options import GENERATE_CALL_OPTIONS
from agentos.api.agent_types import Agent, Session
from agentos.api.approvals import ApprovalDecision, ApprovalRequest
from agentos.api.cognition import CognitionConfig, resolve_cognition
from agentos.api.generate import (
    DEFAULT_COT_INSTRUCTION,
    DEFAULT_MAX_STEPS,
    TextOptions,
    generate_text,
    stream_text,
)
from agentos.api.gmi_agent import CALL_OPTIONS, GmiAgent, create_gmi, gmi
from agentos.api.gmi_engine import SEND_OPTIONS
from agentos.api.gmi_persona import persona_from_agent_options
from agentos.api.memory_provider import (
    DEFAULT_MEMORY_TIMEOUT_MS,
    MemoryProvider,
    MemoryProviderWarning,
)
from agentos.api.plain_engine import SESSION_CALL_OPTIONS
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
from agentos.api.session import AgentSession
from agentos.api.stream_result import StreamTextResult
from agentos.api.structured import ObjectGenerationError
from agentos.api.warnings import AgentOSWarning, UnappliedOptionsWarning

__all__ = [
    "Agency",
    "AgencyConfigError",
    "AgencyFinished",
    "AgencyResult",
    "AgencySession",
    "AgencyStreamResult",
    "AgentCall",
    "AgentFinished",
    "AgentStarted",
    "AgentTextDelta",
    "agency",
    "AgentExport",
    "export_agent_config",
    "import_agent",
    "CALL_OPTIONS",
    "DEFAULT_COT_INSTRUCTION",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MEMORY_TIMEOUT_MS",
    "GENERATE_CALL_OPTIONS",
    "SEND_OPTIONS",
    "SESSION_CALL_OPTIONS",
    "SKIP_TOOL",
    "AbortError",
    "AbortSignal",
    "AfterGenerationContext",
    "Agent",
    "AgentOSWarning",
    "AgentSession",
    "ApprovalDecision",
    "ApprovalRequest",
    "BeforeGenerationContext",
    "BeforeToolExecutionContext",
    "CognitionConfig",
    "ErrorPart",
    "FinishPart",
    "GenerateTextResult",
    "GmiAgent",
    "PlainAgent",
    "Session",
    "HookWarning",
    "MemoryProvider",
    "MemoryProviderWarning",
    "ObjectGenerationError",
    "StepFinishPart",
    "StepResult",
    "StreamPart",
    "StreamTextResult",
    "TextDeltaPart",
    "TextOptions",
    "ToolCallPart",
    "ToolResultPart",
    "UnappliedOptionsWarning",
    "agent",
    "create_gmi",
    "generate_text",
    "gmi",
    "persona_from_agent_options",
    "resolve_cognition",
    "stream_text",
]
