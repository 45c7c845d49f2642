"""The refusals every self-modification tool checks before it acts.

Spec: The self-modification tools; Modes and the process switches.

"Before they act, forge_tool, create_workflow's create, manage_skills' enable and disable,
self_evaluate's adjust and adapt_personality check, in this order: the freeze
(AGENTOS_LEARNING_FREEZE=1 or mode frozen, refused with frozen), the mode (off, refused with off)
and the learner (none, refused with no_learner)." A refusal "is a failed tool result that changes
nothing: its error reads <tool> refused (<reason>): <why>; nothing was changed., and its details
are { status: 'rejected', reason }".

`ToolRefusal` is a `GMIError`: a handler raises it, and the tool orchestrator turns it into the
failed tool result the model reads (its message as output, the details kept).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from agentos.core.errors import GMIErrorCode
from agentos.emergent._checks import Rejection
from agentos.learning import learning_switches
from agentos.substrate.learning_seam import LEARNING_KEY
from agentos.tools import ToolExecutionContext

__all__ = [
    "FREEZE_ENV",
    "RefusalReason",
    "ToolRefusal",
    "has_learning_layer",
    "learning_refusal",
    "refusal",
]

FREEZE_ENV = "AGENTOS_LEARNING_FREEZE"
"""The process switch that freezes every host, one with no layer included (only the value 1)."""

RefusalReason = Literal[
    "frozen", "off", "no_learner", "operator_only", "step_bound", "call_limit", "not_allowed"
]

_WHY: dict[str, str] = {
    "frozen": "learning is frozen",
    "off": "learning is off",
    "no_learner": "this turn has no learner",
    "operator_only": "only the persona definition sets this trait",
    "step_bound": "the learning layer allows a change of at most 0.02 per call",
    "call_limit": "the learning layer allows three accepted changes per session",
}


class ToolRefusal(Rejection):
    """A self-modification tool refused and changed nothing (code ``AUTH_PERMISSION_DENIED``).

    ``message`` reads ``<tool> refused (<reason>): <why>; nothing was changed.``; ``details`` is
    ``{"status": "rejected", "reason": reason}``.
    """

    def __init__(self, tool: str, reason: str, why: str) -> None:
        super().__init__(
            f"{tool} refused ({reason}): {why}; nothing was changed.",
            GMIErrorCode.PERMISSION_DENIED,
            reason,
            "self_improvement",
        )
        self.tool = tool


def refusal(tool: str, reason: str, why: str | None = None) -> ToolRefusal:
    """The refusal of ``tool`` for ``reason``, with the standard explanation unless ``why``."""
    return ToolRefusal(tool, reason, why or _WHY.get(reason, reason))


def _learning_entry(context: ToolExecutionContext | None) -> Mapping[str, Any] | None:
    if context is None:
        return None
    entry = context.session_data.get(LEARNING_KEY)
    return entry if isinstance(entry, Mapping) else None


def has_learning_layer(context: ToolExecutionContext | None) -> bool:
    """Whether the call runs on a host with a learning layer (its session data says so)."""
    return _learning_entry(context) is not None


def learning_refusal(tool: str, context: ToolExecutionContext | None) -> ToolRefusal | None:
    """The refusal of a call that would change the agent, or ``None`` when it may act.

    In the spec's order: the freeze (``AGENTOS_LEARNING_FREEZE=1`` on every host, read at the
    call; or mode ``frozen``), the mode (``off``), the learner (``none``). Mode and learner are
    read only from ``session_data["learning"]``: a host without a layer refuses only under the
    process freeze. On a host with a layer ``AGENTOS_LEARNING_OFF=1`` ("puts every turn of every
    layer in the process in mode off") refuses with ``off`` even when the turn's entry says
    ``on`` (a GMI's fallback preparation reports ``on``: it does not read the switches).
    """
    entry = _learning_entry(context)
    mode = entry.get("mode") if entry is not None else None
    if os.environ.get(FREEZE_ENV) == "1" or mode == "frozen":
        return refusal(tool, "frozen")
    if entry is None:
        return None
    if mode == "off" or learning_switches()[0] == "off":
        return refusal(tool, "off")
    if entry.get("learner") == "none":
        return refusal(tool, "no_learner")
    return None
