"""Core: messages, usage figures, errors and their codes, injectable time and chance."""

from agentos.core.clock import Clock, SystemClock, system_clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import (
    ContentPart,
    ImagePart,
    Message,
    MessageHistoryAdapter,
    ReplayBlock,
    Role,
    TextPart,
    ToolCall,
    ToolResult,
    dump_messages,
    load_messages,
)
from agentos.core.randomness import resolve_rng
from agentos.core.usage import ModelUsage

__all__ = [
    "Clock",
    "ContentPart",
    "GMIError",
    "GMIErrorCode",
    "ImagePart",
    "Message",
    "MessageHistoryAdapter",
    "ModelUsage",
    "ReplayBlock",
    "Role",
    "SystemClock",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "dump_messages",
    "load_messages",
    "resolve_rng",
    "system_clock",
]
