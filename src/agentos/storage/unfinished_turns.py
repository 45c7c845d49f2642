"""What a turn that did not end leaves in the store (spec "Sessions"; DESIGN.md §5.21).

The spec's failure rules: a turn that fails after some steps keeps those steps, its last message
marked partial (``metadata["partial"] = True``, never sent to a provider); a turn that fails
before any step finishes keeps nothing. In-process, `TurnWriter.fail` applies them. A process
killed during a turn cannot, so a durable store applies the same rules when it next reconciles
the session (`repair_unfinished_turn`), and the store then equals what the same failure leaves
in-process:

- no finished step (nothing after the turn's input): the turn's messages are removed;
- finished steps: they stay; each tool call the turn made whose result was never recorded is
  answered with the error result a stopped round gives its unfinished calls
  (`agentos.core.tool_results.stopped_tool_result`), in call order; the last message is marked
  partial.

A step is finished when its write committed: a process killed while a step's write was in
flight leaves that step out, as if it had failed during its model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agentos.core.messages import Message, Role
from agentos.core.tool_results import stopped_tool_result

from .session_records import SessionChanges, StoredMessage

__all__ = [
    "PARTIAL",
    "TurnRepair",
    "is_partial",
    "mark_partial",
    "repair_changes",
    "repair_unfinished_turn",
]

PARTIAL = "partial"
"""The metadata key marking a message partial (``True``): the last of a failed turn."""


def is_partial(message: Message) -> bool:
    """Whether ``message`` is marked partial (the last message of a failed turn)."""
    return message.metadata.get(PARTIAL) is True


def mark_partial(message: Message) -> Message:
    """A copy of ``message`` with ``metadata["partial"] = True`` (the original is untouched)."""
    return replace(message, metadata={**message.metadata, PARTIAL: True})


@dataclass(frozen=True, slots=True)
class TurnRepair:
    """How to leave an unfinished turn.

    Remove it all (``drop``), or add ``append`` after it and put ``last`` in place of its last
    message (``None``: the last stays as it is).
    """

    drop: bool = False
    append: tuple[Message, ...] = ()
    last: Message | None = None


def repair_unfinished_turn(turn: Sequence[Message]) -> TurnRepair:
    """What the spec's failure rules make of a turn that did not end (see the module doc).

    ``turn`` is the turn's messages in order, its input first.
    """
    if not any(message.role is Role.ASSISTANT for message in turn):
        return TurnRepair(drop=bool(turn))
    answered = {m.tool_result.tool_call_id for m in turn if m.tool_result is not None}
    unanswered = [call for m in turn for call in m.tool_calls if call.id not in answered]
    if unanswered:
        results = [Message.tool(stopped_tool_result(call)) for call in unanswered]
        return TurnRepair(append=(*results[:-1], mark_partial(results[-1])))
    if is_partial(turn[-1]):
        return TurnRepair()
    return TurnRepair(last=mark_partial(turn[-1]))


def repair_changes(turn: Sequence[StoredMessage], next_position: int) -> SessionChanges:
    """The `SessionChanges` that leave an unfinished turn as the spec's failure rules do.

    ``turn`` is the turn's stored messages in position order; ``next_position`` the first
    position after every message the session holds (see `repair_unfinished_turn`).
    """
    if not turn:
        return SessionChanges()
    repair = repair_unfinished_turn([stored.message for stored in turn])
    if repair.drop:
        return SessionChanges(drop_blocks=frozenset(stored.block for stored in turn))
    last = turn[-1]
    return SessionChanges(
        replace=()
        if repair.last is None
        else (StoredMessage(last.block, last.position, repair.last),),
        append=tuple(
            StoredMessage(last.block, next_position + index, message)
            for index, message in enumerate(repair.append)
        ),
    )
