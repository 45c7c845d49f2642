"""`agency()`: several agents working one task under a strategy; `Agency`, `AgencySession`.

Spec ("Multi-agent work"; the first table's lightweight-helpers column): agency() builds each
roster member with agent(); its strategies are sequential, parallel, debate, review-loop,
hierarchical and graph; it applies HITL approvals, reports its guardrail ids as not enforced,
adds no RAG context and wires no channels; ``generate()`` and ``send()`` return text, agent calls
and usage, ``stream()`` an `AgencyStreamResult`; ``agency().session()`` keeps per-session message
history and usage totals, and each ``send()`` starts from the configured roster.
"""

from __future__ import annotations

import asyncio
import os
import uuid
import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message
from agentos.core.usage import ModelUsage
from agentos.storage.session_history import SessionHistoryBuffer
from agentos.storage.session_store import SessionStore

from ..call_checks import check_prompt, check_session_ids
from ..capability_contract import is_set
from ..warnings import UnappliedOptionsWarning
from . import debate, graph, hierarchical, parallel, review_loop, sequential
from .config import AgencyPlan, check_agency_options, refuse
from .results import AgencyFinished, AgencyResult, AgencyStreamResult, EventSink
from .run import AgencyRun

__all__ = ["STRATEGY_RUNS", "Agency", "AgencySession", "agency"]

StrategyRun = Callable[[AgencyRun], Awaitable[str]]

STRATEGY_RUNS: Mapping[str, StrategyRun] = {
    "sequential": sequential.run,
    "parallel": parallel.run,
    "debate": debate.run,
    "review-loop": review_loop.run,
    "hierarchical": hierarchical.run,
    "graph": graph.run,
}
"""Each strategy's run function (``adaptive=True`` runs the hierarchical one)."""

Execute = Callable[[str, list[Message], EventSink], Awaitable[AgencyResult]]


def agency(**options: Any) -> Agency:
    """Build an agency: the roster built with `agent()`, the options checked first.

    Options: ``agents`` (required), ``strategy`` (``"sequential"``), ``model``, ``provider``,
    ``instructions``, ``max_rounds``, ``quorum``, ``controls``, ``emergent``, ``hitl``,
    ``adaptive``, ``budget``, ``guardrails``, ``cognitive_mechanisms``, ``store``, ``name``. A
    bad or unknown one raises `AgencyConfigError` naming it (`check_agency_options`). One
    `UnappliedOptionsWarning` names ``guardrails`` (with their ids) and
    ``cognitive_mechanisms`` when set: accepted, not applied.
    """
    store = _check_store(options.get("store"))
    plan = check_agency_options(options)
    hierarchical.check_emergent(plan)  # here, not in config.py, which cannot import it
    _warn_unapplied(options, plan)
    return Agency(plan, store)


def _check_store(store: object) -> SessionStore | None:
    if store is None:
        return None
    if isinstance(store, str | os.PathLike):
        refuse(
            "store",
            f"must be a SessionStore object, got {store!r}: pass SQLiteSessionStore(path=...)",
        )
    missing = [
        name for name in vars(SessionStore) if not name.startswith("_") and not hasattr(store, name)
    ]
    if missing:
        refuse("store", f"must be a SessionStore object, got {type(store).__name__}")
    return store  # type: ignore[return-value]  # it has every member of the protocol


def _warn_unapplied(options: Mapping[str, Any], plan: AgencyPlan) -> None:
    names: list[str] = []
    parts: list[str] = []
    if plan.guardrails:
        names.append("guardrails")
        parts.append(f"guardrails (not enforced: {', '.join(plan.guardrails)})")
    if is_set(options.get("cognitive_mechanisms")):
        names.append("cognitive_mechanisms")
        parts.append("cognitive_mechanisms")
    if plan.emergent.get("enabled") and plan.strategy != "hierarchical" and not plan.adaptive:
        names.append("emergent")  # spec: emergent specialists only on hierarchical
        parts.append(f"emergent (specialists need the hierarchical strategy, not {plan.strategy})")
    if names:
        message = (
            f"agency() accepts these options without applying them: {', '.join(parts)} "
            "(capability contract)"
        )
        warnings.warn(UnappliedOptionsWarning(message, tuple(names), "agency"), stacklevel=3)


