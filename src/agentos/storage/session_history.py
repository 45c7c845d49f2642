"""`SessionHistoryBuffer`: a session's history, bounded, over a `SessionStore` (spec "Sessions").

The buffer is the source of truth for a session's history. It holds the messages in per-send
**blocks**: each turn's input and finished steps form one block, written to the store as each
step finishes (`TurnWriter.add`), so a crash loses at most the step that was running. When a turn
ends (`TurnWriter.commit`) the history is bounded: while it holds more than ``max_tokens``
(estimated, characters / 4) and more than ``min_keep_sends`` blocks, the oldest
``min(len - min_keep_sends, max(1, ceil(evict_chunk_ratio * len)))`` blocks are dropped, whole,
so a tool round is never split.

A failed turn keeps the steps it finished with its last message marked partial
(``metadata["partial"] = True``); `prompt_messages()` never carries a partial message to a
provider. `reseed()` and `clear()` replace the history and bump an **epoch**: a turn that began
before them is stale, and its later writes are dropped (a ``"discarded"`` event says so). What
changed beyond the caller's own writes is reported by `drain_history_events()`.

**The store is the source of truth before every turn** (spec "Sessions"; DESIGN.md §5.21). Over
a store that keeps leases (`SessionLeases`: both of agentos's stores), `start_turn()` takes the
session's lease (waiting for a turn another handle or process is running, up to the store's
``lease_timeout``, then ``SESSION_BUSY``) and reloads the history when anyone else wrote since
this buffer last did, so two handles, or two processes, on one session interleave their turns
in order. `reseed()` and `clear()` take the lease the same way (or run under their own turn's).
Opening the history (`load()`) first reconciles a turn a dead process left unfinished
(`agentos.storage.unfinished_turns`).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from agentos.core.clock import Clock, system_clock
from agentos.core.messages import Message, Role
from agentos.core.tokens import estimate_tokens, message_text_for_estimate

from .session_lease import HeldLease, SessionLeases, acquire_lease
from .session_store import InMemorySessionStore, SessionChanges, SessionStore, StoredMessage
from .unfinished_turns import PARTIAL, is_partial, mark_partial

__all__ = [
    "DEFAULT_EVICT_CHUNK_RATIO",
    "DEFAULT_HISTORY_MAX_TOKENS",
    "DEFAULT_MIN_KEEP_SENDS",
    "PARTIAL",
    "HistoryEvent",
    "HistoryEventKind",
    "SessionHistoryBuffer",
    "TurnWriter",
    "is_partial",
    "mark_partial",
    "message_tokens",
    "validate_tool_pairing",
]

DEFAULT_HISTORY_MAX_TOKENS = 120_000
"""The history bound a session gets unless ``history={"max_tokens": ...}`` says otherwise."""

DEFAULT_MIN_KEEP_SENDS = 8
"""Eviction never leaves fewer blocks (sends) than this."""

DEFAULT_EVICT_CHUNK_RATIO = 0.25
"""The share of the blocks one eviction step drops (at least one)."""


class HistoryEventKind(StrEnum):
    """What changed the history behind the caller's back (or at its request)."""

    EVICTED = "evicted"
    """The bound dropped the oldest blocks after a turn (or a reseed)."""
    RESEEDED = "reseeded"
    """`SessionHistoryBuffer.reseed()` replaced the history; the counts are the new history's."""
    CLEARED = "cleared"
    """`SessionHistoryBuffer.clear()` emptied the history; the counts are what it removed."""
    DISCARDED = "discarded"
    """A stale turn's write was dropped; the counts are what it tried to write."""


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """One change to a session's history: its kind, its size and when it happened."""

    kind: HistoryEventKind
    messages: int
    blocks: int
    tokens: int
    at: datetime


def message_tokens(message: Message) -> int:
    """The message's estimated size: what it puts in front of a model, characters / 4."""
    return estimate_tokens(message_text_for_estimate(message))


