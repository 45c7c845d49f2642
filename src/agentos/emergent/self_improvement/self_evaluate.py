"""``self_evaluate``: the agent judges its answers with the model, adjusts itself, and reports.

Spec: The self-modification tools; reference §1.30.

- ``evaluate`` asks the host's judge to score a response to a query for relevance, clarity,
  accuracy and helpfulness (each 0 to 1), at most ``max_evaluations_per_session`` times per
  session, and keeps the scores in the session's report. With ``auto_adjust`` it then sets the
  verbosity preference the scores call for (clarity below 0.5: ``low``; else helpfulness below
  0.5: ``high``). On a turn the learning checks refuse, it still scores and keeps the scores,
  applies no adjustment and names the reason in ``self_change_refused`` (spec).
- ``adjust`` changes ``verbosity`` (the user context's ``preferences.verbosity``, which the GMI
  renders at priority 90) or ``personality`` (through ``adapt_personality``'s rules and budget),
  after the learning checks. ``temperature`` is refused: the GMI sends no temperature of its own
  (DESIGN.md §5.3), so there is none to adjust.
- ``report`` gives the session's evaluation count, average scores and adjustments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.json_reply import parse_json_object
from agentos.emergent.self_improvement.adapt_personality import PersonalityAdapter
from agentos.emergent.self_improvement.options import SelfImprovementOptions
from agentos.emergent.self_improvement.refusals import learning_refusal
from agentos.emergent.self_improvement.session import session_key
from agentos.tools import Tool, ToolExecutionContext

__all__ = ["CRITERIA", "VERBOSITY_LEVELS", "SelfEvaluator", "self_evaluate_tool"]

TOOL_NAME = "self_evaluate"
CRITERIA = ("relevance", "clarity", "accuracy", "helpfulness")
VERBOSITY_LEVELS = ("low", "medium", "high")

_JUDGE_PROMPT = (
    "You are judging an assistant's response. Score it from 0 to 1 for relevance, clarity, "
    "accuracy and helpfulness. Answer with only a JSON object with those four keys.\n\n"
    "Query:\n{query}\n\nResponse:\n{response}"
)


@dataclass
class _Report:
    scores: list[dict[str, float]] = field(default_factory=list)
    adjustments: list[dict[str, Any]] = field(default_factory=list)


def _bad(message: str, option: str, code: GMIErrorCode = GMIErrorCode.VALIDATION_ERROR) -> GMIError:
    return GMIError(f"self_evaluate: {message}", code, {"option": option})


def _scores(reply: str) -> dict[str, float]:
    parsed = parse_json_object(reply) or {}
    scores: dict[str, float] = {}
    for name in CRITERIA:
        value = parsed.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise GMIError(
                f"self_evaluate: the judge's reply has no number for {name}: {reply[:200]!r}",
                GMIErrorCode.PARSING_ERROR,
                {"criterion": name},
            )
        scores[name] = min(1.0, max(0.0, float(value)))
    return scores


class SelfEvaluator:
    """Evaluations, adjustments and reports of one host, per session."""

    def __init__(self, options: SelfImprovementOptions, adapter: PersonalityAdapter) -> None:
        self._options = options
        self._adapter = adapter
        self._reports: dict[str, _Report] = {}

    async def evaluate(
        self, response: str, query: str, context: ToolExecutionContext | None
    ) -> dict[str, Any]:
        """Score ``response`` with the judge; keep it; auto-adjust unless refused (module doc)."""
        judge = self._options.judge
        if judge is None:
            raise _bad("no judge model is configured", "judge", GMIErrorCode.SERVICE_UNAVAILABLE)
        report = self._reports.setdefault(session_key(context), _Report())
        limit = self._options.max_evaluations_per_session
        if len(report.scores) >= limit:
            raise _bad(
                f"the session has used its {limit} evaluations",
                "max_evaluations_per_session",
                GMIErrorCode.RATE_LIMIT_EXCEEDED,
            )
        scores = _scores(await judge(_JUDGE_PROMPT.format(query=query, response=response)))
        report.scores.append(scores)
        denied = learning_refusal(TOOL_NAME, context)
        adjustment = None
        if denied is None and self._options.auto_adjust:
            level = _suggested_verbosity(scores)
            if level is not None and "verbosity" in self._options.adjustable_params:
                adjustment = self._set_verbosity(level, context, report)
        return {
            "scores": scores,
            "average": sum(scores.values()) / len(scores),
            "evaluations": len(report.scores),
            "adjustment": adjustment,
            "self_change_refused": denied.reason if denied is not None else None,
        }

    async def adjust(
        self,
        param: str,
        value: str | None,
        trait: str | None,
        delta: float | None,
        reasoning: str,
        context: ToolExecutionContext | None,
    ) -> dict[str, Any]:
        """Change ``verbosity`` or ``personality`` after the learning checks (module doc)."""
        if param == "temperature":
            raise _bad(
                "temperature is not adjustable: the GMI sends no temperature of its own", "param"
            )
        if param not in self._options.adjustable_params:
            allowed = ", ".join(self._options.adjustable_params) or "none"
            raise _bad(f"param {param!r} is not adjustable (adjustable: {allowed})", "param")
        if param == "verbosity" and value not in VERBOSITY_LEVELS:
            raise _bad(f"verbosity must be low, medium or high, got {value!r}", "value")
        if param == "personality" and (trait is None or delta is None):
            raise _bad("a personality adjustment needs trait and delta", "trait")
        report = self._reports.setdefault(session_key(context), _Report())
        if param == "personality":
            assert trait is not None
            assert delta is not None
            change = await self._adapter.adapt(TOOL_NAME, trait, delta, reasoning, context)
            report.adjustments.append({"param": "personality", **change})
            return {"param": "personality", **change}
        denied = learning_refusal(TOOL_NAME, context)
        if denied is not None:
            raise denied
        assert value is not None
        return self._set_verbosity(value, context, report)

    def report(self, context: ToolExecutionContext | None) -> dict[str, Any]:
        """The session's evaluations, average scores and adjustments."""
        report = self._reports.get(session_key(context), _Report())
        count = len(report.scores)
        averages = {
            name: (sum(s[name] for s in report.scores) / count if count else None)
            for name in CRITERIA
        }
        return {"evaluations": count, "averages": averages, "adjustments": report.adjustments}

    def _set_verbosity(
        self, level: str, context: ToolExecutionContext | None, report: _Report
    ) -> dict[str, Any]:
        gmi = self._adapter.calling_gmi(TOOL_NAME, context)
        user_context = dict(gmi.user_context)
        preferences = dict(user_context.get("preferences") or {})
        previous = preferences.get("verbosity")
        preferences["verbosity"] = level
        user_context["preferences"] = preferences
        gmi.user_context = user_context
        change = {"param": "verbosity", "previous_value": previous, "new_value": level}
        report.adjustments.append(change)
        return change


