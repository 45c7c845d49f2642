"""The public entry points: `generate_text()` and `stream_text()`."""

from agentos.api.generate import (
    DEFAULT_COT_INSTRUCTION,
    DEFAULT_MAX_STEPS,
    TextOptions,
    generate_text,
    stream_text,
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
    "ErrorPart",
    "FinishPart",
    "GenerateTextResult",
    "StepFinishPart",
    "StepResult",
    "StreamPart",
    "StreamTextResult",
    "TextOptions",
    "TextDeltaPart",
    "ToolCallPart",
    "ToolResultPart",
    "generate_text",
    "stream_text",
]
