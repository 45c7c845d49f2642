"""`AgentSession`: a conversation with a plain `agent()`, its history in process memory.

Spec (the first table, "Per-session state" of the lightweight helpers; the paragraph before it):
the path without a GMI keeps each session's message history in process memory, unless the agent
was built with ``history=False``, and sends the whole of it with every turn, where a GMI's
prompt engine would give it 35 % of the window. A request that does not fit the window of a
model the catalog knows is refused with `ContextWindowExceededError` before it is sent.

A turn (`AgentTurn`) runs `stream_text()` with the agent's system prompt, tools and model
settings, the session's history as ``messages``, and the memory provider's context. Only a turn
that ends without error is written to the history (the user's message and the messages the turn
added, as one block) and observed by the memory provider. One turn runs at a time per session.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ContentPart, Message
from agentos.core.usage import ModelUsage
from agentos.gmi.prompt_engine import ContextWindowExceededError
from agentos.llm import catalog
from agentos.llm.model import ModelRequest, closing_stream
from agentos.llm.resolve import resolve_model
from agentos.llm.token_estimate import estimate_prompt_tokens
from agentos.storage.history_events import HistoryEvent
from agentos.storage.session_history import SessionHistoryBuffer

from .call_checks import check_prompt, tools_option
from .generate import DEFAULT_COT_INSTRUCTION, TextOptions, stream_text
from .memory_provider import fetch_memory_context, insert_memory_context, observe_turn
from .results import ErrorPart, FinishPart, GenerateTextResult, StreamPart
from .stream_result import StreamTextResult

__all__ = [
    "SESSION_CALL_OPTIONS",
    "AgentSession",
    "AgentTurn",
    "TurnSettings",
    "UsageTally",
    "check_context_window",
]


@dataclass(frozen=True, slots=True)
class TurnSettings:
    """What every turn of one agent shares: built once, when the agent is.

    ``text_options`` are the agent's `generate_text()` options (model, gateway, tools,
    ``max_steps``, ``chain_of_thought``, budget, ledger, output cap) with ``system`` set to the
    agent's system prompt; a call's options are laid over them.
    """

    text_options: TextOptions
    memory_provider: object = None
    memory_timeout_ms: float = 5_000.0


@dataclass(slots=True)
class UsageTally:
    """Usage added up: one total, and one per session id (kept after a session closes)."""

    total: ModelUsage = field(default_factory=ModelUsage.zero)
    sessions: dict[str, ModelUsage] = field(default_factory=dict)

    def add(self, usage: ModelUsage, session_id: str | None) -> None:
        """Count ``usage`` in the total and, for a session's turn, in that session's."""
        self.total = self.total + usage
        if session_id is not None:
            self.sessions[session_id] = self.sessions.get(session_id, ModelUsage.zero()) + usage


def check_context_window(prompt: str | list[ContentPart], options: TextOptions) -> None:
    """Refuse a request that does not fit the primary model's window, before it is sent.

    The request is what `stream_text()` would send first: the system prompt (with the reasoning
    instruction when tools are offered), ``messages`` and the prompt, and the tool definitions
    (none on a structured call), estimated at characters / 4. Only a model the catalog knows
    is checked (an unknown model's window is a guess), and only the primary: a provider that
    cannot be set up is left for `stream_text()` to report. Raises `ContextWindowExceededError`
    (``GMI_CONTEXT_ERROR``; ``details`` holds ``provider``, ``model``, ``context_window`` and
    ``required_tokens``).
    """
    ids = _primary_ids(options)
    if ids is None:
        return
    provider_id, model_id = ids
    info = catalog.model_info(provider_id, model_id)
    if info is None:
        return
    tools = tools_option(options.get("tools"))
    structured = options.get("response_schema") is not None
    system = options.get("system") or ""
    chain = options.get("chain_of_thought", False)
    if tools and chain:
        instruction = chain if isinstance(chain, str) else DEFAULT_COT_INSTRUCTION
        system = f"{instruction}\n\n{system}"
    messages = [Message.system(system)] if system.strip() else []
    messages.extend(options.get("messages") or ())
    messages.append(Message.user(prompt))
    definitions = [] if structured else [tool.definition() for tool in tools]
    required = estimate_prompt_tokens(ModelRequest(messages, definitions))
    if required > info.context_window:
        raise ContextWindowExceededError(
            f"the request needs about {required} tokens with the whole session history, more "
            f"than the {info.context_window}-token context window of {provider_id}:{model_id}; "
            "clear() or reseed() the session, or lower history.max_tokens",
            {
                "provider": provider_id,
                "model": model_id,
                "context_window": info.context_window,
                "required_tokens": required,
            },
            component="agent",
        )


def _primary_ids(options: TextOptions) -> tuple[str, str] | None:
    model = options.get("model")
    if model is not None and not isinstance(model, str):
        return model.provider_id, model.model_id
    try:
        # Resolving builds an adapter but sends nothing; the gateway resolves it again per call.
        resolved = resolve_model(
            options.get("provider"),
            model,
            api_key=options.get("api_key"),
            base_url=options.get("base_url"),
        )
    except Exception:  # a provider that cannot be set up: stream_text() reports it
        return None
    return resolved.provider_id, resolved.model_id


class AgentTurn:
    """One turn of a plain agent: a session's ``send()`` / ``stream()``, or ``generate()``.

    A `Run` for `StreamTextResult`. It waits for the session's previous turn (``lock``), gets
    the memory provider's context, checks the window, then streams `stream_text()`'s parts.
    Usage is counted whether the turn succeeds or fails (billed failed attempts included).
    """

    def __init__(
        self,
        settings: TurnSettings,
        prompt: str | list[ContentPart],
        call_options: TextOptions,
        *,
        history: SessionHistoryBuffer | None = None,
        lock: asyncio.Lock | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        on_usage: Callable[[ModelUsage], None] | None = None,
        check_open: Callable[[], None] | None = None,
    ) -> None:
        self._settings = settings
        self._prompt = prompt
        self._call_options = call_options
        self._history = history
        self._lock = lock
        self._session_id = session_id
        self._user_id = user_id
        self._on_usage = on_usage
        self._check_open = check_open
        self._result: GenerateTextResult | None = None
        self._usage = ModelUsage.zero()

    async def parts(self) -> AsyncIterator[StreamPart]:
        """The turn's parts; raises its failure (after counting its usage)."""
        lock: contextlib.AbstractAsyncContextManager[Any] = (
            self._lock if self._lock is not None else contextlib.nullcontext()
        )
        async with lock:
            if self._check_open is not None:
                self._check_open()
            async with closing_stream(self._run()) as parts:
                async for part in parts:
                    yield part

    async def _run(self) -> AsyncIterator[StreamPart]:
        settings = self._settings
        # Begun before the model runs, so a clear() or reseed() during the turn discards it.
        # Under the session's lease, on the store's current history (DESIGN.md §5.21).
        writer = await self._history.start_turn() if self._history is not None else None
        user = Message.user(self._prompt)
        kept = False
        try:
            earlier = self._history.prompt_messages() if self._history is not None else []
            context = await fetch_memory_context(
                settings.memory_provider,
                user.text,
                timeout_ms=settings.memory_timeout_ms,
                session_id=self._session_id,
                user_id=self._user_id,
            )
            # The leading system message is the agent's prompt (``system``); the context goes
            # after it and after any system messages the history starts with.
            messages = insert_memory_context(earlier, context)
            options = cast(
                "TextOptions", {**settings.text_options, **self._call_options, "messages": messages}
            )
            # A blank user id is anonymous (spec: '' is an anonymous id): none is sent.
            if self._user_id and self._user_id.strip() and "user_id" not in options:
                options["user_id"] = self._user_id
            check_context_window(self._prompt, options)
            inner = stream_text(self._prompt, **options)
            error: Exception | None = None
            async with closing_stream(inner.full_stream) as inner_parts:
                async for part in inner_parts:
                    if isinstance(part, FinishPart):
                        self._count(part.usage)
                    elif isinstance(part, ErrorPart):
                        error = part.error  # its FinishPart, with the usage, follows
                    else:
                        yield part
            if error is not None:
                raise error
            result = await inner.result
            if writer is not None:
                await writer.add([user, *result.response_messages])
                await writer.commit()
            kept = True
            self._result = result
            await observe_turn(
                settings.memory_provider,
                user.text,
                result.text,
                session_id=self._session_id,
                user_id=self._user_id,
            )
        finally:
            if writer is not None and not kept:
                await writer.discard()  # the legacy path keeps nothing of a failed turn

    def _count(self, usage: ModelUsage) -> None:
        self._usage = usage
        if self._on_usage is not None:
            self._on_usage(usage)

    def result(self) -> GenerateTextResult:
        """The finished turn's result."""
        if self._result is None:
            raise GMIError("the turn has not finished", GMIErrorCode.INVALID_STATE)
        return self._result

    def usage(self) -> ModelUsage:
        """The turn's usage so far."""
        return self._usage


SESSION_CALL_OPTIONS: frozenset[str] = frozenset(
    {
        "temperature",
        "max_tokens",
        "top_p",
        "response_schema",
        "schema_name",
        "tool_choice",
        "request_timeout",
        "cache_diagnostics",
        "model",
        "provider",
        "max_steps",
        "usage_ledger",
        "budget",
    }
)
"""The options a session's ``send()`` and ``stream()`` take (anything else is refused)."""

CallOptionsMerger = Callable[[str, dict[str, Any], frozenset[str]], TextOptions]


class AgentSession:
    """A conversation with a plain `agent()`: its history in process memory (or ``store``).

    Made by `Agent.session()`. ``send()`` and ``stream()`` run one turn at a time: a second waits
    for the first to end. ``messages()``, ``reseed()``, ``clear()`` and
    ``drain_history_events()`` act on the history; with ``history=False`` there is none:
    ``messages()`` is empty and ``reseed()`` raises.
    """

    def __init__(
        self,
        session_id: str,
        *,
        user_id: str | None,
        settings: TurnSettings,
        history: SessionHistoryBuffer | None,
        merge_options: CallOptionsMerger,
        on_usage: Callable[[ModelUsage, str], None],
        on_closed: Callable[[AgentSession], None],
    ) -> None:
        self.id = session_id
        """The session's id."""
        self.user_id = user_id
        """The end user's id, sent with each model request (``None``: none is sent)."""
        self._settings = settings
        self._history = history
        self._merge = merge_options
        self._lock = asyncio.Lock()
        self._usage = ModelUsage.zero()
        self._on_usage = on_usage
        self._on_closed = on_closed
        self._closed = False

    async def send(self, prompt: str | list[ContentPart], **options: Any) -> GenerateTextResult:
        """Run one turn to its end and return its result.

        Options: ``temperature``, ``max_tokens``, ``top_p``, ``response_schema``,
        ``schema_name``, ``tool_choice``, ``request_timeout``, ``cache_diagnostics``, ``model``,
        ``provider``, ``max_steps``, ``usage_ledger`` and ``budget`` (a `SpendBudget` or budget
        settings, replacing the agent's for this turn); another raises `GMIError` naming it.
        The prompt (text or a list of content parts) and the options are checked before the
        turn starts (`agentos.api.call_checks`): a bad one raises `GMIError` naming it, and
        nothing is stored or sent. A failed turn raises its error
        (``ContextWindowExceededError`` before any request when the history does not fit a
        known model's window) and leaves the history as it was.
        """
        return await self.stream(prompt, **options).result

    def stream(self, prompt: str | list[ContentPart], **options: Any) -> StreamTextResult:
        """Start a turn to read as it streams (options as for `send`).

        Its text, usage and result settle after the history is written; a consumer that stops
        reading stops the turn, which then leaves nothing in the history.
        """
        self._check_open()
        check_prompt(prompt)
        call = self._merge("session.send()", options, SESSION_CALL_OPTIONS)
        turn = AgentTurn(
            self._settings,
            prompt,
            call,
            history=self._history,
            lock=self._lock,
            session_id=self.id,
            user_id=self.user_id,
            on_usage=self._count,
            check_open=self._check_open,
        )
        return StreamTextResult(turn, call.get("response_schema"))

    def _count(self, usage: ModelUsage) -> None:
        self._usage = self._usage + usage
        self._on_usage(usage, self.id)

    async def messages(self) -> list[Message]:
        """Every message of the history, oldest first (an empty list with ``history=False``)."""
        if self._history is None:
            return []
        await self._history.load()
        return self._history.messages()

    async def reseed(self, messages: Sequence[Message]) -> None:
        """Replace the history with ``messages`` (tool pairing checked first: `ValueError`).

        A turn running meanwhile writes nothing. Raises `GMIError` (``INVALID_STATE``) on an
        agent built with ``history=False``.
        """
        if self._history is None:
            raise GMIError(
                "reseed() needs a session history; this agent was built with history=False",
                GMIErrorCode.INVALID_STATE,
            )
        await self._history.load()
        await self._history.reseed(messages)

    async def clear(self) -> None:
        """Empty the history; a turn running meanwhile writes nothing."""
        if self._history is not None:
            await self._history.load()
            await self._history.clear()

    def drain_history_events(self) -> list[HistoryEvent]:
        """What happened to the history since the last call (evictions, reseeds, clears, ...)."""
        return self._history.drain_history_events() if self._history is not None else []

    def usage(self) -> ModelUsage:
        """The usage of this session's turns, failed ones' billed attempts included."""
        return self._usage

    async def close(self) -> None:
        """End the session: later turns raise, and the agent's next ``session(id)`` starts anew.

        A turn already running finishes. Closing twice does nothing.
        """
        if self._closed:
            return
        self._closed = True
        self._on_closed(self)

    @property
    def closed(self) -> bool:
        """Whether the session (or its agent) was closed."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise GMIError(f"session {self.id!r} is closed", GMIErrorCode.INVALID_STATE)
