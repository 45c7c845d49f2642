"""``runtime_turn``: the full runtime's overhead, `AgentOS.process_request` over a direct GMI turn.

Issue 13's bench line: "process_request overhead over a direct GMI turn <= 1.2x (same scripted
model, both on the in-memory store) ... as medians".

Candidate: an `agentos.runtime.AgentOS` made with ``create_agentos_config(environ={},
personas=[PERSONA], default_persona_id="bench", model=ScriptedModel(script), tools=[lookup],
utility_ai="statistical", conversation_store=InMemorySessionStore())``, one turn timed from the
``process_request({...})`` call to its last chunk read (the request is a dict, as a host sends
it, so its parsing is part of the turn). Baseline: a `GMI` built from the same
``base_gmi_config(runtime.config)`` (its own `ScriptedModel(script)`) and the same persona,
driven through ``process_turn_stream(GMITurnInput(...))`` with every chunk read and ``await
stream.output()``, by the smallest host that keeps a conversation "on the in-memory store" (the
issue's words, for both sides): a `SessionHistoryBuffer` over its own `InMemorySessionStore`,
read before the turn (the prompt's messages) and written after it (the input and the reply, one
turn under the session's lease), as the runtime does with its conversation. Building the
`GMITurnInput` is inside its timer, as it is inside the candidate's. The model, tool and replies
are `bench.turn_models`'s (shared with ``gmi_turn``).

Metrics, each the median microseconds of one turn:

- ``turn``: one model call that answers with text (target candidate / baseline <= 1.2).
- ``tool_turn``: one tool round: the first call asks for ``lookup(q="a")``, the GMI runs it, the
  second call answers with text (target <= 1.2).

Fairness decisions:

- **One session, a warm GMI.** Every candidate turn names the same session, so the runtime's
  `GMIManager` reuses the session's GMI (a new session per turn would build a GMI each time);
  setup's first turn builds it, outside any timer.
- **The same context on both sides, every turn.** Before each candidate turn, outside the
  timer, the session's stored conversation is reseeded to ``EARLIER`` (two earlier exchanges)
  through a `SessionHistoryBuffer` handle of the bench's own over the runtime's store, and read
  back through ``runtime.conversation()`` so the runtime's handle reloads it then rather than
  inside the turn. The baseline's own conversation is reseeded to the same ``EARLIER`` (untimed);
  it reads it back and passes it as ``TurnOptions(conversation_history_for_prompt=...)``, which
  is how the runtime hands its conversation to the GMI. Both GMIs' own histories (the turn's
  messages and trace entries the GMI records) are cleared outside the timer before every turn
  (``gmi.history.clear_history()``), so neither grows over the run. Setup checks that both
  models received the same messages (roles and text) on each kind of turn, and the same replies
  came back.
- **What the candidate does that the baseline does not** is exactly the runtime's overhead:
  the request's checks, the persona and the session's GMI looked up, the session's owner
  checked, the conversation bounded by the history window, the turn's options, the chunk
  transformer and the FINAL_RESPONSE. Storing the conversation (one read, the input and the
  reply written under the lease) is on both sides; the notes also give the figure against the
  GMI turn alone, without a store, for comparison.
- **One loop, many turns per run.** One `asyncio.Runner` serves both sides; each run times
  ``TURNS_PER_RUN`` turns of each kind one by one and reports their median; setup plays
  ``WARMUP_TURNS`` of each kind on both sides. Before every run a full garbage collection
  runs and both models' request logs are emptied (a `ScriptedModel` keeps every request).
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import statistics
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, ClassVar

from agentos.core.messages import Message
from agentos.llm.model import CompletionOptions, ToolDefinition
from agentos.persona import PersonaDefinition
from agentos.runtime import AgentOS, FinalResponseChunk
from agentos.runtime.config import create_agentos_config
from agentos.runtime.services import base_gmi_config
from agentos.storage import InMemorySessionStore
from agentos.storage.session_history import SessionHistoryBuffer
from agentos.substrate import GMI, GMITurnInput
from agentos.substrate.chunks import GMIOutput
from agentos.substrate.turn_options import TurnOptions
from agentos.testing import ScriptedModel, ScriptStep
from bench.registry import Benchmark, Metric, Sample, register
from bench.turn_models import LOOKUP_TOOL, REPLY, SYSTEM, TEXT_PROMPT, TOOL_PROMPT, TOOL_REPLY
from bench.turn_models import script as reply_script

__all__ = ["RuntimeTurn"]

TURNS_PER_RUN = 25
WARMUP_TURNS = 50
USER_ID = "bench-user"
SESSION_ID = "bench-session"
PERSONA = PersonaDefinition(id="bench", name="Bench", base_system_prompt=SYSTEM)
EARLIER: tuple[Message, ...] = (
    Message.user("What is on today?"),
    Message.assistant("Two meetings and a review."),
    Message.user("When is the review?"),
    Message.assistant("At three."),
)
"""The conversation every turn of both sides sees before its own input."""


class _Recorder:
    """`bench.turn_models.script`, keeping the last request's messages (roles and text)."""

    def __init__(self) -> None:
        self.last: list[tuple[str, str | None]] = []

    def __call__(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDefinition],
        options: CompletionOptions,
    ) -> ScriptStep:
        self.last = [(str(m.role), m.text) for m in messages]
        return reply_script(messages, tools, options)


