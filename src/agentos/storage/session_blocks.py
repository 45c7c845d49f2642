"""`SessionBlocks`: a session's held messages in per-send blocks, written through to its store.

Each turn's input and finished steps form one **block**; a reseed starts a block at each user
message. Every change is written to the `SessionStore` before the method making it returns. The
blocks' token sizes (estimated, characters / 4: `message_tokens`) are kept up to date so a turn
costs O(its messages), and `apply_bound()` drops whole blocks, oldest first, while the history is
over its `HistoryBound`, so a tool round is never split.

The **epoch** is bumped by `reset()` and `clear()`: a turn begun in an older one is stale. The
blocks of running turns are *open* and never evicted under them. What changed is recorded as
`HistoryEvent`s, handed out by `drain_events()`. `SessionHistoryBuffer` decides when to load and
under which lease; this class only holds and writes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agentos.core.clock import Clock
from agentos.core.messages import Message, Role
from agentos.core.tokens import estimate_tokens, message_text_for_estimate

from .history_events import HistoryEvent, HistoryEventKind
from .session_records import SessionChanges, SessionStore, StoredMessage
from .unfinished_turns import is_partial, mark_partial

__all__ = ["HistoryBound", "SessionBlocks", "message_tokens"]


def message_tokens(message: Message) -> int:
    """The message's estimated size: what it puts in front of a model, characters / 4."""
    return estimate_tokens(message_text_for_estimate(message))


@dataclass(frozen=True, slots=True)
class HistoryBound:
    """How far a history may grow: checked when a turn ends (and after a reseed).

    While the history holds more than ``max_tokens`` and more than ``min_keep_sends`` blocks,
    `evict_count` of the oldest blocks are dropped. Raises `ValueError` for an invalid value.
    """

    max_tokens: int
    min_keep_sends: int
    evict_chunk_ratio: float

    def __post_init__(self) -> None:
        max_tokens, min_keep_sends = self.max_tokens, self.min_keep_sends
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, not {max_tokens!r}")
        if (
            isinstance(min_keep_sends, bool)
            or not isinstance(min_keep_sends, int)
            or min_keep_sends < 0
        ):
            raise ValueError(
                f"min_keep_sends must be a non-negative integer, not {min_keep_sends!r}"
            )
        if not 0 < self.evict_chunk_ratio <= 1:
            raise ValueError(f"evict_chunk_ratio must be in (0, 1], not {self.evict_chunk_ratio!r}")

    def evict_count(self, blocks: int) -> int:
        """How many blocks one eviction step drops from ``blocks``.

        ``min(blocks - min_keep_sends, max(1, ceil(evict_chunk_ratio * blocks)))``.
        """
        return min(blocks - self.min_keep_sends, max(1, math.ceil(self.evict_chunk_ratio * blocks)))


@dataclass(frozen=True, slots=True)
class _Held:
    stored: StoredMessage
    tokens: int


