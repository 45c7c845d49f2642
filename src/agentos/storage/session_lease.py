"""One turn at a time per session, across processes: the session lease (DESIGN.md §5.21).

A store that implements `SessionLeases` keeps one lease per session: the holder of a running turn
(or of a `reseed()` / `clear()`), written in the store itself (a row of the SQLite database, so
every process that opens the file sees it). `acquire_lease()` takes it, waiting while a live
holder has it, up to the store's ``lease_timeout`` (30 s by default); past that it raises a
`GMIError` with code ``SESSION_BUSY`` naming the session. Within one process a session's turns
are already serialised by the session's own lock; the lease adds the same rule between handles
and processes.

**A lease a dead holder left expires.** Whether the holder lives is decided by `LeaseHolder`:

- a holder on this host is alive while its process is: its pid exists, is not a zombie, and
  (where ``/proc`` tells) started when the holder's did, so a recycled pid does not count; a
  holder in this very process is alive while its `HeldLease` is (not released, not collected);
- a holder on another host is alive while its heartbeat is younger than the store's
  ``lease_ttl``; a `HeldLease` renews it every third of that time.

A live local holder is never judged by its heartbeat: a turn whose event loop is busy (a local
model generating, say) keeps its lease however long it runs.

**The store is the source of truth before every turn.** Each store write bumps the session's
*revision*; taking the lease returns the revision, and releasing it returns the revision its
holder's own writes reached, so a history buffer reloads exactly when someone else wrote.

Taking over a dead holder's lease, and `SessionLeases.reconcile()` (run when a history is
opened), first reconcile the turn that holder left unfinished, in the same transaction
(`agentos.storage.session_recovery`). A turn whose holder is alive is never touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from agentos.core.errors import GMIError, GMIErrorCode

__all__ = [
    "DEFAULT_LEASE_TIMEOUT",
    "DEFAULT_LEASE_TTL",
    "HeldLease",
    "LeaseHolder",
    "SessionLeases",
    "acquire_lease",
    "check_lease_options",
]

DEFAULT_LEASE_TIMEOUT = 30.0
"""Seconds a turn waits for another process's turn on the same session before ``SESSION_BUSY``."""

DEFAULT_LEASE_TTL = 30.0
"""Seconds a holder on another host keeps its lease without a heartbeat."""

_POLL_FIRST = 0.01
_POLL_MAX = 0.2

# The tokens of the leases this process holds now; a holder of this process whose token is not
# here was released or garbage-collected without release (a leaked turn), so it is dead.
_LIVE_TOKENS: set[str] = set()


def _process_start(pid: int) -> str:
    """The process's start time in clock ticks since boot (``/proc``), or ``""`` when unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    state, start = fields[0], fields[19]
    return "" if state in ("Z", "X") else start


def _pid_alive(pid: int, started: str) -> bool:
    if Path("/proc/self/stat").exists():
        now = _process_start(pid)  # "" for a missing or zombie process
        return bool(now) and (not started or now == started)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: it exists
    return True


@functools.cache
def _process(pid: int) -> tuple[str, int, str]:
    return socket.gethostname(), pid, _process_start(pid)


def _this_process() -> tuple[str, int, str]:
    # Keyed by pid: a forked child is another process with a start time of its own.
    return _process(os.getpid())


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """Who holds a lease: a token unique to one acquisition, and the process that made it."""

    token: str
    host: str
    pid: int
    started: str
    """The process's start time where ``/proc`` tells it (``""`` elsewhere)."""

    @classmethod
    def new(cls) -> LeaseHolder:
        """A holder for one acquisition by this process."""
        host, pid, started = _this_process()
        # 128 random bits as hex: as unique as a uuid4 (122 bits), at a fifth of its cost.
        return cls(os.urandom(16).hex(), host, pid, started)

    def alive(self, heartbeat_age: float, ttl: float) -> bool:
        """Whether the holder still holds its lease (see the module doc for the rule)."""
        host, pid, _ = _this_process()
        if self.host != host:
            return heartbeat_age <= ttl
        if self.pid == pid:
            return self.token in _LIVE_TOKENS
        return _pid_alive(self.pid, self.started)