class RuntimeTurn(Benchmark):
    """Microseconds per turn (text, one tool round): `AgentOS.process_request` vs a GMI turn."""

    name: ClassVar[str] = "runtime_turn"
    description: ClassVar[str] = (
        "AgentOS.process_request on a warm session vs GMI.process_turn_stream with the same "
        "conversation, ScriptedModel, in-memory store, zero latency, "
        f"median of {TURNS_PER_RUN} turns per run"
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("turn", "us", "lower", tolerance=1.2),
        Metric("tool_turn", "us", "lower", tolerance=1.2),
    )

    def __init__(self) -> None:
        self._loop: asyncio.Runner | None = None
        self._runtime: AgentOS | None = None
        self._runtime_gmi: GMI | None = None
        self._gmi: GMI | None = None
        self._store = InMemorySessionStore()
        self._handle = SessionHistoryBuffer(SESSION_ID, self._store)
        self._direct = SessionHistoryBuffer(SESSION_ID, InMemorySessionStore())
        """The baseline's conversation: its own buffer over its own in-memory store."""
        self._models: list[ScriptedModel] = []
        self._recorders = (_Recorder(), _Recorder())
        self._turns = 0
        self._medians: dict[str, list[float]] = {}

    def setup(self) -> None:
        self._loop = asyncio.Runner()
        self._loop.run(self._build())
        self._loop.run(self._check())
        for _ in range(WARMUP_TURNS):
            for turn in (self._candidate_turn, self._baseline_turn):
                self._loop.run(turn(TEXT_PROMPT))
                self._loop.run(turn(TOOL_PROMPT))

    def teardown(self) -> None:
        if self._loop is None:
            return
        if self._gmi is not None:
            self._loop.run(self._gmi.shutdown())
        if self._runtime is not None:
            self._loop.run(self._runtime.shutdown())
        self._loop.close()
        self._loop = None

    def settle(self) -> None:
        for model in self._models:
            model.requests.clear()
        gc.collect()

    def run_candidate(self) -> Sample:
        return self._measure("candidate", self._candidate_turn)

    def run_baseline(self) -> Sample:
        return self._measure("baseline", self._baseline_turn)

    def settings(self) -> dict[str, object]:
        return {
            "system": SYSTEM,
            "text_prompt": TEXT_PROMPT,
            "tool_prompt": TOOL_PROMPT,
            "reply": REPLY,
            "tool_reply": TOOL_REPLY,
            "earlier_messages": len(EARLIER),
            "turns_per_run": TURNS_PER_RUN,
            "warmup_turns_per_kind": WARMUP_TURNS,
            "candidate": "AgentOS.process_request({user_id, session_id, text_input}) on one warm "
            "session, every chunk read; conversation reseeded to the earlier messages and the "
            "GMI's history cleared outside the timer",
            "baseline": "GMI(base_gmi_config(runtime.config), own ScriptedModel)"
            ".process_turn_stream(GMITurnInput(options=TurnOptions("
            "conversation_history_for_prompt=earlier))), every chunk read, await "
            "stream.output(); earlier read from, and the input and reply written to, its own "
            "SessionHistoryBuffer over an InMemorySessionStore (start_turn, add, commit); "
            "conversation reseeded and GMI history cleared outside the timer",
            "store": "InMemorySessionStore",
            "event_loop": "one asyncio.Runner for both sides",
        }

    def notes(self) -> list[str]:
        notes = []
        for metric in self.metrics:
            candidate = self._medians.get(f"candidate {metric.name}")
            baseline = self._medians.get(f"baseline {metric.name}")
            if not candidate or not baseline:
                continue
            ours, theirs = statistics.median(candidate), statistics.median(baseline)
            notes.append(
                f"{metric.name}: process_request {ours:.4g} us, direct GMI turn on the store "
                f"{theirs:.4g} us, the runtime's overhead {ours - theirs:.4g} us per turn"
            )
            bare = self._medians.get(f"bare {metric.name}")
            if bare:
                alone = statistics.median(bare)
                notes.append(
                    f"{metric.name}: the GMI turn alone (no store) {alone:.4g} us: "
                    f"process_request / it = {ours / alone:.3f}"
                )
        return notes

    # -- the two sides ---------------------------------------------------------------------------

    async def _build(self) -> None:
        candidate_model = ScriptedModel(self._recorders[0])
        config = create_agentos_config(
            environ={},
            personas=[PERSONA],
            default_persona_id=PERSONA.id,
            model=candidate_model,
            tools=[LOOKUP_TOOL],
            utility_ai="statistical",
            conversation_store=self._store,
        )
        runtime = AgentOS()
        await runtime.initialize(config)
        self._runtime = runtime
        await _drain(runtime, TEXT_PROMPT)  # builds the session's GMI, outside any timer
        gmi = runtime.gmi_manager.gmi_for_session(SESSION_ID)
        if not isinstance(gmi, GMI):
            raise RuntimeError(f"the runtime's session GMI is a {type(gmi).__name__}, not a GMI")
        self._runtime_gmi = gmi
        baseline_model = ScriptedModel(self._recorders[1])
        self._gmi = GMI("bench-direct")
        await self._gmi.initialize(
            PERSONA, dataclasses.replace(base_gmi_config(config), model=baseline_model)
        )
        self._models = [candidate_model, baseline_model]

    async def _reset_candidate(self) -> None:
        """The conversation back to ``EARLIER`` and the GMI's history emptied (untimed)."""
        assert self._runtime is not None
        assert self._runtime_gmi is not None
        await self._handle.reseed(EARLIER)
        await self._runtime.conversation(SESSION_ID, user_id=USER_ID)  # its handle reloads now
        self._runtime_gmi.history.clear_history()

    async def _candidate_turn(self, prompt: str) -> float:
        """One ``process_request`` turn's seconds, on the reset session."""
        assert self._runtime is not None
        await self._reset_candidate()
        runtime = self._runtime
        request = _request(prompt)
        started = time.perf_counter()
        async for _chunk in runtime.process_request(request):
            pass
        return time.perf_counter() - started

    async def _baseline_turn(self, prompt: str) -> float:
        """One direct GMI turn's seconds, its conversation read from and kept in its store."""
        conversation = self._direct
        await conversation.reseed(EARLIER)
        started = time.perf_counter()
        await self._direct_turn(prompt, conversation)
        return time.perf_counter() - started

    async def _bare_turn(self, prompt: str) -> float:
        """One direct GMI turn's seconds with ``EARLIER`` passed as it is: no store at all."""
        started = time.perf_counter()
        await self._direct_turn(prompt, None)
        return time.perf_counter() - started

    async def _direct_turn(
        self, prompt: str, conversation: SessionHistoryBuffer | None
    ) -> GMIOutput:
        """A GMI turn, every chunk read; with ``conversation``, read first and written after."""
        assert self._gmi is not None
        gmi = self._gmi
        gmi.history.clear_history()  # untimed in effect: a list emptied
        self._turns += 1
        writer = None
        earlier: Sequence[Message] = EARLIER
        if conversation is not None:
            writer = await conversation.start_turn(name=SESSION_ID)
            earlier = conversation.prompt_messages()
        stream = gmi.process_turn_stream(
            GMITurnInput(
                interaction_id=f"direct-turn-{self._turns}",
                user_id=USER_ID,
                content=prompt,
                session_id=SESSION_ID,
                options=TurnOptions(conversation_history_for_prompt=tuple(earlier)),
            )
        )
        async for _chunk in stream:
            pass
        output = await stream.output()
        if writer is not None:
            await writer.add([Message.user(prompt), Message.assistant(output.response_text or "")])
            await writer.commit()
        return output

    def _measure(self, side: str, turn: Callable[[str], Coroutine[Any, Any, float]]) -> Sample:
        assert self._loop is not None
        loop = self._loop
        text = [loop.run(turn(TEXT_PROMPT)) for _ in range(TURNS_PER_RUN)]
        tools = [loop.run(turn(TOOL_PROMPT)) for _ in range(TURNS_PER_RUN)]
        sample = {
            "turn": statistics.median(text) * 1e6,
            "tool_turn": statistics.median(tools) * 1e6,
        }
        for metric, value in sample.items():
            self._medians.setdefault(f"{side} {metric}", []).append(value)
        if side == "baseline":  # the GMI turn alone, for the notes only
            bare = {
                "turn": [loop.run(self._bare_turn(TEXT_PROMPT)) for _ in range(TURNS_PER_RUN)],
                "tool_turn": [loop.run(self._bare_turn(TOOL_PROMPT)) for _ in range(TURNS_PER_RUN)],
            }
            for metric, times in bare.items():
                self._medians.setdefault(f"bare {metric}", []).append(
                    statistics.median(times) * 1e6
                )
        return sample

    async def _check(self) -> None:
        """Both sides reply alike, and both models saw the same messages, on each kind of turn."""
        assert self._runtime is not None
        assert self._gmi is not None
        for prompt, reply in ((TEXT_PROMPT, REPLY), (TOOL_PROMPT, TOOL_REPLY)):
            await self._reset_candidate()
            chunks = [chunk async for chunk in self._runtime.process_request(_request(prompt))]
            final = chunks[-1]
            if not isinstance(final, FinalResponseChunk) or final.final_response_text != reply:
                raise RuntimeError(f"the runtime's turn ended with {final!r}")
            await self._direct.reseed(EARLIER)
            output = await self._direct_turn(prompt, self._direct)
            if output.error is not None or output.response_text != reply:
                raise RuntimeError(f"the GMI answered {output.response_text!r}: {output.error}")
            candidate, baseline = (recorder.last for recorder in self._recorders)
            if candidate != baseline:
                raise RuntimeError(
                    f"the models saw different prompts: runtime {candidate!r}, GMI {baseline!r}"
                )


def _request(prompt: str) -> dict[str, str]:
    return {"user_id": USER_ID, "session_id": SESSION_ID, "text_input": prompt}


async def _drain(runtime: AgentOS, prompt: str) -> None:
    async for _chunk in runtime.process_request(_request(prompt)):
        pass


register(RuntimeTurn, name=RuntimeTurn.name)
