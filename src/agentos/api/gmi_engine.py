"""The GMI engine: a `gmi()` agent's session turns, each on the session's own GMI.

Spec (GMIs from agent() → Sessions, Closing). The GMI is built from the agent's persona and
services on the session's first turn (with ``history=False``, one is built for each turn and
released after it), over the session's `SessionHistoryBuffer`, the source of truth: before each
turn the GMI's history is replaced with the store's messages (`GmiTurnRun`). A reseed or clear
of the session also replaces the GMI's own history and what it recorded about the dropped
turns. Releasing the engine (the session's `close()` or `release()`) stops a turn still running
(its model call aborted, its caller given the abort error, its finished steps kept and marked
partial), then shuts the GMI down. The session itself is the one `AgentSession`
(`agentos.api.session`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from agentos.core.messages import ContentPart, Message
from agentos.core.usage import ModelUsage
from agentos.llm.budget import BudgetLike
from agentos.storage.ledger import UsageLedger
from agentos.storage.session_history import SessionHistoryBuffer
from agentos.substrate.chunks import GMIOutput
from agentos.substrate.gmi import GMI

from .approvals import check_approve_tool, tool_gate
from .call_checks import check_call_options, refuse_unknown_options
from .gmi_turn import GmiTurnRun
from .option_checks import call_budget_from_option
from .session import AgentSession, UsageCounter
from .structured import structured_spec

__all__ = ["SEND_OPTIONS", "GmiEngine", "GmiFactory", "MemoryHooks"]

SEND_OPTIONS = frozenset(
    {
        "response_schema",
        "schema_name",
        "block_label",
        "tool_choice",
        "request_timeout",
        "cache_diagnostics",
        "cache",
        "max_tokens",
        "abort_signal",
        "budget",
        "approve_tool",
    }
)
"""What a `gmi()` session's ``send()`` / ``stream()`` takes (spec: session.send(input, options)).

``budget`` may be a `JointBudget`; ``approve_tool`` is the tool-approval gate
(`agentos.api.approvals`), asked after the agent's ``on_before_tool_execution``."""
_FORWARDED = ("tool_choice", "request_timeout", "cache_diagnostics", "cache", "max_tokens")

GmiFactory = Callable[[AgentSession], Awaitable[GMI]]
"""Builds a session's GMI (the agent's lazy build: persona, gateway, tools, memory)."""


class MemoryHooks(Protocol):
    """A ``memory_provider``'s two calls as a session makes them (`MemoryProviderHooks`)."""

    async def context(self, session: AgentSession, text: str) -> str | None:
        """The provider's context for a turn of ``session`` that says ``text``, or ``None``."""
        ...

    async def observe(self, session: AgentSession, text: str, reply: str) -> None:
        """Give the provider a turn of ``session`` that ended without error."""
        ...


class GmiEngine:
    """One `gmi()` session's turns (a `SessionEngine`), on the GMI it builds on first use."""

    def __init__(
        self,
        build: GmiFactory,
        history: SessionHistoryBuffer | None,
        *,
        memory: MemoryHooks | None = None,
        budget: BudgetLike | None = None,
        ledger: UsageLedger | None = None,
        on_release: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._build = build
        self._on_release = on_release
        self._history = history
        self._memory = memory
        self._budget = budget
        self._ledger = ledger
        self._ledger_read = False
        self._gmi: GMI | None = None

    @property
    def budget(self) -> BudgetLike | None:
        """The agent's spend budget (shared by all its sessions and calls)."""
        return self._budget

    @property
    def gmi(self) -> GMI | None:
        """The session's GMI: ``None`` before its first turn and between ``history=False`` turns."""
        return self._gmi

    def turn(
        self,
        session: AgentSession,
        prompt: str | list[ContentPart],
        options: dict[str, Any],
        count: UsageCounter,
    ) -> GmiTurnRun:
        """A turn of ``session``: `SEND_OPTIONS` only, checked as `generate_text()` checks them."""
        refuse_unknown_options(options, SEND_OPTIONS)
        check_call_options(options)
        approve = options.get("approve_tool")
        check_approve_tool(approve)
        schema = options.get("response_schema")
        spec = structured_spec(schema, options.get("schema_name")) if schema is not None else None
        forwarded = {k: options[k] for k in _FORWARDED if options.get(k) is not None}
        if spec is not None:
            forwarded.update(response_schema=spec.json_schema, schema_name=spec.name)
        memory = self._memory
        said = ""

        async def context(text: str) -> str | None:
            nonlocal said
            said = text
            return await memory.context(session, text) if memory is not None else None

        async def finished(
            output: GMIOutput | None, error: BaseException | None, usage: ModelUsage
        ) -> None:
            if output is not None and memory is not None and output.response_text:
                await memory.observe(session, said, output.response_text)
            count(usage)  # a failed turn's finished steps and billed attempts count too
            if self._history is None:
                await self._release_gmi()  # the turn's GMI is released with the turn

        async def gmi() -> GMI:
            return await self._gmi_for_turn(session, count)

        return GmiTurnRun(
            gmi,
            self._history,
            Message.user(prompt),
            user_id=session.user_id or session.id,
            session_id=session.id,
            options=forwarded,
            end_user_id=session.user_id,
            after=finished,
            structured=spec,
            abort_signal=options.get("abort_signal"),
            context=context if memory is not None else None,  # nothing to ask: no call
            budget=call_budget_from_option(options.get("budget")),
            block_label=options.get("block_label"),
            tool_gate=tool_gate(approve) if approve is not None else None,
        )

    async def _gmi_for_turn(self, session: AgentSession, count: UsageCounter) -> GMI:
        if self._ledger is not None and not self._ledger_read:
            # Spec (Usage): with a usage ledger, usage() reads the ledger; rows an earlier
            # process wrote for this session are read once, and each new row is added as the
            # turn meters it (the same figures), so usage() stays synchronous.
            self._ledger_read = True
            count((await self._ledger.totals(session.id)).usage)
        if self._history is None:
            # Spec (Sessions): with history=False each turn runs on a GMI built for that turn, so
            # nothing of an earlier turn (its history, trace, working memory) reaches this one.
            await self._release_gmi()
        if self._gmi is None:
            self._gmi = await self._build(session)  # a failed build is not kept
        return self._gmi

    async def _release_gmi(self) -> None:
        gmi, self._gmi = self._gmi, None
        if gmi is not None:
            await gmi.shutdown()

    async def history_replaced(self, history: SessionHistoryBuffer | None) -> None:
        """The GMI's history becomes the session's (its dropped turns' records scrubbed)."""
        if self._gmi is not None:
            await self._gmi.replace_history(history.prompt_messages() if history else [])

    async def release(self) -> None:
        """Shut the GMI down (a turn still running stops first), then call ``on_release``.

        ``on_release`` ends the session's learner session (spec "Learning": a learner session
        ends at session.close(), and agent.close() ends every session's).
        """
        if self._gmi is not None:
            await self._gmi.shutdown()
        if self._on_release is not None:
            await self._on_release()