def validate_tool_pairing(messages: Sequence[Message]) -> None:
    """Check that every tool round in ``messages`` is whole, or raise `ValueError`.

    Each tool message must answer a call of the assistant message before it (only tool messages
    between them), and each call must be answered before the next non-tool message or the end.
    The error names the call id at fault.
    """
    pending: dict[str, None] = {}
    for message in messages:
        if message.tool_result is not None:
            call_id = message.tool_result.tool_call_id
            if call_id not in pending:
                raise ValueError(
                    f"tool result for call {call_id!r} answers no call of the assistant "
                    "message before it"
                )
            del pending[call_id]
            continue
        if pending:
            break
        if message.role is Role.ASSISTANT:
            pending = dict.fromkeys(call.id for call in message.tool_calls)
    if pending:
        call_id = next(iter(pending))
        raise ValueError(f"tool call {call_id!r} is left without a result")


@dataclass(frozen=True, slots=True)
class _Held:
    stored: StoredMessage
    tokens: int


class SessionHistoryBuffer:
    """One session's history: per-send blocks over a `SessionStore`, bounded in tokens.

    ``store`` defaults to a fresh `InMemorySessionStore` (the history ends with the process);
    give a `SQLiteSessionStore` for a history a new process continues. The buffer reads the store
    when opened (`load()`, also done by the first call that needs it) and again whenever another
    writer changed the session (see the module doc); run its turns with `start_turn()`. Every
    change is written to the store before the call making it returns.
    """

    def __init__(
        self,
        session_id: str,
        store: SessionStore | None = None,
        *,
        max_tokens: int = DEFAULT_HISTORY_MAX_TOKENS,
        min_keep_sends: int = DEFAULT_MIN_KEEP_SENDS,
        evict_chunk_ratio: float = DEFAULT_EVICT_CHUNK_RATIO,
        clock: Clock = system_clock,
    ) -> None:
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
        if not 0 < evict_chunk_ratio <= 1:
            raise ValueError(f"evict_chunk_ratio must be in (0, 1], not {evict_chunk_ratio!r}")
        self.session_id = session_id
        """The session whose history this is."""
        self.store: SessionStore = store if store is not None else InMemorySessionStore()
        """Where the history lives."""
        self.max_tokens = max_tokens
        """The bound applied when a turn ends."""
        self.min_keep_sends = min_keep_sends
        """Eviction never leaves fewer blocks than this."""
        self.evict_chunk_ratio = evict_chunk_ratio
        """The share of the blocks one eviction step drops (at least one)."""
        self._clock = clock
        self._loaded = False
        self._held: list[_Held] = []
        # Tokens per block, oldest block first, kept up to date so a turn costs O(its messages).
        self._block_tokens: dict[int, int] = {}
        self._tokens = 0
        self._next_block = 0
        self._next_position = 0
        self._epoch = 0
        self._open_blocks: set[int] = set()
        self._events: list[HistoryEvent] = []
        self._revision: int | None = None  # the store's revision the held messages reflect
        self._lease: HeldLease | None = None  # the lease a turn, reseed or clear holds now

    # -- reading -------------------------------------------------------------------------------

    async def load(self) -> None:
        """Read the history from the store (after reconciling a turn a dead process left).

        Later calls read it again only when another writer changed it since.
        """
        leases = self._leases
        if leases is None:
            self._ensure_loaded()
            return
        revision = leases.reconcile(self.session_id)
        if self._lease is None and (not self._loaded or revision != self._revision):
            self._reload(revision)

    def messages(self) -> list[Message]:
        """Every message held, oldest first, partial ones included (``session.messages()``)."""
        self._ensure_loaded()
        return [held.stored.message for held in self._held]

    def prompt_messages(self) -> list[Message]:
        """What a request may carry: the history without partial messages.

        When leaving out a partial message would break a tool round (the partial message was
        one of its results, say), the whole round is left out too, so every call in the result
        has its result and a provider accepts the request.
        """
        kept = [message for message in self.messages() if not is_partial(message)]
        result: list[Message] = []
        index = 0
        while index < len(kept):
            message = kept[index]
            index += 1
            if message.role is Role.TOOL:
                continue  # a result whose call was left out
            if not message.tool_calls:
                result.append(message)
                continue
            end = index
            while end < len(kept) and kept[end].role is Role.TOOL:
                end += 1
            if _round_whole(message, kept[index:end]):
                result.extend(kept[index - 1 : end])
            index = end
        return result

    @property
    def blocks(self) -> int:
        """How many blocks (sends) the history holds."""
        self._ensure_loaded()
        return len(self._block_tokens)

    @property
    def tokens(self) -> int:
        """The held messages' estimated size in tokens (partial messages included)."""
        self._ensure_loaded()
        return self._tokens

    @property
    def epoch(self) -> int:
        """Bumped by each `reseed()` and `clear()`; a turn begun in an older epoch is stale."""
        return self._epoch

    # -- writing -------------------------------------------------------------------------------

    async def start_turn(self, *, name: str | None = None) -> TurnWriter:
        """Start a turn under the session's lease, on the store's current history.

        Waits while another handle's or process's turn holds the session, up to the store's
        ``lease_timeout``, then raises `GMIError` ``SESSION_BUSY`` naming the session (``name``
        when given: the id its caller knows). The lease is released when the turn ends. Over a
        store without leases this is `begin_turn()`.
        """
        leases = self._leases
        if leases is None:
            return self.begin_turn()
        held, revision = await acquire_lease(leases, self.session_id, turn=True, name=name)
        try:
            if not self._loaded or revision != self._revision:
                self._reload(revision)
        except BaseException:
            self._revision = held.release()
            raise
        self._lease = held
        return self.begin_turn(held)

    def begin_turn(self, lease: HeldLease | None = None) -> TurnWriter:
        """Start a turn on the history as held: its messages form one new block.

        Takes no lease: for a caller that already serialises writers (`start_turn()` does it
        for the session layer). ``lease`` is released when the turn ends.
        """
        self._ensure_loaded()
        block = self._next_block
        self._next_block += 1
        self._open_blocks.add(block)
        return TurnWriter(self, block, self._epoch, lease)

    async def reseed(self, messages: Sequence[Message]) -> None:
        """Replace the history with ``messages``, then apply the bound.

        The messages are checked first (`validate_tool_pairing`): a `ValueError` leaves the
        history, the store and the epoch unchanged. A block starts at each user message (the
        messages before the first user message form a block of their own), as sends would have
        made them. Bumps the epoch, so a turn still running writes nothing more, and records a
        ``"reseeded"`` event with the new history's counts.
        """
        new = list(messages)
        validate_tool_pairing(new)
        async with self._exclusive():
            self._reseed(new)

    def _reseed(self, new: list[Message]) -> None:
        held: list[_Held] = []
        block = self._next_block - 1
        for index, message in enumerate(new):
            if index == 0 or message.role is Role.USER:
                block += 1
            stored = StoredMessage(block, self._next_position + index, message)
            held.append(_Held(stored, message_tokens(message)))
        self.store.write(self.session_id, SessionChanges(reset=tuple(h.stored for h in held)))
        self._next_block = block + 1
        self._next_position += len(new)
        self._set_held(held)
        self._new_epoch()
        self._record(HistoryEventKind.RESEEDED, held)
        self._apply_bound()

    async def clear(self) -> None:
        """Empty the history; bumps the epoch and records a ``"cleared"`` event of what it held."""
        async with self._exclusive():
            self.store.write(self.session_id, SessionChanges(reset=()))
            removed = self._held
            self._set_held([])
            self._new_epoch()
            self._record(HistoryEventKind.CLEARED, removed)

    def drain_history_events(self) -> list[HistoryEvent]:
        """The events recorded since the last call, oldest first; the list is then emptied."""
        events, self._events = self._events, []
        return events

    # -- internals -----------------------------------------------------------------------------

    @property
    def _leases(self) -> SessionLeases | None:
        return self.store if isinstance(self.store, SessionLeases) else None

    @asynccontextmanager
    async def _exclusive(self) -> AsyncIterator[None]:
        """Hold the session for a write outside a turn: the lease, unless a turn of ours has it."""
        leases = self._leases
        if leases is None or self._lease is not None:
            self._ensure_loaded()
            yield
            return
        held, revision = await acquire_lease(leases, self.session_id, turn=False)
        self._lease = held
        try:
            if not self._loaded or revision != self._revision:
                self._reload(revision)
            yield
        finally:
            self._release()

    def _release(self) -> None:
        held, self._lease = self._lease, None
        if held is not None:
            self._revision = held.release()

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self._reload(None)

    def _reload(self, revision: int | None) -> None:
        stored = self.store.load_messages(self.session_id)
        self._set_held([_Held(s, message_tokens(s.message)) for s in stored])
        # Never below what this buffer handed out: a block or position another writer removed
        # is not reused while this buffer may still hold a writer for it.
        if stored:
            self._next_block = max(self._next_block, max(s.block for s in stored) + 1)
            self._next_position = max(self._next_position, stored[-1].position + 1)
        self._loaded = True
        self._revision = revision

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

    def _append(self, block: int, messages: Sequence[Message]) -> None:
        held = [
            _Held(StoredMessage(block, self._next_position + i, m), message_tokens(m))
            for i, m in enumerate(messages)
        ]
        self.store.write(self.session_id, SessionChanges(append=tuple(h.stored for h in held)))
        self._next_position += len(held)
        self._held.extend(held)
        self._count(held)

    def _drop_blocks(self, blocks: set[int]) -> list[_Held]:
        dropped = [h for h in self._held if h.stored.block in blocks]
        if dropped:
            self.store.write(self.session_id, SessionChanges(drop_blocks=frozenset(blocks)))
            self._set_held([h for h in self._held if h.stored.block not in blocks])
        return dropped

    def _mark_last_partial(self, block: int) -> None:
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

    def _apply_bound(self) -> None:
        if self._tokens <= self.max_tokens:
            return
        order = list(self._block_tokens)  # oldest block first
        tokens = self._tokens
        doomed: set[int] = set()
        while tokens > self.max_tokens and len(order) > self.min_keep_sends:
            count = min(
                len(order) - self.min_keep_sends,
                max(1, math.ceil(self.evict_chunk_ratio * len(order))),
            )
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


