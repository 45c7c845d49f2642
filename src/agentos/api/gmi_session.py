"""`GmiSession`: one session of a `gmi()` agent (spec: GMIs from agent() → Sessions, Closing).

Each session has a GMI of its own, built from the agent's persona and services on its first
turn (with ``history=False``, one built for each turn and released after it), over the session's
`SessionHistoryBuffer`, the source of truth: before each turn the GMI's history is replaced
with the store's messages. One turn runs at a time: a second `send()` or `stream()` waits for
the first to end (the session's lock); across handles and processes the store's lease keeps the
same rule, a turn waiting up to the store's ``lease_timeout`` before ``SESSION_BUSY`` (taken
by the turn run, `SessionHistoryBuffer.start_turn`; DESIGN §5.21). `messages()`, `reseed()`,
`clear()` and `drain_history_events()` act on the store; `reseed()` and `clear()` also replace
the GMI's own history and what it recorded about the dropped turns. `close()` stops a turn
still running (its model call aborted, its caller given the abort error, its finished steps
kept and marked partial), then shuts the GMI down; the agent's next `session()` with the id
starts empty. `release()`, what `agent.close()` does with a durable store (DESIGN §5.16), stops
and shuts down the same way but leaves the session open in the store, to be continued.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ContentPart, Message
from agentos.core.usage import ModelUsage
from agentos.llm.budget import BudgetLike
from agentos.llm.model import closing_stream
from agentos.storage.history_events import HistoryEvent
from agentos.storage.ledger import UsageLedger
from agentos.storage.session_history import SessionHistoryBuffer
from agentos.substrate.chunks import GMIOutput
from agentos.substrate.gmi import GMI

from .call_checks import check_call_options, check_prompt, refuse_unknown_options
from .gmi_turn import GmiTurnRun
from .option_checks import spend_budget_from_option
from .results import ErrorPart, GenerateTextResult, StreamPart
from .stream_result import StreamTextResult
from .structured import structured_spec

__all__ = ["SEND_OPTIONS", "GmiSession", "SessionOptions"]

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
    }
)
"""What one `GmiSession.send()` / `stream()` takes (spec: session.send(input, options))."""
_FORWARDED = ("tool_choice", "request_timeout", "cache_diagnostics", "cache", "max_tokens")

GmiFactory = Callable[["GmiSession"], Awaitable[GMI]]
"""Builds a session's GMI (the agent's lazy build: persona, gateway, tools, memory)."""


@dataclass(frozen=True, slots=True)
class SessionOptions:
    """What a session keeps beside its id: the end user's id and its memory scope id."""

    user_id: str | None = None
    scope_id: str | None = None


@dataclass(slots=True)
class _Usage:
    total: ModelUsage = field(default_factory=ModelUsage.zero)


