"""The hooks of one GMI turn (spec: Hooks; `GMIConfig`).

`TurnHooks.loop_hooks()` hands the config's ``before_model_call``, ``after_model_step`` and
``before_tool_call`` to the step loop (`agentos.loop.LoopHooks`, which guards them); a hook the
loop went on without is recorded as a WARNING in the reasoning trace and the turn goes on as if
it were not set. `TurnHooks` also records the gateway's fallbacks (telling the config's
``on_fallback``) and the hops that could not start.
"""

from __future__ import annotations

from agentos.loop import HookFailure, LoopHooks
from agentos.substrate.config import GMIConfig
from agentos.substrate.state import GMIState
from agentos.substrate.trace import ReasoningEntryType

__all__ = ["TurnHooks"]


class TurnHooks:
    """The config's hooks as one turn calls them."""

    def __init__(self, state: GMIState, config: GMIConfig, turn_id: str) -> None:
        self.state = state
        self.config = config
        self.turn_id = turn_id

    def loop_hooks(self) -> LoopHooks:
        """The config's step hooks for the turn's step loop; the persona's prompt is ``system``."""
        config = self.config
        before = config.before_model_call
        return LoopHooks(
            turn_id=self.turn_id,
            # Only before_model_call is told the persona's base prompt.
            system=self.state.persona.system_prompt_text() if before is not None else "",
            before_model_call=before,
            after_model_step=config.after_model_step,
            before_tool_call=config.before_tool_call,
            on_failure=self.on_hook_failure,
        )

    def on_hook_failure(self, failure: HookFailure) -> None:
        """Record a hook the loop went on without."""
        error = failure.error
        if failure.hook == "before_model_call":
            message = (
                f"before_model_call failed: {error}"
                if error is not None
                else "before_model_call returned no messages; the built prompt is sent"
            )
            self.state.record(ReasoningEntryType.WARNING, message, None, self.turn_id)
        elif error is not None:
            self.failed(failure.hook, error)
        else:
            self.state.record(
                ReasoningEntryType.WARNING,
                f"{failure.hook} returned neither a call nor None; the call runs as asked",
                {"hook": failure.hook},
                self.turn_id,
            )

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
