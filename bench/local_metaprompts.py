"""``local_metaprompts``: the five sentiment metaprompts on the local model (issue 11, item 13).

Each run plays one turn per preset (``frustration_recovery``, ``confusion_clarification``,
``satisfaction_reinforcement``, ``error_recovery``, ``engagement_boost``), seeded with the run's
seed, on the embedded SmolLM2 model:

- candidate: a 'full' turn (``cognition`` 'full' narrowed to the one preset measured: cognitive
  memory with the default offline embedder, sentiment tracking, that preset) timed from
  ``session.send()`` until its metaprompt has finished (``gmi.wait_for_metaprompts()``);
- baseline: a 'light' turn (``cognition="light"``) on the same prompt and seed.

Metrics:

- ``turn_wall`` (ms): the median of the run's five turns; target: the 'full' turn at most 3x the
  'light' one;
- ``metaprompt_applied`` (share of the run's five metaprompts that answered JSON the executor
  parsed and applied: a ``STATE_CHANGE`` trace entry of that metaprompt setting a mood); its
  baseline is the target share, ``TARGET_SHARE`` (0.95). The notes give the share over every
  run, per preset, and the moods the metaprompts chose.

Fairness decisions:

- **The event is raised, not provoked.** Each 'full' turn emits its preset's event
  (``gmi.events.emit``) before ``send()``, so every preset fires once per turn whatever the
  prompt's sentiment; only the measured preset listens, so no second metaprompt runs in a turn.
  The prompts (``PROMPTS``) still read like what raises each event.
- **Same start every run, on both sides.** Before each turn (outside the timer) the session's
  history is cleared and the mood set back to neutral, so the metaprompt's prompt (recent
  conversation, mood) has the same size in every run and a mood it sets is a change.
- **Seeded.** Both sides' model is ``SamplingModel(LocalModel(), seed=...)`` (what ``agentos
  chat --seed`` uses): the turn and its metaprompt get the run's seed; a seeded call evaluates
  its whole prompt, so no KV-cache reuse favours either side. Run ``r`` uses seed ``SEED + r``
  on both sides.
- **One Llama instance, one loop.** Every agent shares the process's loaded model; one
  `asyncio.Runner` serves both sides; the model and the embedder are warmed in setup.
"""

from __future__ import annotations

import asyncio
import collections
import statistics
import time
from typing import Any, ClassVar

from agentos.api.gmi_agent import GmiAgent, gmi
from agentos.api.session import AgentSession
from agentos.cli.chat_session import SamplingModel, moods_set
from agentos.llm.local import LocalModel
from agentos.persona.metaprompt_presets import PRESET_NAMES, get_preset_metaprompt
from agentos.substrate.events import GMIEvent, GMIEventType
from agentos.substrate.mood import GMIMood
from agentos.substrate.trace import ReasoningEntryType
from bench.local_stream import settle_local_workers
from bench.registry import Benchmark, Metric, Sample, register
from bench.runner import print_progress

__all__ = ["LocalMetaprompts"]

SYSTEM = "You are a helpful assistant. Answer briefly."
MAX_TOKENS = 64
SEED = 100
TARGET_SHARE = 0.95
PROMPTS: dict[str, str] = {
    "frustration_recovery": "This is wrong again and I am annoyed. Just fix it.",
    "confusion_clarification": "I don't understand your last answer. What do you mean?",
    "satisfaction_reinforcement": "Great, that worked perfectly. Thanks a lot!",
    "error_recovery": "The lookup keeps failing. Can you try another way?",
    "engagement_boost": "ok",
}


def _event_type(preset: str) -> GMIEventType:
    trigger = get_preset_metaprompt(preset).trigger
    assert trigger is not None
    assert trigger.event_name is not None
    return GMIEventType(trigger.event_name)


