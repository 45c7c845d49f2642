"""A session turn that fails at a chosen point: killed (a child process) or stopped in-process.

`build_agent()` makes a `gmi()` agent over a store whose model and tool call ``fail`` at the
chosen point of the second turn (`TURN_TWO`: one tool round of two calls, then an answer). Run as
a script (``python crash_turn.py DB POINT``) it plays the first turn, then the second, and
SIGKILLs itself at ``POINT``: a point of `MODEL_POINTS` in the model or a tool, a point of
`WRITE_POINTS` inside the Nth store transaction of the turn (after its statements ran, before
its COMMIT). The crash-recovery tests compare what the store holds after each kill with what the
same failure leaves in-process (`IN_PROCESS`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentos.api.gmi_agent import gmi
from agentos.core.messages import Message, Role, ToolCall
from agentos.llm.model import CompletionOptions, ModelChunk, ModelRequest, ToolDefinition
from agentos.storage import Database, SessionStore, SQLiteSessionStore, open_database
from agentos.testing import ScriptedModel, ScriptStep
from agentos.tools.tool import Tool, tool

__all__ = [
    "IN_PROCESS",
    "KILL_POINTS",
    "TURN_ONE",
    "TURN_THREE",
    "TURN_TWO",
    "build_agent",
]

TURN_ONE = "Hello there."
TURN_TWO = "Look up a and b."
TURN_THREE = "And now?"

MODEL_POINTS = (
    "before_call_0",
    "mid_stream_0",
    "in_tool_a",
    "in_tool_b",
    "before_call_1",
    "mid_stream_1",
)
"""Points in the second turn's model calls (0: the tool round's, 1: the answer's) and tools."""

WRITE_POINTS = tuple(f"write_{n}" for n in range(1, 7))
"""Inside the turn's Nth transaction: 1 takes the lease, 2 stores the input with the first
step, 3 and 4 the two tool results, 5 the answer step, 6 releases the lease."""

KILL_POINTS = MODEL_POINTS + WRITE_POINTS

IN_PROCESS = {
    **{point: point for point in MODEL_POINTS},
    # A round's calls start together (DESIGN §5.22): a kill inside b comes before a's result
    # is stored, as a stop inside a does.
    "in_tool_b": "in_tool_a",
    # A step is finished when its write committed: a kill inside that write is a failure
    # before the step finished.
    "write_1": "before_call_0",
    "write_2": "mid_stream_0",
    "write_3": "in_tool_a",
    "write_4": "in_tool_b",
    "write_5": "mid_stream_1",
    "write_6": "after_last_step",
}
"""The in-process failure each kill point equals."""

VALUES = {"a": "1", "b": "2"}

Fail = Callable[[], Awaitable[None]]


def _answer(
    messages: Sequence[Message], tools: Sequence[ToolDefinition], _: CompletionOptions
) -> ScriptStep:
    """The model's step, decided by the conversation (so a new process plays the same)."""
    last = messages[-1]
    if last.role is Role.TOOL:
        return ScriptStep(text="a is 1 and b is 2.")
    if last.text == TURN_TWO:
        calls = [ToolCall(f"call-{key}", "lookup", {"key": key}) for key in VALUES]
        return ScriptStep(text="Let me look both up.", tool_calls=calls)
    if last.text == TURN_THREE:
        return ScriptStep(text="Anything else?")
    return ScriptStep(text="Hi! How can I help?")


class FailingModel(ScriptedModel):
    """A `ScriptedModel` that calls ``fail`` at a model point of the second turn."""

    def __init__(self, point: str, fail: Fail) -> None:
        super().__init__(_answer)
        self._point = point
        self._fail = fail
        self._turn_two_calls = 0

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        texts = [m.text for m in request.messages if m.role is Role.USER]
        call = None
        if texts and texts[-1] == TURN_TWO:
            call = self._turn_two_calls
            self._turn_two_calls += 1
        return self._failing(request, call)

    async def _failing(self, request: ModelRequest, call: int | None) -> AsyncIterator[ModelChunk]:
        if call is not None and self._point == f"before_call_{call}":
            await self._fail()
        seen = 0
        async for chunk in super().stream(request):
            yield chunk
            seen += 1
            if call is not None and self._point == f"mid_stream_{call}" and seen == 2:
                await self._fail()


def _lookup_tool(point: str, fail: Fail) -> Tool:
    @tool
    async def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: the key
        """
        if point == f"in_tool_{key}":
            await fail()
        return VALUES[key]

    return lookup


def build_agent(store: SessionStore, point: str, fail: Fail) -> tuple[Any, FailingModel]:
    """A `gmi()` agent over ``store`` whose second turn calls ``fail`` at ``point``."""
    model = FailingModel(point, fail)
    agent = gmi(model=model, tools=[_lookup_tool(point, fail)], store=store, fallback_providers=[])
    return agent, model


class KillOnWrite(Database):
    """A `Database` that SIGKILLs its process inside its Nth transaction once armed."""

    countdown: int | None = None

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        with super().transaction() as connection:
            yield connection
            if self.countdown is not None:
                self.countdown -= 1
                if self.countdown == 0:
                    os.kill(os.getpid(), signal.SIGKILL)  # before this transaction's COMMIT


async def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


async def main(path: Path, point: str) -> None:
    database = open_database(path)
    database.__class__ = KillOnWrite
    assert isinstance(database, KillOnWrite)
    agent, _ = build_agent(SQLiteSessionStore(database), point, _die)
    session = agent.session("crash")
    await session.send(TURN_ONE)
    if point in WRITE_POINTS:
        database.countdown = int(point.removeprefix("write_"))
    await session.send(TURN_TWO)
    sys.exit(3)  # the point was never reached


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
