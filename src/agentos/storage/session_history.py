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

The buffer decides when to read the store and under which lease; the held blocks, their sizes,
the bound and the events are `agentos.storage.session_blocks`, a turn's writes
`agentos.storage.turn_writer`, and the tool-round rules `agentos.storage.tool_rounds`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from agentos.core.clock import Clock, system_clock
from agentos.core.messages import Message

from .history_events import HistoryEvent
from .session_blocks import HistoryBound, SessionBlocks
from .session_lease import HeldLease, SessionLeases, acquire_lease
from .session_records import SessionStore
from .session_store import InMemorySessionStore
from .tool_rounds import sendable_messages, validate_tool_pairing
from .turn_writer import TurnWriter

__all__ = [
    "DEFAULT_EVICT_CHUNK_RATIO",
    "DEFAULT_HISTORY_MAX_TOKENS",
    "DEFAULT_MIN_KEEP_SENDS",
    "SessionHistoryBuffer",
]

DEFAULT_HISTORY_MAX_TOKENS = 120_000
"""The history bound a session gets unless ``history={"max_tokens": ...}`` says otherwise."""

DEFAULT_MIN_KEEP_SENDS = 8
"""Eviction never leaves fewer blocks (sends) than this."""

DEFAULT_EVICT_CHUNK_RATIO = 0.25
"""The share of the blocks one eviction step drops (at least one)."""


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
        sole_writer: bool = False,
    ) -> None:
        """A history of ``session_id`` over ``store`` (a new in-memory store when ``None``).

        ``sole_writer``: the caller is the only writer of this session in ``store`` and runs one
        turn at a time itself, so turns take no lease (as over a store of the buffer's own).
        """
        bound = HistoryBound(max_tokens, min_keep_sends, evict_chunk_ratio)
        self.session_id = session_id
        """The session whose history this is."""
        self.store: SessionStore = store if store is not None else InMemorySessionStore()
        """Where the history lives."""
        # A store of its own has no other writer: the caller's one-turn-at-a-time rule (a
        # session's lock) is all the exclusion it needs, so its turns take no lease.
        self._own_store = self.store if store is None or sole_writer else None
        self._blocks = SessionBlocks(session_id, self.store, bound, clock)
        self._loaded = False
        self._revision: int | None = None  # the store's revision the held messages reflect
        self._lease: HeldLease | None = None  # the lease a turn, reseed or clear holds now
        # `_leases` of the store last seen: an isinstance() against a runtime-checkable Protocol
        # walks the protocol's members, too slow to repeat on every turn.
        self._leases_of: tuple[SessionStore, SessionLeases | None] | None = None

    @property
    def max_tokens(self) -> int:
        """The bound applied when a turn ends."""
        return self._blocks.bound.max_tokens

    @property
    def min_keep_sends(self) -> int:
        """Eviction never leaves fewer blocks than this."""
        return self._blocks.bound.min_keep_sends

    @property
    def evict_chunk_ratio(self) -> float:
        """The share of the blocks one eviction step drops (at least one)."""
        return self._blocks.bound.evict_chunk_ratio

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
        return self._blocks.messages()

    def prompt_messages(self) -> list[Message]:
        """What a request may carry: the history without partial messages.

        When leaving out a partial message would break a tool round (the partial message was
        one of its results, say), the whole round is left out too, so every call in the result
        has its result and a provider accepts the request.
        """
        return sendable_messages(self.messages())

    def recent_prompt_messages(self, newest: int) -> list[Message]:
        """`prompt_messages()` of the ``newest`` held messages only (a turn's window).

        Its time does not grow with the history; a round cut at the start is left out whole.
        """
        self._ensure_loaded()
        return sendable_messages(self._blocks.messages(newest))

    @property
    def blocks(self) -> int:
        """How many blocks (sends) the history holds."""
        self._ensure_loaded()
        return self._blocks.block_count

    @property
    def tokens(self) -> int:
        """The held messages' estimated size in tokens (partial messages included)."""
        self._ensure_loaded()
        return self._blocks.tokens

    @property
    def epoch(self) -> int:
        """Bumped by each `reseed()` and `clear()`; a turn begun in an older epoch is stale."""
        return self._blocks.epoch

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
        block = self._blocks.open_block()
        return TurnWriter(self._blocks, block, self._release if lease is not None else None)

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
            self._blocks.reset(new)

    async def clear(self) -> None:
        """Empty the history; bumps the epoch and records a ``"cleared"`` event of what it held."""
        async with self._exclusive():
            self._blocks.clear()

    def drain_history_events(self) -> list[HistoryEvent]:
        """The events recorded since the last call, oldest first; the list is then emptied."""
        return self._blocks.drain_events()

    # -- internals -----------------------------------------------------------------------------

    @property
    def _leases(self) -> SessionLeases | None:
        store = self.store
        if store is self._own_store:
            return None
        known = self._leases_of
        if known is None or known[0] is not store:
            known = self._leases_of = (store, store if isinstance(store, SessionLeases) else None)
        return known[1]

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
        self._blocks.load(self.store.load_messages(self.session_id))
        self._loaded = True
        self._revision = revision
