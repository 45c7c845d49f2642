"""`AgentTurn`: one turn of a plain `agent()`, over `stream_text()`.

A turn runs `stream_text()` with the agent's settings (`TurnSettings`: system prompt, tools and
model settings), the session's history as ``messages``, and the memory provider's context; the
request is checked against the model's window first (`check_context_window`). Only a turn that
ends without error is written to the history (the user's message and the messages the turn
added, as one block) and observed by the memory provider.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import cast

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ContentPart, Message
from agentos.core.usage import ModelUsage
from agentos.llm.model import closing_stream
from agentos.storage.session_history import SessionHistoryBuffer

from .context_window import check_context_window
from .generate import TextOptions, stream_text
from .memory_provider import fetch_memory_context, insert_memory_context, observe_turn
from .results import ErrorPart, FinishPart, GenerateTextResult, StreamPart

__all__ = ["AgentTurn", "TurnSettings"]


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


class AgentTurn:
    """One turn of a plain agent: a session's ``send()`` / ``stream()``, or ``generate()``.

    A `Run` for `StreamTextResult` (a session runs it under its lock). It gets the memory
    provider's context, checks the window, then streams `stream_text()`'s parts.
    Usage is counted whether the turn succeeds or fails (billed failed attempts included).
    """

    def __init__(
        self,
        settings: TurnSettings,
        prompt: str | list[ContentPart],
        call_options: TextOptions,
        *,
        history: SessionHistoryBuffer | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        on_usage: Callable[[ModelUsage], None] | None = None,
        check_open: Callable[[], None] | None = None,
    ) -> None:
        self._settings = settings
        self._prompt = prompt
        self._call_options = call_options
        self._history = history
        self._session_id = session_id
        self._user_id = user_id
        self._on_usage = on_usage
        self._check_open = check_open
        self._result: GenerateTextResult | None = None
        self._usage = ModelUsage.zero()

    async def parts(self) -> AsyncIterator[StreamPart]:
        """The turn's parts; raises its failure (after counting its usage)."""
        if self._check_open is not None:
            self._check_open()
        async with closing_stream(self._run()) as parts:
            async for part in parts:
                yield part

    async def run(self) -> GenerateTextResult:
        """Run the turn to its end and return its result (raises its failure)."""
        async with closing_stream(self.parts()) as parts:
            async for _ in parts:
                pass
        return self.result()

    async def _run(self) -> AsyncIterator[StreamPart]:
        settings = self._settings
        # Begun before the model runs, so a clear() or reseed() during the turn discards it.
        # Under the session's lease, on the store's current history (DESIGN.md §5.21).
        writer = await self._history.start_turn() if self._history is not None else None
        user = Message.user(self._prompt)
        kept = False
        try:
            options = await self._request_options(user.text)
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

    async def _request_options(self, text: str) -> TextOptions:
        """`stream_text()`'s options: the agent's, the call's, the history and memory context."""
        settings = self._settings
        earlier = self._history.prompt_messages() if self._history is not None else []
        context = await fetch_memory_context(
            settings.memory_provider,
            text,
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
        return options

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