@runtime_checkable
class SessionLeases(Protocol):
    """A store that keeps one lease per session (a durable store across processes).

    Each method is atomic (one transaction in a durable store). ``turn`` marks an acquisition
    for a turn: the store remembers where the turn's messages start (the block after the
    newest held), so the turn can be reconciled if its holder dies before it ends.
    """

    lease_timeout: float
    """Seconds `acquire_lease` waits for a live holder before raising ``SESSION_BUSY``."""

    lease_ttl: float
    """Seconds a holder on another host keeps its lease without a heartbeat."""

    def reconcile(self, session_id: str) -> int:
        """Reconcile a turn a dead holder left (freeing its lease); return the revision."""
        ...

    def try_acquire_lease(self, session_id: str, holder: LeaseHolder, *, turn: bool) -> int | None:
        """Take the lease (a dead holder's is taken over) and return the revision.

        ``None`` when a live holder has it; a holder cannot take a lease it already holds.
        """
        ...

    def renew_lease(self, session_id: str, holder: LeaseHolder) -> None:
        """Refresh the holder's heartbeat (nothing when it no longer holds the lease)."""
        ...

    def release_lease(self, session_id: str, holder: LeaseHolder) -> int:
        """Free the lease when ``holder`` has it; return the session's revision."""
        ...


def check_lease_options(lease_timeout: float, lease_ttl: float) -> None:
    """Refuse a ``lease_timeout`` that is not a number >= 0 or a ``lease_ttl`` that is not > 0."""
    for name, value, floor in (
        ("lease_timeout", lease_timeout, 0.0),
        ("lease_ttl", lease_ttl, 0.0),
    ):
        number = not isinstance(value, bool) and isinstance(value, int | float)
        if not number or math.isnan(value) or value < floor or (name == "lease_ttl" and value == 0):
            kind = "a non-negative" if name == "lease_timeout" else "a positive"
            raise GMIError(
                f"{name} must be {kind} number of seconds, not {value!r}",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": name},
            )


class HeldLease:
    """A lease this process holds: renewed while held, released once.

    Registered as live until `release()`; a held lease that is garbage-collected unreleased
    (a turn abandoned without its end) stops counting as live, so it expires like a dead
    process's.
    """

    def __init__(self, leases: SessionLeases, session_id: str, holder: LeaseHolder) -> None:
        self.session_id = session_id
        self.holder = holder
        self._leases = leases
        self._released = False
        _LIVE_TOKENS.add(holder.token)
        self._heartbeat: asyncio.Task[None] | None = None
        if math.isfinite(leases.lease_ttl):
            self._heartbeat = asyncio.get_running_loop().create_task(self._beat())

    @property
    def released(self) -> bool:
        """Whether `release()` was called."""
        return self._released

    async def _beat(self) -> None:
        interval = self._leases.lease_ttl / 3
        while True:
            await asyncio.sleep(interval)
            # A missed beat (the database busy or closed under the turn) only ages the lease;
            # the turn itself reports a store it cannot write.
            with contextlib.suppress(Exception):
                self._leases.renew_lease(self.session_id, self.holder)

    def release(self) -> int:
        """Free the lease and return the session's revision (once; later calls raise)."""
        if self._released:
            raise RuntimeError("the lease was already released")
        self._released = True
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        try:
            return self._leases.release_lease(self.session_id, self.holder)
        finally:
            _LIVE_TOKENS.discard(self.holder.token)

    def __del__(self, _live: set[str] = _LIVE_TOKENS) -> None:
        # Collected unreleased: no longer live (see the class doc). A ``__del__`` rather than a
        # `weakref.finalize`, which costs more than the rest of a turn's lease; the set is
        # bound as a default so it is still there however late in shutdown this runs.
        if not self._released:
            _live.discard(self.holder.token)


async def acquire_lease(
    leases: SessionLeases, session_id: str, *, turn: bool, name: str | None = None
) -> tuple[HeldLease, int]:
    """Take ``session_id``'s lease, waiting up to ``leases.lease_timeout`` for a live holder.

    Returns the held lease and the session's revision. Past the timeout raises `GMIError`
    ``SESSION_BUSY`` naming the session (``name``, the id its caller knows, when given).
    Cancelling the wait takes nothing.
    """
    holder = LeaseHolder.new()
    deadline = time.monotonic() + leases.lease_timeout
    pause = _POLL_FIRST
    while True:
        # Registered before the attempt, so the holder counts as live the moment it holds.
        _LIVE_TOKENS.add(holder.token)
        try:
            revision = leases.try_acquire_lease(session_id, holder, turn=turn)
        except BaseException:
            _LIVE_TOKENS.discard(holder.token)
            raise
        if revision is not None:
            held = HeldLease(leases, session_id, holder)
            return held, revision
        _LIVE_TOKENS.discard(holder.token)
        left = deadline - time.monotonic()
        if left <= 0:
            label = name if name is not None else session_id
            raise GMIError(
                f"session {label!r} is busy: another turn (another process's, or another "
                f"handle's) still holds it after {leases.lease_timeout:g} s; try again when "
                "that turn has ended",
                GMIErrorCode.SESSION_BUSY,
                {"session_id": label, "lease_timeout": leases.lease_timeout},
            )
        await asyncio.sleep(min(pause, left))
        pause = min(pause * 2, _POLL_MAX)
