"""`StreamTextResult`: a generation you read as it happens.

Iterate `text_stream` for the text or `full_stream` for typed parts (one of them, once); or
just ``await`` `text`, `usage`, `finish_reason` or `result`, which run the stream to its end
when nobody reads it. Stopping a stream early (``break``, ``aclose()``) aborts the model call;
`text`, `finish_reason` and `result` then raise `GMIError` with code ``ABORTED``, while `usage`
gives what the generation used: the provider bills the tokens it generated, so a step stopped
mid-way counts with an estimate, marked ``estimated`` (DESIGN §5.19). A stream that was taken
but is neither read to its end nor closed leaves the awaitables waiting: ``break`` closes an
``async for`` stream only once nothing else holds it, so call ``aclose()`` (or read it inside
``contextlib.aclosing``) when you keep a reference. A call made with ``response_schema`` also
offers `partial_object_stream`, the object so far as its JSON streams (DESIGN §5.23).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, Protocol, TypeVar

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.usage import ModelUsage
from agentos.llm.model import FinishReason, closing_stream

from .partial_object import partial_objects, schema_missing
from .results import ErrorPart, FinishPart, GenerateTextResult, StreamPart, TextDeltaPart
from .structured import ResponseSchema

__all__ = ["Run", "StreamTextResult"]

T = TypeVar("T")


class Run(Protocol):
    """A generation a `StreamTextResult` reads: `TextRun`, or a GMI session's turn."""

    def parts(self) -> AsyncIterator[StreamPart]:
        """The parts, without the closing `FinishPart`; raises the generation's failure."""
        ...

    def result(self) -> GenerateTextResult:
        """The finished generation's result."""
        ...

    def usage(self) -> ModelUsage:
        """The usage so far (also after a failure)."""
        ...


class StreamTextResult:
    """The streaming result of `stream_text()` and of an agent's ``stream()``.

    ``response_schema`` is the call's, when it asked for a structured answer.
    """

    def __init__(self, run: Run, response_schema: ResponseSchema | None = None) -> None:
        self._run = run
        self._schema = response_schema
        self._claimed = False
        self._done: asyncio.Event | None = None
        self._result: GenerateTextResult | None = None
        self._error: BaseException | None = None
        self._stopped_usage: ModelUsage | None = None

    @property
    def full_stream(self) -> AsyncGenerator[StreamPart, None]:
        """Every part: text deltas, tool calls and results, step ends, an error, the finish."""
        self._claim()
        return self._parts()

    @property
    def text_stream(self) -> AsyncGenerator[str, None]:
        """The reply's text deltas; raises the generation's error, if any, at the end."""
        self._claim()
        return self._texts()

    @property
    def partial_object_stream(self) -> AsyncGenerator[Any, None]:
        """The structured answer as it streams: each new snapshot, then the validated object.

        A pydantic model class gives model instances, a JSON schema dicts; the last snapshot is
        ``result.object``; the generation's error, if any, is raised at the end, as
        `text_stream` raises it (`agentos.api.partial_object` says more). Raises `GMIError`
        (``INVALID_STATE``, naming ``response_schema``) on a call made without a schema.
        """
        if self._schema is None:
            raise schema_missing()
        self._claim()
        return partial_objects(self._parts(), self._schema, self._final_object)

    def _final_object(self) -> Any:
        assert self._result is not None  # set before the FinishPart is yielded
        return self._result.object

    @property
    def text(self) -> Awaitable[str]:
        """The last step's text, once the generation has finished."""
        return self._after(lambda result: result.text)

    @property
    def usage(self) -> Awaitable[ModelUsage]:
        """The usage of every step, once the generation has finished.

        After the stream was stopped early, what it used up to then, a step stopped mid-way
        estimated (``usage.estimated``: DESIGN §5.19).
        """
        return self._usage()

    async def _usage(self) -> ModelUsage:
        try:
            return await self._after(lambda result: result.usage)
        except GMIError as error:
            if self._stopped_usage is None or error is not self._error:
                raise
            return self._stopped_usage

    @property
    def finish_reason(self) -> Awaitable[FinishReason]:
        """Why the last step ended, once the generation has finished."""
        return self._after(lambda result: result.finish_reason)

    @property
    def result(self) -> Awaitable[GenerateTextResult]:
        """The whole `GenerateTextResult`, once the generation has finished."""
        return self._after(lambda result: result)

    def _claim(self) -> None:
        if self._claimed:
            raise RuntimeError("a StreamTextResult's stream can be read only once")
        self._claimed = True
        self._done = asyncio.Event()

    async def _parts(self) -> AsyncGenerator[StreamPart, None]:
        assert self._done is not None
        finished = False
        try:
            async with closing_stream(self._run.parts()) as parts:
                async for part in parts:
                    yield part
            self._result = self._run.result()
            finished = True
            yield FinishPart(self._result.finish_reason, self._result.usage)
        except Exception as exc:
            self._error = exc
            finished = True
            yield ErrorPart(exc)
            yield FinishPart("error", self._run.usage())
        finally:
            if not finished and self._error is None:
                self._error = GMIError(
                    "the stream was stopped before the generation finished",
                    GMIErrorCode.ABORTED,
                )
                # Read after the run was closed: it has settled the step it stopped.
                self._stopped_usage = self._run.usage()
            self._done.set()

    async def _texts(self) -> AsyncGenerator[str, None]:
        async with closing_stream(self._parts()) as parts:
            async for part in parts:
                if type(part) is TextDeltaPart:
                    yield part.text
                elif type(part) is ErrorPart:
                    raise part.error

    async def _after(self, pick: Callable[[GenerateTextResult], T]) -> T:
        if not self._claimed:
            async with closing_stream(self.full_stream) as parts:
                async for _ in parts:
                    pass
        assert self._done is not None
        await self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return pick(self._result)
