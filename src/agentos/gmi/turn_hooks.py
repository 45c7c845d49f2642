"""The hooks of one GMI turn, each guarded (spec: Hooks; `GMIConfig`).

`TurnHooks` calls the config's ``before_model_call``, ``after_model_step``, ``before_tool_call``
and ``on_fallback`` for one turn. A hook that raises is recorded as a WARNING in the reasoning
trace and the turn goes on as if it were not set; a hook that returns nothing usable changes
nothing. It also records the gateway's fallbacks and hops that could not start.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from agentos.core.messages import Message, ToolCall
from agentos.gmi.chunks import StepFinishedPayload
from agentos.gmi.config import GMIConfig, ModelCallInfo, StepInfo
from agentos.gmi.state import GMIState
from agentos.gmi.trace import ReasoningEntryType
from agentos.llm.gateway import Hop
from agentos.llm.model import ToolDefinition

__all__ = ["TurnHooks"]


class TurnHooks:
    """The config's hooks as one turn calls them."""

    def __init__(self, state: GMIState, config: GMIConfig, turn_id: str) -> None:
        self.state = state
        self.config = config
        self.turn_id = turn_id

    def before_model_call(
        self,
        hop: Hop,
        step_index: int,
        messages: list[Message],
        tools: Sequence[ToolDefinition] = (),
    ) -> list[Message]:
        """The attempt's prompt: ``messages``, or the non-empty list the hook returns."""
        hook = self.config.before_model_call
        if hook is None:
            return messages
        info = ModelCallInfo(
            self.turn_id,
            step_index,
            hop.index,
            hop.provider_id,
            hop.model_id,
            list(messages),
            self.state.persona.system_prompt_text(),
            list(tools),
        )
        try:
            replaced = hook(info)
        except Exception as exc:
            self.state.record(
                ReasoningEntryType.WARNING, f"before_model_call failed: {exc}", None, self.turn_id
            )
            return messages
        if replaced is None:
            return messages
        if not replaced:
            self.state.record(
                ReasoningEntryType.WARNING,
                "before_model_call returned no messages; the built prompt is sent",
                None,
                self.turn_id,
            )
            return messages
        return list(replaced)

    async def after_model_step(
        self, payload: StepFinishedPayload, calls: list[ToolCall]
    ) -> str | None:
        """The text the hook replaces the step's text with, or ``None``."""
        hook = self.config.after_model_step
        if hook is None:
            return None
        info = StepInfo(
            self.turn_id,
            payload.step_index,
            payload.text,
            list(calls),
            payload.finish_reason,
            payload.provider_id,
            payload.model_id,
        )
        try:
            replaced = hook(info)
            if inspect.isawaitable(replaced):
                replaced = await replaced
        except Exception as exc:
            self.failed("after_model_step", exc)
            return None
        return replaced if isinstance(replaced, str) else None

    async def before_tool_call(self, call: ToolCall) -> ToolCall | None:
        """The call ``before_tool_call`` lets run (``None``: skipped)."""
        hook = self.config.before_tool_call
        if hook is None:
            return call
        try:
            decided = hook(call)
            if inspect.isawaitable(decided):
                decided = await decided
        except Exception as exc:
            self.failed("before_tool_call", exc)
            return call
        return decided if isinstance(decided, ToolCall) or decided is None else call

    def on_fallback(self, error: BaseException, provider_id: str) -> None:
        """Record a fallback of the turn and tell the config's ``on_fallback``."""
        self.state.record(
            ReasoningEntryType.WARNING,
            f"falling back to {provider_id}: {error}",
            {"provider_id": provider_id},
            self.turn_id,
        )
        hook = self.config.on_fallback
        if hook is not None:
            try:
                hook(error, provider_id)
            except Exception as exc:
                self.failed("on_fallback", exc)

    def on_hop_failure(self, provider_id: str, model_id: str, error: BaseException) -> None:
        """Record a hop that could not start."""
        self.state.record(
            ReasoningEntryType.WARNING,
            f"hop {provider_id}:{model_id} could not start: {error}",
            {"provider_id": provider_id, "model_id": model_id},
            self.turn_id,
        )

    def failed(self, name: str, exc: BaseException) -> None:
        """Record that hook ``name`` raised ``exc``; the turn goes on without it."""
        self.state.record(
            ReasoningEntryType.WARNING,
            f"{name} failed: {exc}; the turn goes on without it",
            {"hook": name, "error": type(exc).__name__},
            self.turn_id,
        )
