"""`MetapromptExecutor`: the metaprompts a turn's end triggers.

Spec: Metaprompts; reference §1.6, trap §5.8. At the end of a turn that ended without error, the
GMI asks it which of the persona's ``meta_prompts`` fire:

- ``event_based`` (``event_name``): the event is pending (`agentos.substrate.events`); running the
  metaprompt consumes it;
- ``turn_interval`` (``interval_turns`` N): a counter in working memory
  (``metaprompt_turn_counter_<id>``) fires on turns N+1, 2(N+1), ...;
- ``manual``: ``manual_trigger_<id>`` is truthy in working memory; the flag is removed.

Those that fire run in the background, so the turn ends without waiting for them and the next turn
never waits either; `wait_idle()` waits for them and `aclose()` (the GMI's shutdown) cancels them.
The GMI's state is never touched, so no later turn is refused (the reference's REFLECTING state
was: its trap §5.8). Each metaprompt renders its ``{{variable}}`` template, calls the persona's
model (the metaprompt's ``model_id`` / ``provider_id``, else the persona's, else the serving model)
once with temperature 0.3 and 512 output tokens unless it sets its own, asking for JSON (on the
local model at most `LOCAL_METAPROMPT_MAX_TOKENS`, held to a grammar: `_local_options`); that call
is checked and recorded by the GMI's spend budget as ``gmi.metaprompt`` and counted in neither the
turn's usage nor the usage ledger. Through a completion gateway it runs only on the provider and
model that served the turn (spec: Metaprompts and utility calls). The reply may update the mood (a
`GMIMood` only), the user's skill level, the task's complexity and working memory
(``newMemoryImprints``); no metaprompt changes a personality trait. A failure is recorded in the
reasoning trace and changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.json_reply import parse_json_object
from agentos.core.messages import Message
from agentos.llm.budget import BudgetedModel
from agentos.llm.local_grammar import fitted_object_schema
from agentos.llm.metering import MeteredModel
from agentos.llm.model import ChatModel, CompletionOptions, ModelRequest, TextDelta, closing_stream
from agentos.persona.definition import MetaPromptDefinition, PromptTemplate
from agentos.persona.metaprompt_templates import without_answer_format
from agentos.substrate.contexts import TASK_CONTEXT_KEY, USER_CONTEXT_KEY
from agentos.substrate.events import GMIEventType
from agentos.substrate.mood import GMIMood
from agentos.substrate.sentiment_tracker import SENTIMENT_HISTORY_KEY
from agentos.substrate.trace import ReasoningEntryType

if TYPE_CHECKING:
    from agentos.llm.budget import BudgetLike
    from agentos.llm.gateway import GatewayProviderManager
    from agentos.substrate.state import GMIState

__all__ = [
    "DEFAULT_METAPROMPT_MAX_TOKENS",
    "DEFAULT_METAPROMPT_TEMPERATURE",
    "LOCAL_METAPROMPT_MAX_TOKENS",
    "METAPROMPT_CALL",
    "MetapromptExecutor",
    "render_template",
]

DEFAULT_METAPROMPT_TEMPERATURE = 0.3
DEFAULT_METAPROMPT_MAX_TOKENS = 512
METAPROMPT_CALL = "gmi.metaprompt"
"""The call name a spend budget sees for a metaprompt."""
_EVIDENCE_CHARS = 4000
_VARIABLE = re.compile(r"\{\{\s*(\w+)\s*\}\}")


LOCAL_METAPROMPT_MAX_TOKENS = 160
"""The output cap of a metaprompt served by the local model (issue 11, item 13)."""
_MOOD_KEY = "updatedGmiMood"


def _local_options(
    options: CompletionOptions, schema: Mapping[str, Any] | None
) -> CompletionOptions:
    """A metaprompt's options on the local model: a short answer that is always whole JSON.

    A small CPU model writing 512 free tokens takes minutes and rarely closes its object. Here
    the cap is `LOCAL_METAPROMPT_MAX_TOKENS` (or the metaprompt's own, if lower), and the
    metaprompt's ``output_schema`` becomes a grammar (`fitted_object_schema`): its required
    fields plus the mood, strings bounded so that every answer fits the cap. The grammar gives the
    answer's shape, so no schema message is added to the prompt and a preset's own answer-format
    lines are left out (`without_answer_format`). A schema that cannot be fitted leaves the
    reply to the JSON-object grammar of ``json_mode`` and the template as it is.
    """
    max_tokens = min(options.max_tokens or LOCAL_METAPROMPT_MAX_TOKENS, LOCAL_METAPROMPT_MAX_TOKENS)
    fitted = None
    if schema is not None:
        with contextlib.suppress(ValueError):
            fitted = fitted_object_schema(schema, max_tokens=max_tokens, require=(_MOOD_KEY,))
    return replace(
        options,
        max_tokens=max_tokens,
        response_schema=fitted,
        schema_prompt_given=fitted is not None,
    )


def render_template(template: str, variables: Mapping[str, str]) -> str:
    """``template`` with each ``{{name}}`` replaced; an unknown name is left as it is."""
    return _VARIABLE.sub(lambda m: variables.get(m.group(1), m.group(0)), template)


def _pick(reply: Mapping[str, Any], camel: str, snake: str) -> Any:
    return reply[camel] if camel in reply else reply.get(snake)


async def _fired(state: GMIState) -> list[MetaPromptDefinition]:
    """The persona's metaprompts whose triggers fire now (counters and flags updated)."""
    fired: list[MetaPromptDefinition] = []
    memory = state.working_memory
    for metaprompt in state.persona.meta_prompts or []:
        trigger = metaprompt.trigger
        if trigger is None:
            continue
        if trigger.type == "event_based":
            if trigger.event_name and state.events.consume(trigger.event_name):
                fired.append(metaprompt)
        elif trigger.type == "turn_interval":
            key = f"metaprompt_turn_counter_{metaprompt.id}"
            counter = int(await memory.get(key, 0) or 0)
            if counter >= (trigger.interval_turns or 1):
                fired.append(metaprompt)
                counter = 0
            else:
                counter += 1
            await memory.set(key, counter)
        elif trigger.type == "manual":
            key = f"manual_trigger_{metaprompt.id}"
            if await memory.get(key):
                await memory.delete(key)
                fired.append(metaprompt)
    return fired


class MetapromptExecutor:
    """Checks a persona's metaprompt triggers after each turn and runs those that fire."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    async def check_and_trigger(
        self,
        state: GMIState,
        turn_id: str,
        *,
        provider_manager: GatewayProviderManager,
        budget: BudgetLike | None = None,
    ) -> None:
        """Start the metaprompts whose triggers fire after turn ``turn_id``.

        Each runs on the model ``provider_manager`` serves (see `MetapromptRunner`), checked
        against and recorded in ``budget`` as `METAPROMPT_CALL`.
        """
        for metaprompt in await _fired(state):
            state.record(
                ReasoningEntryType.SELF_REFLECTION_TRIGGERED,
                f"metaprompt {metaprompt.id} triggered",
                {"metaprompt_id": metaprompt.id},
                turn_id,
            )
            try:
                model = self._model_for(state, metaprompt, provider_manager, budget)
            except GMIError as exc:
                state.record(
                    ReasoningEntryType.SELF_REFLECTION_SKIPPED,
                    f"metaprompt {metaprompt.id} skipped: {exc.message}",
                    {"metaprompt_id": metaprompt.id, "code": str(exc.code)},
                    turn_id,
                )
                continue
            variables = await self._variables(state)
            task = asyncio.create_task(self._run(state, metaprompt, model, variables, turn_id))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def wait_idle(self) -> None:
        """Wait for every metaprompt still running."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        """Cancel the metaprompts still running and wait for them to end."""
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.wait_idle()

    @staticmethod
    def _model_for(
        state: GMIState,
        metaprompt: MetaPromptDefinition,
        provider_manager: GatewayProviderManager,
        budget: BudgetLike | None,
    ) -> ChatModel:
        persona = state.persona
        serving = provider_manager.serving_hop()
        if serving is None:
            raise GMIError("no model has served a turn yet", GMIErrorCode.LLM_PROVIDER_UNAVAILABLE)
        provider_id = metaprompt.provider_id or persona.default_provider_id or serving.provider_id
        model_id = metaprompt.model_id or persona.default_model_id or serving.model_id
        provider = provider_manager.get_provider(provider_id)
        model = provider.get_model(model_id) if provider is not None else None
        if model is None:
            raise GMIError(
                f"the persona's model {provider_id}:{model_id} did not serve the turn "
                f"({serving.provider_id}:{serving.model_id} did)",
                GMIErrorCode.LLM_PROVIDER_UNAVAILABLE,
                {"provider_id": provider_id, "model_id": model_id},
            )
        # The hop's model may be metered (ledger) and budgeted as a turn step; a metaprompt is
        # neither in the ledger nor a step, so it calls the model underneath.
        while isinstance(model, MeteredModel | BudgetedModel):
            model = model.inner
        return BudgetedModel(model, budget, call=METAPROMPT_CALL) if budget is not None else model

    @staticmethod
    async def _variables(state: GMIState) -> dict[str, str]:
        """The template variables, read when the metaprompt fires (reference §1.6)."""
        history = await state.working_memory.get(SENTIMENT_HISTORY_KEY) or {}
        trends = history.get("trends") or []
        messages = [
            {"role": m.role.value, "content": m.text} for m in state.history.messages()[-10:]
        ]
        # The recent entries only: the trace holds up to 500, and a deep copy of all of them
        # is what a turn would otherwise spend most of its time on.
        trace = state.trace.entries(last=50)
        errors = [e.message for e in trace if e.type is ReasoningEntryType.ERROR][-10:]
        confused = [e for e in state.events.events() if e.event_type is GMIEventType.USER_CONFUSED]
        keywords = list(confused[-1].metadata.trigger_keywords) if confused else []
        evidence = json.dumps(
            {
                "recent_messages": messages,
                "recent_trace": [{"type": e.type.value, "message": e.message} for e in trace[-20:]],
                "mood": state.mood.value,
                "user_context": state.user_context,
                "task_context": state.task_context,
            },
            default=str,
        )[:_EVIDENCE_CHARS]
        return {
            "current_mood": state.mood.value,
            "user_skill": str(state.user_context.get("skill_level") or "unknown"),
            "task_complexity": str(state.task_context.get("complexity") or "unknown"),
            "current_sentiment": str(state.user_context.get("current_sentiment") or "neutral"),
            "sentiment_score": str(trends[-1]["score"] if trends else 0.0),
            "consecutive_frustration": str(history.get("consecutive_frustration", 0)),
            "consecutive_confusion": str(history.get("consecutive_neutral", 0)),
            "consecutive_neutral": str(history.get("consecutive_neutral", 0)),
            "consecutive_satisfaction": str(history.get("consecutive_satisfaction", 0)),
            "recent_conversation": json.dumps(messages[-5:]),
            "recent_errors": json.dumps(errors),
            "confusion_keywords": ", ".join(keywords),
            "evidence": evidence,
        }

    async def _run(
        self,
        state: GMIState,
        metaprompt: MetaPromptDefinition,
        model: ChatModel,
        variables: Mapping[str, str],
        turn_id: str,
    ) -> None:
        template = metaprompt.prompt_template
        text = template.template if isinstance(template, PromptTemplate) else template
        options = CompletionOptions(
            temperature=(
                metaprompt.temperature
                if metaprompt.temperature is not None
                else DEFAULT_METAPROMPT_TEMPERATURE
            ),
            max_tokens=metaprompt.max_output_tokens or DEFAULT_METAPROMPT_MAX_TOKENS,
            json_mode=True,
        )
        if model.provider_id == "local":
            options = _local_options(options, metaprompt.output_schema)
            if options.response_schema is not None:
                text = without_answer_format(text)
        request = ModelRequest([Message.user(render_template(text, variables))], (), options)
        state.record(
            ReasoningEntryType.SELF_REFLECTION_START,
            f"metaprompt {metaprompt.id} calling {model.provider_id}:{model.model_id}",
            {"metaprompt_id": metaprompt.id},
            turn_id,
        )
        try:
            async with closing_stream(model.stream(request)) as chunks:
                reply = "".join([c.text async for c in chunks if isinstance(c, TextDelta)])
        except Exception as exc:
            state.record(
                ReasoningEntryType.ERROR,
                f"metaprompt {metaprompt.id} failed: {exc}",
                {"metaprompt_id": metaprompt.id},
                turn_id,
            )
            return
        parsed = parse_json_object(reply)
        if parsed is None:
            state.record(
                ReasoningEntryType.WARNING,
                f"metaprompt {metaprompt.id} answered no JSON object",
                {"metaprompt_id": metaprompt.id, "reply_preview": reply[:200]},
                turn_id,
            )
            return
        await self._apply(state, metaprompt, parsed, turn_id)

    @staticmethod
    async def _apply(
        state: GMIState, metaprompt: MetaPromptDefinition, reply: Mapping[str, Any], turn_id: str
    ) -> None:
        changes: dict[str, Any] = {}
        mood = _pick(reply, "updatedGmiMood", "updated_gmi_mood")
        if isinstance(mood, str):
            if mood.lower() in {m.value for m in GMIMood}:
                await state.set_mood(GMIMood(mood.lower()))
                changes["mood"] = mood.lower()
            else:
                state.record(
                    ReasoningEntryType.WARNING,
                    f"metaprompt {metaprompt.id} named no mood ({mood!r}); the mood is kept",
                    {"metaprompt_id": metaprompt.id},
                    turn_id,
                )
        skill = _pick(reply, "updatedUserSkillLevel", "updated_user_skill_level")
        if isinstance(skill, str) and skill:
            state.user_context["skill_level"] = skill
            await state.working_memory.set(USER_CONTEXT_KEY, state.user_context)
            changes["skill_level"] = skill
        complexity = _pick(reply, "updatedTaskComplexity", "updated_task_complexity")
        if isinstance(complexity, str) and complexity:
            state.task_context["complexity"] = complexity
            await state.working_memory.set(TASK_CONTEXT_KEY, state.task_context)
            changes["complexity"] = complexity
        imprints = _pick(reply, "newMemoryImprints", "new_memory_imprints")
        for imprint in imprints if isinstance(imprints, list) else []:
            if isinstance(imprint, Mapping) and isinstance(imprint.get("key"), str):
                await state.working_memory.set(imprint["key"], imprint.get("value"))
                changes.setdefault("imprints", []).append(imprint["key"])
        rationale = _pick(reply, "adjustmentRationale", "adjustment_rationale")
        state.record(
            ReasoningEntryType.STATE_CHANGE,
            f"metaprompt {metaprompt.id}: {rationale or 'no rationale given'}",
            {"metaprompt_id": metaprompt.id, "changes": changes},
            turn_id,
        )
        state.record(
            ReasoningEntryType.SELF_REFLECTION_COMPLETE,
            f"metaprompt {metaprompt.id} done",
            {"metaprompt_id": metaprompt.id},
            turn_id,
        )
