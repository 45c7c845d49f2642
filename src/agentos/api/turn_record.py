"""`TurnRecord`: the messages a GMI's turn adds, on their way to the session's store.

The GMI tells its turn's ``record`` sink (`GMI.process_turn_stream(record=...)`) of each message
it adds after the turn's input; a session's turn keeps them as the turn's messages and writes
them with its `TurnWriter` as each step or tool result finishes (spec: Sessions; DESIGN §5.21),
the input with the first of them.
"""

from __future__ import annotations

import dataclasses

from agentos.core.messages import Message
from agentos.storage.turn_writer import TurnWriter

__all__ = ["TurnRecord", "labelled"]


class TurnRecord:
    """The messages the GMI's turn adds after its input, as it adds them, on their way to the store.

    The GMI tells it of each one (its ``record`` sink); they join the turn's messages at once and
    reach the store's writer at the next `flush()` (a finished step, a tool result, the turn's
    end), before the turn goes on (the turn waits for its consumer after each chunk).
    """

    def __init__(self, added: list[Message], block_label: str | None) -> None:
        self._added = added
        self._label = block_label
        self._pending: list[Message] = []
        self.writer: TurnWriter | None = None

    def start(self, writer: TurnWriter, stored_input: Message) -> None:
        """Write into ``writer``, the turn's input first (at the first `flush()`)."""
        self.writer = writer
        self._pending.append(stored_input)

    def __call__(self, message: Message) -> None:
        """Keep ``message``, one the turn just added (the GMI's ``record`` sink)."""
        if self._label is not None:
            message = labelled(message, self._label)
        self._added.append(message)
        if self.writer is not None:
            self._pending.append(message)

    async def flush(self) -> None:
        """Write what was recorded since the last flush."""
        if self._pending and self.writer is not None:
            pending, self._pending = self._pending, []
            await self.writer.add(pending)


def labelled(message: Message, label: str) -> Message:
    """``message`` carrying its turn's ``block_label`` in its metadata (as the store keeps it)."""
    return dataclasses.replace(message, metadata={**message.metadata, "block_label": label})