class SessionBlocks:
    """One session's held messages, in blocks, with their sizes, epoch and events.

    Starts empty: `load()` fills it from what the store holds.
    """

    def __init__(
        self, session_id: str, store: SessionStore, bound: HistoryBound, clock: Clock
    ) -> None:
        self.session_id = session_id
        """The session whose messages these are."""
        self.store = store
        """Where every change is written."""
        self.bound = bound
        """The bound `apply_bound()` enforces."""
        self._clock = clock
        self._held: list[_Held] = []
        # Tokens per block, oldest block first, kept up to date so a turn costs O(its messages).
        self._block_tokens: dict[int, int] = {}
        self._tokens = 0
        self._next_block = 0
        self._next_position = 0
        self._epoch = 0
        self._open_blocks: set[int] = set()
        self._events: list[HistoryEvent] = []

    # -- reading -------------------------------------------------------------------------------

    def messages(self, newest: int | None = None) -> list[Message]:
        """Every message held (or the ``newest`` ones), oldest first, partial ones included."""
        held = self._held if newest is None else self._held[-newest:] if newest > 0 else []
        return [entry.stored.message for entry in held]

    @property
    def block_count(self) -> int:
        """How many blocks are held."""
        return len(self._block_tokens)

    @property
    def tokens(self) -> int:
        """The held messages' estimated size in tokens."""
        return self._tokens

    @property
    def epoch(self) -> int:
        """Bumped by each `reset()` and `clear()`."""
        return self._epoch

    def drain_events(self) -> list[HistoryEvent]:
        """The events recorded since the last call, oldest first; the list is then emptied."""
        events, self._events = self._events, []
        return events

    # -- turns ---------------------------------------------------------------------------------

    def open_block(self) -> int:
        """A new block for a turn, protected from eviction until `close_block()`."""
        block = self._next_block
        self._next_block += 1
        self._open_blocks.add(block)
        return block

    def close_block(self, block: int) -> None:
        """The turn writing ``block`` has ended: the bound may now drop it."""
        self._open_blocks.discard(block)

    # -- whole-history changes -----------------------------------------------------------------

    def load(self, stored: Sequence[StoredMessage]) -> None:
        """Hold ``stored`` (what the store holds now) in place of what was held."""
        self._set_held([_Held(s, message_tokens(s.message)) for s in stored])
        # Never below what was handed out: a block or position another writer removed is not
        # reused while a writer for it may still be running.
        if stored:
            self._next_block = max(self._next_block, max(s.block for s in stored) + 1)
            self._next_position = max(self._next_position, stored[-1].position + 1)

    def reset(self, messages: Sequence[Message]) -> None:
        """Replace the history with ``messages``, a block starting at each user message.

        Bumps the epoch, records a ``"reseeded"`` event, then applies the bound.
        """
        held: list[_Held] = []
        block = self._next_block - 1
        for index, message in enumerate(messages):
            if index == 0 or message.role is Role.USER:
                block += 1
            stored = StoredMessage(block, self._next_position + index, message)
            held.append(_Held(stored, message_tokens(message)))
        self.store.write(self.session_id, SessionChanges(reset=tuple(h.stored for h in held)))
        self._next_block = block + 1
        self._next_position += len(messages)
        self._set_held(held)
        self._new_epoch()
        self._record(HistoryEventKind.RESEEDED, held)
        self.apply_bound()

    def clear(self) -> None:
        """Empty the history; bumps the epoch and records a ``"cleared"`` event."""
        self.store.write(self.session_id, SessionChanges(reset=()))
        removed = self._held
        self._set_held([])
        self._new_epoch()
        self._record(HistoryEventKind.CLEARED, removed)

    # -- block changes -------------------------------------------------------------------------

    def append(self, block: int, messages: Sequence[Message]) -> None:
        """Add ``messages`` to ``block``, after everything held."""
        held = [
            _Held(StoredMessage(block, self._next_position + i, m), message_tokens(m))
            for i, m in enumerate(messages)
        ]
        self.store.write(self.session_id, SessionChanges(append=tuple(h.stored for h in held)))
        self._next_position += len(held)
        self._held.extend(held)
        self._count(held)

    def discarded(self, messages: Sequence[Message]) -> None:
        """Record a ``"discarded"`` event for a stale turn's ``messages``; nothing is written."""
        tokens = sum(message_tokens(m) for m in messages)
        self._record_counts(HistoryEventKind.DISCARDED, len(messages), 0, tokens)

    def drop_block(self, block: int) -> None:
        """Remove every message of ``block``."""
        self._drop_blocks({block})

    def mark_last_partial(self, block: int) -> None:
        """Mark the last message of ``block`` partial (unless it already is)."""
        for index in range(len(self._held) - 1, -1, -1):
            held = self._held[index]
            if held.stored.block != block:
                continue
            if is_partial(held.stored.message):
                return
            marked = replace(held.stored, message=mark_partial(held.stored.message))
            self.store.write(self.session_id, SessionChanges(replace=(marked,)))
            self._held[index] = _Held(marked, held.tokens)
            return

    def apply_bound(self) -> None:
        """Drop the oldest closed blocks while over the bound; one ``"evicted"`` event for all."""
        if self._tokens <= self.bound.max_tokens:
            return
        order = list(self._block_tokens)  # oldest block first
        tokens = self._tokens
        doomed: set[int] = set()
        while tokens > self.bound.max_tokens and len(order) > self.bound.min_keep_sends:
            count = self.bound.evict_count(len(order))
            # A block a running turn is still writing is never dropped under it.
            victims = [b for b in order if b not in self._open_blocks][:count]
            if not victims:
                break
            for block in victims:
                doomed.add(block)
                tokens -= self._block_tokens[block]
                order.remove(block)
        if doomed:
            dropped = self._drop_blocks(doomed)
            self._record(HistoryEventKind.EVICTED, dropped)

    # -- internals -----------------------------------------------------------------------------

    def _drop_blocks(self, blocks: set[int]) -> list[_Held]:
        dropped = [h for h in self._held if h.stored.block in blocks]
        if dropped:
            self.store.write(self.session_id, SessionChanges(drop_blocks=frozenset(blocks)))
            self._set_held([h for h in self._held if h.stored.block not in blocks])
        return dropped

    def _set_held(self, held: list[_Held]) -> None:
        self._held = held
        self._tokens = 0
        self._block_tokens = {}
        self._count(held)

    def _count(self, held: Sequence[_Held]) -> None:
        for entry in held:
            block = entry.stored.block
            self._block_tokens[block] = self._block_tokens.get(block, 0) + entry.tokens
            self._tokens += entry.tokens

    def _new_epoch(self) -> None:
        self._epoch += 1
        # The turns open now are stale: their blocks are no longer theirs to protect.
        self._open_blocks.clear()

    def _record(self, kind: HistoryEventKind, held: Sequence[_Held]) -> None:
        blocks = len({h.stored.block for h in held})
        self._record_counts(kind, len(held), blocks, sum(h.tokens for h in held))

    def _record_counts(
        self, kind: HistoryEventKind, messages: int, blocks: int, tokens: int
    ) -> None:
        self._events.append(HistoryEvent(kind, messages, blocks, tokens, self._clock.now()))
