"""The hooks the step loop runs around its steps and calls (spec: What a turn does, step 5; Hooks).

- ``before_model_call(info)`` runs before every attempt, a fallback hop's included, with a copy
  of the attempt's prompt (the schema message already in place). Messages it returns replace
  that attempt's prompt only; ``None`` keeps the built prompt.
- ``after_model_step(info)`` runs after each finished step; a text it returns replaces the step's
  text (its history entry and its event), except a schema answer the provider returned as a
  schema tool call, which stays the JSON the schema validated.
- ``before_tool_call(call)`` runs before each call; the call it returns runs (its arguments may
  differ), ``None`` skips it and the model gets an error result saying so.

Each may be sync or async, except ``before_model_call``, which runs while the prompt is built.
A hook that raises, a ``before_model_call`` that returns an empty list, or a
``before_tool_call`` that returns something other than a call or ``None`` is reported to
``on_failure`` (a `HookFailure`) and the loop goes on as if the hook were not set (spec: "A hook
that throws ... is warned about, and the turn goes on as if the hook were not set").
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from agentos.core.messages import Message, ToolCall
from agentos.llm.model import ToolDefinition

__all__ = [
    "AfterModelStep",
    "BeforeModelCall",
    "BeforeToolCall",
    "HookFailure",
    "LoopHooks",
    "ModelCallInfo",
    "StepInfo",
]


@dataclass(frozen=True, slots=True)
class ModelCallInfo:
    """What ``before_model_call`` is told about an attempt."""

    turn_id: str
    step_index: int
    hop: int
    provider_id: str
    model_id: str
    messages: list[Message]
    system: str = ""
    """The base system prompt (a persona's, or the caller's ``system``)."""
    tools: list[ToolDefinition] = field(default_factory=list)
    """The tools the attempt offers."""


@dataclass(frozen=True, slots=True)
class StepInfo:
    """What ``after_model_step`` is told about a model step that finished."""

    turn_id: str
    step_index: int
    text: str
    tool_calls: list[ToolCall]
    finish_reason: str
    provider_id: str
    model_id: str


BeforeModelCall = Callable[[ModelCallInfo], "Sequence[Message] | None"]
"""Called before every attempt; messages it returns replace that attempt's prompt only."""

AfterModelStep = Callable[[StepInfo], "str | Awaitable[str | None] | None"]
"""Called after each finished step; a text it returns replaces the step's text."""

BeforeToolCall = Callable[[ToolCall], "ToolCall | Awaitable[ToolCall | None] | None"]
"""Called before each tool call; the call it returns runs, ``None`` skips it."""


@dataclass(frozen=True, slots=True)
class HookFailure:
    """A hook the loop went on without: ``error`` it raised, or ``None`` for a bad return."""

    hook: str
    """``before_model_call``, ``after_model_step`` or ``before_tool_call``."""
    error: Exception | None
    step_index: int | None = None


@dataclass(frozen=True, slots=True)
class LoopHooks:
    """What a loop calls around its steps; ``turn_id`` and ``system`` go into the infos."""

    turn_id: str = ""
    system: str = ""
    before_model_call: BeforeModelCall | None = None
    after_model_step: AfterModelStep | None = None
    before_tool_call: BeforeToolCall | None = None
    on_failure: Callable[[HookFailure], None] | None = None
    """Told of each hook the loop went on without (a GMI records it on its reasoning trace)."""

    def prompt_for(self, info: ModelCallInfo, built: list[Message]) -> list[Message]:
        """The attempt's prompt: ``built``, or what ``before_model_call`` returns instead."""
        hook = self.before_model_call
        if hook is None:
            return built
        try:
            replaced = hook(info)
        except Exception as exc:
            self._failed("before_model_call", exc, info.step_index)
            return built
        if replaced is None:
            return built
        if not replaced:  # spec: an empty list is recorded, and the built prompt is sent
            self._failed("before_model_call", None, info.step_index)
            return built
        return list(replaced)

    async def step_text(self, info: StepInfo) -> str | None:
        """The text ``after_model_step`` replaces the step's with, else ``None``."""
        hook = self.after_model_step
        if hook is None:
            return None
        try:
            replaced = hook(info)
            if inspect.isawaitable(replaced):
                replaced = await replaced
        except Exception as exc:
            self._failed("after_model_step", exc, info.step_index)
            return None
        return replaced if isinstance(replaced, str) else None

    async def vetted(self, call: ToolCall) -> ToolCall | None:
        """The call ``before_tool_call`` lets run (``None``: skipped)."""
        hook = self.before_tool_call
        if hook is None:
            return call
        try:
            decided = hook(call)
            if inspect.isawaitable(decided):
                decided = await decided
        except Exception as exc:
            self._failed("before_tool_call", exc)
            return call
        if decided is None or isinstance(decided, ToolCall):
            return decided
        self._failed("before_tool_call", None)
        return call

    def _failed(self, hook: str, error: Exception | None, step_index: int | None = None) -> None:
        if self.on_failure is not None:
            self.on_failure(HookFailure(hook, error, step_index))