class GmiSession:
    """A conversation with a `gmi()` agent, its history in the session store."""

    def __init__(
        self,
        session_id: str,
        history: SessionHistoryBuffer | None,
        build: GmiFactory,
        *,
        options: SessionOptions,
        on_closed: Callable[[GmiSession], None] | None = None,
        on_usage: Callable[[ModelUsage], None] | None = None,
        memory_context: Callable[[GmiSession, str], Awaitable[str | None]] | None = None,
        observe: Callable[[GmiSession, str, str], Awaitable[None]] | None = None,
        budget: BudgetLike | None = None,
        ledger: UsageLedger | None = None,
    ) -> None:
        self.id = session_id
        self.user_id = options.user_id
        self.scope_id = options.scope_id or session_id
        self._history = history
        self._build = build
        self._gmi: GMI | None = None
        self._lock = asyncio.Lock()
        self._running: GmiTurnRun | None = None
        self._running_task: asyncio.Task[Any] | None = None
        self._closed = False
        self._on_closed = on_closed
        self._on_usage = on_usage
        self._usage = _Usage()
        self._memory_context = memory_context
        self._budget = budget
        self._ledger = ledger
        self._ledger_read = False
        self._last_prompt = ""
        self._observe = observe

    # -- turns ------------------------------------------------------------------------------

    async def send(self, prompt: str | list[ContentPart], **options: Any) -> GenerateTextResult:
        """Run one turn to its end; rejects with the GMI's error, its code kept."""
        stream = self.stream(prompt, **options)
        async for part in stream.full_stream:
            if isinstance(part, ErrorPart):
                raise part.error
        return await stream.result

    def stream(self, prompt: str | list[ContentPart], **options: Any) -> StreamTextResult:
        """Start a turn to read as it streams.

        Its text and usage settle after the store is written; a consumer that stops reading
        stops the turn and aborts its model call. The prompt and options are checked first, as
        `generate_text()` checks them (`agentos.api.call_checks`): a bad one raises `GMIError`
        naming it, before any model call and any write.
        """
        self._check_open()
        check_prompt(prompt)
        refuse_unknown_options(options, SEND_OPTIONS)
        check_call_options(options)
        run = _LockedRun(
            self._turn_run(Message.user(prompt), options), self._lock, self._check_open
        )
        return StreamTextResult(run, options.get("response_schema"))

    def _turn_run(self, message: Message, options: dict[str, Any]) -> GmiTurnRun:
        """The run of one turn of ``message`` with the send options ``options``."""
        schema = options.get("response_schema")
        spec = structured_spec(schema, options.get("schema_name")) if schema is not None else None
        forwarded = {k: options[k] for k in _FORWARDED if options.get(k) is not None}
        if spec is not None:
            forwarded.update(response_schema=spec.json_schema, schema_name=spec.name)
        provider = self._memory_context

        async def context(text: str) -> str | None:
            self._last_prompt = text
            return await provider(self, text) if provider is not None else None

        return GmiTurnRun(
            self._gmi_for_turn,
            self._history,
            message,
            user_id=self.user_id or self.id,
            session_id=self.id,
            options=forwarded,
            end_user_id=self.user_id,
            after=self._turn_finished,
            structured=spec,
            abort_signal=options.get("abort_signal"),
            context=context,
            budget=spend_budget_from_option(options.get("budget")),
            block_label=options.get("block_label"),
        )

    async def _gmi_for_turn(self) -> GMI:
        if self._ledger is not None and not self._ledger_read:
            # Spec (Usage): with a usage ledger, usage() reads the ledger; rows an earlier
            # process wrote for this session are read once, and each new row is added as the
            # turn meters it (the same figures), so usage() stays synchronous.
            self._ledger_read = True
            earlier = (await self._ledger.totals(self.id)).usage
            self._usage.total = earlier + self._usage.total
            if self._on_usage is not None:
                self._on_usage(earlier)
        if self._history is None:
            # Spec (Sessions): with history=False each turn runs on a GMI built for that turn, so
            # nothing of an earlier turn (its history, trace, working memory) reaches this one.
            await self._release_turn_gmi()
        if self._gmi is None:
            self._gmi = await self._build(self)  # a failed build is not kept
        return self._gmi

    async def _release_turn_gmi(self) -> None:
        gmi, self._gmi = self._gmi, None
        if gmi is not None:
            await gmi.shutdown()

    async def _turn_finished(
        self, output: GMIOutput | None, error: BaseException | None, usage: ModelUsage
    ) -> None:
        if output is not None and self._observe is not None and output.response_text:
            await self._observe(self, self._last_prompt, output.response_text)
        # A failed turn's finished steps and billed attempts were metered too: they count.
        self._usage.total = self._usage.total + usage
        if self._on_usage is not None:
            self._on_usage(usage)
        if self._history is None:
            await self._release_turn_gmi()  # the turn's GMI is released with the turn

    # -- the store --------------------------------------------------------------------------

    async def messages(self) -> list[Message]:
        """Every message the store holds, partial ones included (an empty list without one)."""
        if self._history is None:
            return []
        await self._history.load()
        return self._history.messages()

    async def reseed(self, messages: Sequence[Message]) -> None:
        """Replace the stored history (and the GMI's), validating tool pairing first."""
        if self._history is None:
            raise GMIError(
                "reseed() needs a session history; this agent was built with history=False",
                GMIErrorCode.INVALID_STATE,
            )
        await self._history.load()
        await self._history.reseed(messages)
        if self._gmi is not None:
            await self._gmi.replace_history(self._history.prompt_messages())

    async def clear(self) -> None:
        """Empty the stored history (and the GMI's)."""
        if self._history is not None:
            await self._history.load()
            await self._history.clear()
        if self._gmi is not None:
            await self._gmi.clear_history()

    def drain_history_events(self) -> list[HistoryEvent]:
        """What happened to the stored history since the last call (evictions, reseeds, ...)."""
        return self._history.drain_history_events() if self._history is not None else []

    def usage(self) -> ModelUsage:
        """The usage of this session's turns."""
        return self._usage.total

    def record_external_cost(self, cost_usd: float, tokens: int = 0) -> None:
        """Charge a cost spent outside the model calls (a paid tool, say) to the agent's budget.

        Without a budget there is nothing to charge and nothing happens.
        """
        if self._budget is not None:
            self._budget.record_external_cost(cost_usd, tokens)

    # -- closing ----------------------------------------------------------------------------

    async def close(self) -> None:
        """Stop a running turn, shut the session's GMI down; the session cannot be used again."""
        if self._closed:
            return
        await self.release()
        if self._on_closed is not None:
            self._on_closed(self)

    async def release(self) -> None:
        """Let go of this handle without ending the session (`agent.close()`, DESIGN §5.16).

        A running turn stops as `close()` stops it and the GMI is shut down, but a durable store
        keeps the session open: the next `session(id)`, in this process or another, continues
        it. The handle cannot be used again.
        """
        if self._closed:
            return
        self._closed = True
        if self._gmi is not None:
            await self._gmi.shutdown()

    @property
    def closed(self) -> bool:
        """Whether `close()` was called."""
        return self._closed

    @property
    def gmi(self) -> GMI | None:
        """The session's GMI (its mood, events, trace), or ``None`` before its first turn.

        With ``history=False``, the running turn's GMI, and ``None`` between turns.
        """
        return self._gmi

    def _check_open(self) -> None:
        if self._closed:
            raise GMIError(f"session {self.id!r} is closed", GMIErrorCode.INVALID_STATE)


class _LockedRun:
    """A session turn that waits for the session's previous turn before it starts."""

    def __init__(self, run: GmiTurnRun, lock: asyncio.Lock, check_open: Callable[[], None]) -> None:
        self._run = run
        self._lock = lock
        self._check_open = check_open

    async def parts(self) -> AsyncIterator[StreamPart]:
        async with self._lock:
            self._check_open()
            # Closed explicitly, so a consumer that stops reading stops the turn now.
            async with closing_stream(self._run.parts()) as parts:
                async for part in parts:
                    yield part

    def result(self) -> GenerateTextResult:
        return self._run.result()

    def usage(self) -> ModelUsage:
        return self._run.usage()
