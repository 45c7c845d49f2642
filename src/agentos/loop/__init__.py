"""The one step loop (DESIGN §3, rank 2): model steps and tool rounds, as typed events.

`StepLoop` runs a turn's steps through a completion gateway: per attempt it builds the request,
places the schema message and runs the before-hook; it streams and records each step, runs the
after-hook and the step's tool round (calls concurrently, results in call order: DESIGN §5.22),
and yields the `LoopEvent`s each consumer builds its own output from once: `generate_text` /
`stream_text` and the legacy `agent()` path their stream parts, the GMI its spec chunks.
"""

from agentos.loop.collector import StepCollector
from agentos.loop.events import (
    AttemptFailedEvent,
    LoopEvent,
    StepFinishedEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolsPausedEvent,
    UsageEvent,
)
from agentos.loop.hooks import (
    AfterModelStep,
    BeforeModelCall,
    BeforeToolCall,
    HookFailure,
    LoopHooks,
    ModelCallInfo,
    StepInfo,
)
from agentos.loop.step_loop import PromptBuilder, StepLoop, ToolRunner
from agentos.loop.tool_round import ToolRound

__all__ = [
    "AfterModelStep",
    "AttemptFailedEvent",
    "BeforeModelCall",
    "BeforeToolCall",
    "HookFailure",
    "LoopEvent",
    "LoopHooks",
    "ModelCallInfo",
    "PromptBuilder",
    "StepCollector",
    "StepFinishedEvent",
    "StepInfo",
    "StepLoop",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "ToolsPausedEvent",
    "ToolRound",
    "ToolRunner",
    "UsageEvent",
]
