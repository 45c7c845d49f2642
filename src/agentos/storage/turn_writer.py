"""`TurnWriter`: the writes of one turn, into one block of a session's history (spec "Sessions").

Each step's messages are written to the store as the step finishes (`add`), so a crash loses at
most the step that was running; `commit`, `fail` and `discard` end the turn by the spec's rules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agentos.core.messages import Message

from .session_blocks import SessionBlocks

__all__ = ["TurnWriter"]


class TurnWriter:
    """The writes of one turn, all into one block of its `SessionHistoryBuffer`.

    Made by `SessionHistoryBuffer.begin_turn()`. Its methods are coroutines (a store write is
    I/O); each has written to the store when it returns. Once a `reseed()` or `clear()` has
    happened since, the turn is `stale`: `add` drops its messages (a ``"discarded"`` event), and
    `commit`, `fail` and `discard` only end the turn. After the turn has ended, `add`, `commit`
    and `fail` raise `RuntimeError`; `discard` does nothing, so it is safe in a ``finally``.
    A writer from `SessionHistoryBuffer.start_turn()` holds the session's lease until the turn
    ends: `commit`, `fail` and `discard` release it after the turn's last write, so a process
    killed before that leaves a turn the next opening reconciles.
    """

    def __init__(
        self,
        blocks: SessionBlocks,
        block: int,
        release: Callable[[], None] | None = None,
    ) -> None:
        """Write into ``block`` of ``blocks``; ``release`` (the lease's) runs once, at the end."""
        self._blocks = blocks
        self.block = block
        """The block this turn's messages go into."""
        self.epoch = blocks.epoch
        """The buffer's epoch when the turn began."""
        self._release_lease = release
        self._ended = False

    @property
    def stale(self) -> bool:
        """Whether a `reseed()` or `clear()` happened since the turn began."""
        return self.epoch != self._blocks.epoch

    @property
    def ended(self) -> bool:
        """Whether `commit`, `fail` or `discard` has ended the turn."""
        return self._ended

    async def add(self, messages: Message | Sequence[Message]) -> None:
        """Write the turn's input or one finished step's messages, in order, to the store now.

        A stale turn writes nothing and records a ``"discarded"`` event with what it carried.
        """
        self._check_running("add")
        batch = [messages] if isinstance(messages, Message) else list(messages)
        if not batch:
            return
        if self.stale:
            self._blocks.discarded(batch)
            return
        self._blocks.append(self.block, batch)

    async def commit(self) -> None:
        """End the turn, its messages kept as one block, then apply the history bound.

        The bound drops ``min(len - min_keep_sends, max(1, ceil(ratio * len)))`` of the oldest
        blocks while the history holds more than ``max_tokens`` and more than
        ``min_keep_sends`` blocks, recording one ``"evicted"`` event for all it dropped.
        """
        self._check_running("commit")
        self._end()
        try:
            if not self.stale:
                self._blocks.apply_bound()
        finally:
            self._release()

    async def fail(self, has_steps: bool) -> None:
        """End a failed turn.

        With ``has_steps`` (it finished at least one model step) the turn's messages stay, the
        last one marked partial, and the bound is applied as by `commit`. Without, the turn
        leaves nothing: its input is removed too.
        """
        self._check_running("fail")
        self._end()
        try:
            if self.stale:
                return
            if has_steps:
                self._blocks.mark_last_partial(self.block)
                self._blocks.apply_bound()
            else:
                self._blocks.drop_block(self.block)
        finally:
            self._release()

    async def discard(self) -> None:
        """End the turn leaving nothing of it (a structured send whose answer fails, say).

        Does nothing once the turn has ended.
        """
        if self._ended:
            return
        self._end()
        try:
            if not self.stale:
                self._blocks.drop_block(self.block)
        finally:
            self._release()

    def _end(self) -> None:
        self._ended = True
        self._blocks.close_block(self.block)

    def _release(self) -> None:
        # The lease goes last, after the turn's final writes, so a process killed before this
        # leaves a turn the next opening reconciles (as a failure at that point would leave it).
        release, self._release_lease = self._release_lease, None
        if release is not None:
            release()

    def _check_running(self, action: str) -> None:
        if self._ended:
            raise RuntimeError(f"cannot {action}: the turn has already ended")