class Agency:
    """An agency built by `agency()`: one-off calls, sessions, closing."""

    def __init__(self, plan: AgencyPlan, store: SessionStore | None = None) -> None:
        self.plan = plan
        """The agency's checked options and roster."""
        self._store = store
        self._sessions: dict[str, AgencySession] = {}
        self._closed = False

    async def generate(self, prompt: str, **options: Any) -> AgencyResult:
        """Run the strategy on ``prompt`` with no history and return the `AgencyResult`.

        It takes no per-call option (one raises naming it). Cancelling the call cancels every
        member call it runs.
        """
        self._check_call(prompt, options)
        return await self.execute(prompt, [], _ignore)

    def stream(self, prompt: str, **options: Any) -> AgencyStreamResult:
        """Start the strategy on ``prompt`` (no history), to read as it streams."""
        self._check_call(prompt, options)
        return AgencyStreamResult(lambda sink: self.execute(prompt, [], sink))

    def session(self, session_id: str | None = None) -> AgencySession:
        """The session ``session_id`` (a new id when ``None``), opened on first use."""
        self._check_open()
        if session_id is None:
            session_id = uuid.uuid4().hex
        check_session_ids(session_id, None)
        opened = self._sessions.get(session_id)
        if opened is None or opened.closed:
            history = SessionHistoryBuffer(session_id, self._store)
            opened = AgencySession(session_id, history, self.execute, self._check_call)
            self._sessions[session_id] = opened
        return opened

    async def close(self) -> None:
        """Close the sessions and the agents built from options; later calls raise INVALID_STATE.

        Agents passed in the roster ready-built stay open: they belong to the caller.
        """
        if self._closed:
            return
        self._closed = True
        for opened in list(self._sessions.values()):
            await opened.close()
        for member in self.plan.members:
            if member.owned:  # an agent passed in belongs to its caller
                await member.agent.close()

    async def execute(self, prompt: str, history: list[Message], sink: EventSink) -> AgencyResult:
        """Run the strategy once, ``history`` as the earlier turns, events to ``sink``."""
        plan = self.plan
        run = AgencyRun(plan, prompt, history=history, sink=sink)
        strategy = STRATEGY_RUNS["hierarchical" if plan.adaptive else plan.strategy]
        text = await strategy(run)
        metadata: dict[str, Any] = {
            "guardrails_not_enforced": list(plan.guardrails),
            "emergent_agents": [member.name for member in run.spawned()],
            **run.metadata,
        }
        result = AgencyResult(text, list(run.calls), run.usage(), plan.strategy, metadata)
        sink(AgencyFinished(result))
        return result

    def _check_call(self, prompt: object, options: Mapping[str, Any]) -> None:
        self._check_open()
        if options:
            name = sorted(options)[0]
            raise GMIError(
                f"{name}: an agency call takes no per-call option",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": name},
            )
        if not isinstance(prompt, str):
            raise GMIError(
                f"prompt: must be text, got {type(prompt).__name__}",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "prompt"},
            )
        check_prompt(prompt)

    def _check_open(self) -> None:
        if self._closed:
            raise GMIError("the agency is closed", GMIErrorCode.INVALID_STATE)


def _ignore(_: object) -> None:
    return None


class AgencySession:
    """A conversation with an agency: its history (user prompts, agency results) and usage.

    One send at a time. The history lives in the agency's ``store`` (durable with a durable
    store, as agent sessions' do); its earlier turns reach the first call each member or
    manager gets in a send, as earlier messages.
    """

    def __init__(
        self,
        session_id: str,
        history: SessionHistoryBuffer,
        execute: Execute,
        check_call: Callable[[object, Mapping[str, Any]], None],
    ) -> None:
        self.id = session_id
        """The session's id."""
        self._history = history
        self._execute = execute
        self._check_call = check_call
        self._lock = asyncio.Lock()
        self._usage = ModelUsage.zero()
        self._closed = False

    async def send(self, prompt: str, **options: Any) -> AgencyResult:
        """Run one turn of the agency with the session's history; keep it and its usage."""
        self._check(prompt, options)
        return await self._turn(prompt, _ignore)

    def stream(self, prompt: str, **options: Any) -> AgencyStreamResult:
        """Start one turn (as `send`) to read as it streams."""
        self._check(prompt, options)
        return AgencyStreamResult(lambda sink: self._turn(prompt, sink))

    async def _turn(self, prompt: str, sink: EventSink) -> AgencyResult:
        async with self._lock:
            self._check(prompt, {})
            await self._history.load()
            earlier = self._history.messages()
            writer = await self._history.start_turn(name=self.id)
            try:
                result = await self._execute(prompt, earlier, sink)
            except BaseException:
                await writer.discard()
                raise
            await writer.add([Message.user(prompt), Message.assistant(result.text)])
            await writer.commit()
            self._usage = self._usage + result.usage
            return result

    async def messages(self) -> list[Message]:
        """The session's history, oldest first: each turn's prompt and the agency's answer."""
        await self._history.load()
        return self._history.messages()

    def usage(self) -> ModelUsage:
        """The usage of this session's turns (every member call's, summed)."""
        return self._usage

    async def clear(self) -> None:
        """Empty the history (the usage total stays)."""
        await self._history.load()
        await self._history.clear()

    async def close(self) -> None:
        """End the session: later turns raise ``INVALID_STATE``."""
        self._closed = True

    @property
    def closed(self) -> bool:
        """Whether the session (or its agency) was closed."""
        return self._closed

    def _check(self, prompt: object, options: Mapping[str, Any]) -> None:
        if self._closed:
            raise GMIError(f"session {self.id!r} is closed", GMIErrorCode.INVALID_STATE)
        self._check_call(prompt, options)