def _suggested_verbosity(scores: dict[str, float]) -> str | None:
    if scores["clarity"] < 0.5:
        return "low"
    if scores["helpfulness"] < 0.5:
        return "high"
    return None


def self_evaluate_tool(evaluator: SelfEvaluator) -> Tool:
    """The ``self_evaluate`` tool over ``evaluator``."""

    async def self_evaluate(
        action: Literal["evaluate", "adjust", "report"],
        response: str | None = None,
        query: str | None = None,
        param: str | None = None,
        value: str | None = None,
        trait: str | None = None,
        delta: float | None = None,
        reasoning: str = "self-evaluation",
        context: ToolExecutionContext | None = None,
    ) -> dict[str, Any]:
        """Evaluate your last response, adjust your verbosity or personality, or report.

        Args:
            action: evaluate, adjust or report.
            response: the response to evaluate.
            query: the user's query it answered.
            param: what to adjust: verbosity or personality.
            value: the verbosity level: low, medium or high.
            trait: the personality trait to adjust.
            delta: the personality change.
            reasoning: why the adjustment helps.
            context: the call's context (the host fills it; the model does not see it).
        """
        if action == "report":
            return evaluator.report(context)
        if action == "evaluate":
            if not response or query is None:
                raise _bad("evaluate needs response and query", "response")
            return await evaluator.evaluate(response, query, context)
        if not param:
            raise _bad("adjust needs param", "param")
        return await evaluator.adjust(param, value, trait, delta, reasoning, context)

    return Tool.from_function(self_evaluate)