class LocalMetaprompts(Benchmark):
    """'full' turn + its metaprompt vs a 'light' turn on SmolLM2; metaprompts that apply."""

    name: ClassVar[str] = "local_metaprompts"
    description: ClassVar[str] = (
        "gmi() session turn on the local model, 'full' (one sentiment preset, its metaprompt "
        f"awaited) vs 'light', {MAX_TOKENS}-token replies, one turn per preset per run"
    )
    metrics: ClassVar[tuple[Metric, ...]] = (
        Metric("turn_wall", "ms", "lower", tolerance=3.0),
        Metric("metaprompt_applied", "share", "higher", tolerance=1.0),
    )

    def __init__(self) -> None:
        self._runner: asyncio.Runner | None = None
        self._models: dict[str, SamplingModel] = {}
        self._agents: dict[str, GmiAgent] = {}
        self._sessions: dict[str, AgentSession] = {}
        self._runs = {"candidate": 0, "baseline": 0}
        self._applied: dict[str, list[bool]] = collections.defaultdict(list)
        self._moods: collections.Counter[str] = collections.Counter()
        self._failures: list[str] = []
        self._metaprompt_ms: list[float] = []
        self._reply_tokens: dict[str, list[int]] = {"full": [], "light": []}
        self._full_ms: list[float] = []
        self._light_ms: list[float] = []

    def setup(self) -> None:
        self._runner = asyncio.Runner()
        self._runner.run(LocalModel().load())
        for preset in PRESET_NAMES:
            self._build(preset, {"memory": True, "sentiment": True, "metaprompts": [preset]})
        self._build("light", "light")
        # Build every session's GMI (on its first turn) and warm the embedder and the model:
        # one short neutral turn each, which raises no event.
        for session in self._sessions.values():
            self._runner.run(session.send("Hello.", max_tokens=1))

    def _build(self, key: str, cognition: Any) -> None:
        model = SamplingModel(LocalModel(), seed=SEED)
        agent = gmi(model=model, instructions=SYSTEM, cognition=cognition, max_tokens=MAX_TOKENS)
        self._models[key] = model
        self._agents[key] = agent
        self._sessions[key] = agent.session(f"bench-{key}")

    def teardown(self) -> None:
        if self._runner is None:
            return
        for agent in self._agents.values():
            self._runner.run(agent.close())
        self._runner.close()
        self._runner = None

    def settle(self) -> None:
        settle_local_workers()

    def run_candidate(self) -> Sample:
        assert self._runner is not None
        seed = SEED + self._runs["candidate"]
        self._runs["candidate"] += 1
        results = [self._runner.run(self._full_turn(preset, seed)) for preset in PRESET_NAMES]
        self._full_ms.extend(ms for ms, _ in results)
        self._progress()
        return {
            "turn_wall": statistics.median(ms for ms, _ in results),
            "metaprompt_applied": sum(applied for _, applied in results) / len(results),
        }

    def run_baseline(self) -> Sample:
        assert self._runner is not None
        seed = SEED + self._runs["baseline"]
        self._runs["baseline"] += 1
        times = [self._runner.run(self._light_turn(preset, seed)) for preset in PRESET_NAMES]
        self._light_ms.extend(times)
        self._progress()
        return {"turn_wall": statistics.median(times), "metaprompt_applied": TARGET_SHARE}

    def _progress(self) -> None:
        """Running figures on stderr, so a run stopped early still says what it measured."""
        applied = [ok for runs in self._applied.values() for ok in runs]
        if not (self._full_ms and self._light_ms and applied):
            return
        full, light = statistics.median(self._full_ms), statistics.median(self._light_ms)
        print_progress(
            f"{self.name}: so far {sum(applied)}/{len(applied)} metaprompts applied; turns: "
            f"'full' median {full:.0f} ms over {len(self._full_ms)}, 'light' {light:.0f} ms "
            f"over {len(self._light_ms)}, ratio {full / light:.3f}"
        )

    async def _reset(self, key: str, seed: int) -> AgentSession:
        """Clear the session's history and mood, seed its model (all outside the timers)."""
        session = self._sessions[key]
        self._models[key].seed = seed
        await session.clear()
        if session.gmi is not None:
            await session.gmi.set_mood(GMIMood.NEUTRAL)
        return session

    async def _light_turn(self, preset: str, seed: int) -> float:
        session = await self._reset("light", seed)
        started = time.perf_counter()
        result = await session.send(PROMPTS[preset])
        ended = time.perf_counter()
        self._reply_tokens["light"].append(result.usage.completion_tokens or 0)
        return (ended - started) * 1000

    async def _full_turn(self, preset: str, seed: int) -> tuple[float, bool]:
        """One 'full' turn and its metaprompt: milliseconds, and whether it applied a mood."""
        session = await self._reset(preset, seed)
        if session.gmi is not None:
            event = GMIEvent(_event_type(preset), time.time(), "bench", "medium")
            session.gmi.events.emit(event)
        started = time.perf_counter()
        result = await session.send(PROMPTS[preset])
        sent = time.perf_counter()
        self._reply_tokens["full"].append(result.usage.completion_tokens or 0)
        found = session.gmi
        assert found is not None
        await found.wait_for_metaprompts()
        ended = time.perf_counter()
        self._metaprompt_ms.append((ended - sent) * 1000)
        applied = self._applied_mood(preset, found.trace.entries(last=40))
        self._applied[preset].append(applied is not None)
        if applied is not None:
            self._moods[applied] += 1
        return (ended - started) * 1000, applied is not None

    def _applied_mood(self, preset: str, entries: list[Any]) -> str | None:
        """The mood the turn's metaprompt set, ``None`` when it applied none (noted why)."""
        metaprompt_id = f"gmi_{preset}"
        moods = [mood for setter, mood in moods_set(entries) if setter == metaprompt_id]
        if moods:
            return moods[-1]
        problems = [
            e.message
            for e in entries
            if e.type in (ReasoningEntryType.WARNING, ReasoningEntryType.ERROR)
            and (e.details or {}).get("metaprompt_id") == metaprompt_id
        ]
        self._failures.append(f"{preset}: {problems[-1] if problems else 'no metaprompt ran'}")
        return None

    def settings(self) -> dict[str, object]:
        return {
            "model": "SamplingModel(LocalModel(), seed=SEED + run) (bundled SmolLM2)",
            "system": SYSTEM,
            "max_tokens": MAX_TOKENS,
            "prompts": PROMPTS,
            "candidate": "gmi(cognition={memory, sentiment, metaprompts: [preset]}) send() + "
            "wait_for_metaprompts(), the preset's event emitted before the turn",
            "baseline": "gmi(cognition='light') send(), same prompt and seed",
            "reset_before_each_turn": "session.clear(), mood set to neutral",
            "target_share": TARGET_SHARE,
            "settle": "bench.local_stream.settle_local_workers() before every run",
        }

    def notes(self) -> list[str]:
        total = [ok for runs in self._applied.values() for ok in runs]
        notes: list[str] = []
        if total:
            notes.append(
                f"metaprompts applied: {sum(total)}/{len(total)} "
                f"({sum(total) / len(total):.1%}); per preset: "
                + ", ".join(f"{p} {sum(r)}/{len(r)}" for p, r in self._applied.items())
            )
        if self._metaprompt_ms:
            notes.append(
                f"metaprompt alone (after send() returned): median "
                f"{statistics.median(self._metaprompt_ms):.4g} ms"
            )
        if self._reply_tokens["full"] and self._reply_tokens["light"]:
            notes.append(
                "reply tokens (median): 'full' "
                f"{statistics.median(self._reply_tokens['full']):g}, 'light' "
                f"{statistics.median(self._reply_tokens['light']):g} (of {MAX_TOKENS})"
            )
        if self._moods:
            notes.append(
                "moods set: " + ", ".join(f"{m} {n}" for m, n in self._moods.most_common())
            )
        notes.extend(f"not applied: {failure}" for failure in self._failures[:10])
        return notes


register(LocalMetaprompts, name=LocalMetaprompts.name)
