r"""The GMI's conversation history (spec: Conversation history; DESIGN.md §5.4).

`ConversationHistoryManager` holds one session's messages. A turn records its input with
`record_input()`, which then trims the history to the newest ``max_messages`` (20 by default, or
the persona's ``conversation_context_config.max_messages``). A cut that falls inside a tool round
also removes that round's remaining tool results, so no tool result is left without the assistant
message that called it (the reference's plain cut could orphan them: its §5 trap 6).

A host sets the history with `replace_history()`, `hydrate_conversation_history()` and
`clear_history()`. The two replacing calls leave out ``error`` and ``thought`` messages, turn a
``summary`` message into a system message ``[Conversation Summary]\n<text>`` and do not trim.

Replacing and clearing drop what the GMI recorded about turns the new history no longer holds. The
manager remembers each turn that recorded a user input (its turn id and the input's text); a
recorded turn stays while the history has a user message with that text. After
`replace_history()` or `clear_history()` every other recorded turn is forgotten and reported to
the callbacks registered with `on_turns_dropped()`, which scrub the trace, sentiment and event
records of those turns. `hydrate_conversation_history()` drops nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from agentos.core.messages import Message, Role

__all__ = [
    "DEFAULT_MAX_MESSAGES",
    "SUMMARY_PREFIX",
    "ConversationHistoryManager",
    "DroppedTurn",
    "TurnsDroppedCallback",
    "normalize_history",
    "trim_history",
]

DEFAULT_MAX_MESSAGES = 20
"""The history window when the persona sets none (spec: Conversation history)."""

SUMMARY_PREFIX = "[Conversation Summary]\n"
"""What a summary message's text is prefixed with when it becomes a system message."""


@dataclass(frozen=True, slots=True)
class DroppedTurn:
    """A recorded turn the history no longer holds: its id and the user input it recorded."""

    turn_id: str
    user_input: str


TurnsDroppedCallback = Callable[[list[DroppedTurn]], None]
"""Told, in recording order, about the turns a replace or clear dropped."""


def normalize_history(messages: Iterable[Message]) -> list[Message]:
    """Messages as a replacing call stores them: no error or thought, summaries as system."""
    result: list[Message] = []
    for message in messages:
        if message.role in (Role.ERROR, Role.THOUGHT):
            continue
        if message.role is Role.SUMMARY:
            message = Message(
                Role.SYSTEM,
                SUMMARY_PREFIX + message.text,
                name=message.name,
                metadata=dict(message.metadata),
            )
        result.append(message)
    return result


def trim_history(messages: Sequence[Message], max_messages: int) -> list[Message]:
    """The newest ``max_messages`` messages, less the tool results whose call was cut.

    When the cut removes an assistant message that requested tools, the results answering those
    calls are removed from the kept part too, so the result can hold fewer than
    ``max_messages`` messages.
    """
    if max_messages < 1:
        raise ValueError(f"max_messages must be at least 1, not {max_messages}")
    cut = max(0, len(messages) - max_messages)
    if cut == 0:
        return list(messages)
    cut_call_ids = {call.id for message in messages[:cut] for call in message.tool_calls}
    return [
        message
        for message in messages[cut:]
        if message.tool_result is None or message.tool_result.tool_call_id not in cut_call_ids
    ]


class ConversationHistoryManager:
    """One session's messages, trimmed to a window when a turn records its input."""

    def __init__(self, max_messages: int = DEFAULT_MAX_MESSAGES) -> None:
        self._check(max_messages)
        self._max_messages = max_messages
        self._messages: list[Message] = []
        self._turns: dict[str, str] = {}
        self._callbacks: list[TurnsDroppedCallback] = []

    @staticmethod
    def _check(max_messages: int) -> None:
        if max_messages < 1:
            raise ValueError(f"max_messages must be at least 1, not {max_messages}")

    @property
    def max_messages(self) -> int:
        """The window `record_input()` trims to."""
        return self._max_messages

    @max_messages.setter
    def max_messages(self, value: int) -> None:
        self._check(value)
        self._max_messages = value

    def messages(self) -> list[Message]:
        """A copy of the history, oldest first."""
        return list(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def recorded_turns(self) -> dict[str, str]:
        """The turns recorded and still held: turn id to the user input it recorded."""
        return dict(self._turns)

    def record_input(
        self, message: Message | Sequence[Message], *, turn_id: str | None = None
    ) -> None:
        """Add a turn's input (a user message, tool results, a system message), then trim.

        With ``turn_id``, the turn is recorded under the text of its (last) user message, so a
        later replace or clear can tell whether the history still holds it.
        """
        added = [message] if isinstance(message, Message) else list(message)
        self._messages.extend(added)
        if turn_id is not None:
            user_inputs = [m.text for m in added if m.role is Role.USER]
            if user_inputs:
                self._turns[turn_id] = user_inputs[-1]
        self._messages = trim_history(self._messages, self._max_messages)

    def add(self, message: Message) -> None:
        """Add a message a turn produced (an assistant reply, a tool result); no trim."""
        self._messages.append(message)

    def replace_history(self, messages: Iterable[Message]) -> None:
        """Make ``messages`` the whole history (normalised, not trimmed); drop stale turns."""
        self._messages = normalize_history(messages)
        self._drop_stale_turns()

    def hydrate_conversation_history(self, messages: Iterable[Message]) -> None:
        """Replace the history as `replace_history()` does, but keep every recorded turn."""
        self._messages = normalize_history(messages)

    def clear_history(self) -> None:
        """Empty the history and drop every recorded turn."""
        self._messages = []
        self._drop_stale_turns()

    def on_turns_dropped(self, callback: TurnsDroppedCallback) -> Callable[[], None]:
        """Call ``callback`` with the turns each replace or clear drops; returns an unsubscriber."""
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe

    def _drop_stale_turns(self) -> None:
        held = {m.text for m in self._messages if m.role is Role.USER}
        dropped = [
            DroppedTurn(turn_id, text) for turn_id, text in self._turns.items() if text not in held
        ]
        if not dropped:
            return
        for turn in dropped:
            del self._turns[turn.turn_id]
        for callback in list(self._callbacks):
            callback(list(dropped))