def _round_whole(assistant: Message, results: list[Message]) -> bool:
    """Whether an assistant message's calls and the tool messages after it pair up exactly."""
    calls = {call.id for call in assistant.tool_calls}
    answered = [m.tool_result.tool_call_id for m in results if m.tool_result is not None]
    return len(answered) == len(set(answered)) and set(answered) == calls


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
        buffer: SessionHistoryBuffer,
        block: int,
        epoch: int,
        lease: HeldLease | None = None,
    ) -> None:
        self._buffer = buffer
        self.block = block
        """The block this turn's messages go into."""
        self.epoch = epoch
        """The buffer's epoch when the turn began."""
        self._lease = lease
        self._ended = False

    @property
    def stale(self) -> bool:
        """Whether a `reseed()` or `clear()` happened since the turn began."""
        return self.epoch != self._buffer.epoch

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
            tokens = sum(message_tokens(m) for m in batch)
            self._buffer._record_counts(HistoryEventKind.DISCARDED, len(batch), 0, tokens)
            return
        self._buffer._append(self.block, batch)

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
                self._buffer._apply_bound()
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
                self._buffer._mark_last_partial(self.block)
                self._buffer._apply_bound()
            else:
                self._buffer._drop_blocks({self.block})
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
                self._buffer._drop_blocks({self.block})
        finally:
            self._release()

    def _end(self) -> None:
        self._ended = True
        self._buffer._open_blocks.discard(self.block)

    def _release(self) -> None:
        # The lease goes last, after the turn's final writes, so a process killed before this
        # leaves a turn the next opening reconciles (as a failure at that point would leave it).
        if self._lease is not None:
            self._lease = None
            self._buffer._release()

    def _check_running(self, action: str) -> None:
        if self._ended:
            raise RuntimeError(f"cannot {action}: the turn has already ended")
