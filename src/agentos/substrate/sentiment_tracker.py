"""`SentimentTracker`: scores each user turn and raises events.

Spec: Sentiment scoring and events; reference §1.5, traps §5.1 and §5.18; `reference/sentiment.md`
for the two meanings of neutral. A GMI whose persona enables ``sentiment_tracking`` calls it
before the first model call of a turn whose latest message is the user's. It scores the message
with its utility AI (the lexicon's language is the user context's ``language``, else the
persona's ``default_language``, else the utility's default), sets the user context's
``current_sentiment`` to the polarity, and keeps `SENTIMENT_HISTORY_KEY` in working memory: the
last ``history_window`` (10) trends and three run counters. A score below the frustration
threshold extends the frustration run, one above the satisfaction threshold the satisfaction
run, anything between them the neutral run; each resets the other two.

Events, with the default `SentimentThresholds`:

- USER_FRUSTRATED: a score below -0.3 with an intensity above 0.6, or the 2nd turn in a row
  below -0.3; severity high from the 2nd turn of the run, else medium.
- USER_SATISFIED: a score above 0.3 with an intensity above 0.5, or the 3rd turn in a row above
  0.3; severity low.
- USER_CONFUSED: a confusion phrase, or a turn of neutral polarity (abs(score) <= 0.05) with
  more than two negative tokens; severity high from the 2nd turn of the neutral run, else medium.
- LOW_ENGAGEMENT: from the 4th turn in a row between the two thresholds, while the user messages
  among the last 5 history messages average under 50 characters; severity medium.
- ERROR_THRESHOLD_EXCEEDED: 2 or more ERROR entries among the last 10 reasoning-trace entries;
  severity high.

Confusion phrases match case-insensitively as whole words or phrases (DESIGN.md §5.14), so
"unclear" matches and "nuclear" does not; a curly apostrophe counts as a straight one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from agentos.core.messages import Role
from agentos.nlp import SentimentResult, StatisticalUtilityAI, UtilityAI
from agentos.persona.definition import SentimentTrackingConfig
from agentos.substrate.contexts import USER_CONTEXT_KEY
from agentos.substrate.events import EventSeverity, GMIEvent, GMIEventMetadata, GMIEventType
from agentos.substrate.trace import ReasoningEntryType

if TYPE_CHECKING:
    from agentos.substrate.state import GMIState

__all__ = [
    "CONFUSION_PHRASES",
    "SENTIMENT_HISTORY_KEY",
    "SentimentThresholds",
    "SentimentTracker",
    "matched_confusion_phrases",
]

SENTIMENT_HISTORY_KEY = "gmi_sentiment_history"
"""The working-memory key of the trends and run counters."""

CONFUSION_PHRASES: tuple[str, ...] = (
    "confused",
    "don't understand",
    "dont understand",
    "unclear",
    "what do you mean",
    "explain",
    "clarify",
    "huh",
    "??",
    "doesn't make sense",
    "doesnt make sense",
    "not sure",
)
"""The reference's confusion phrases."""

_PREVIEW_CHARS = 100

_Found = tuple[GMIEventType, EventSeverity, GMIEventMetadata]


def _phrase_pattern(phrase: str) -> str:
    # A word boundary only where the phrase itself begins or ends with a word character, so
    # "??" still matches in "what??" while "explain" does not match inside "explained".
    head = r"(?<!\w)" if phrase[0].isalnum() else ""
    tail = r"(?!\w)" if phrase[-1].isalnum() else ""
    return head + re.escape(phrase) + tail


_PHRASES = [(phrase, re.compile(_phrase_pattern(phrase))) for phrase in CONFUSION_PHRASES]


def matched_confusion_phrases(text: str) -> list[str]:
    """The confusion phrases ``text`` contains, in the list's order."""
    folded = text.lower().replace("\u2019", "'")
    return [phrase for phrase, pattern in _PHRASES if pattern.search(folded)]


@dataclass(frozen=True, slots=True)
class SentimentThresholds:
    """The numbers the events fire on (the persona's ``sentiment_tracking`` overrides four)."""

    frustration: float = -0.3
    satisfaction: float = 0.3
    frustration_intensity: float = 0.6
    satisfaction_intensity: float = 0.5
    consecutive_turns: int = 2
    """A frustration run this long fires; a satisfaction run one longer does."""
    low_engagement_turns: int = 4
    low_engagement_chars: float = 50.0
    confusion_negative_tokens: int = 2
    """USER_CONFUSED fires on a neutral turn with more negative tokens than this."""
    errors: int = 2
    error_window: int = 10
    history_window: int = 10

    def for_persona(self, config: SentimentTrackingConfig | None) -> SentimentThresholds:
        """These thresholds with the persona's own values laid over them."""
        if config is None:
            return self
        overrides: dict[str, Any] = {
            "frustration": config.frustration_threshold,
            "satisfaction": config.satisfaction_threshold,
            "consecutive_turns": config.consecutive_turns_for_trigger,
            "history_window": config.history_window,
        }
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


def _empty_history() -> dict[str, Any]:
    return {
        "trends": [],
        "consecutive_frustration": 0,
        "consecutive_neutral": 0,
        "consecutive_satisfaction": 0,
        "last_analyzed_turn_id": None,
    }


class SentimentTracker:
    """Scores user turns with a utility AI and raises the GMI's sentiment events."""

    def __init__(
        self, utility_ai: UtilityAI | None = None, thresholds: SentimentThresholds | None = None
    ) -> None:
        self.utility_ai: UtilityAI = utility_ai or StatisticalUtilityAI()
        self.thresholds = thresholds or SentimentThresholds()

    async def analyze_turn_sentiment(self, state: GMIState, turn_id: str, text: str) -> None:
        """Score ``text`` (turn ``turn_id``), update the history and context, raise events."""
        limits = self.thresholds.for_persona(state.persona.sentiment_tracking)
        language = state.user_context.get("language") or state.persona.default_language
        result = await self.utility_ai.analyze_sentiment(text, language=language)
        timestamp = state.clock.timestamp()

        state.user_context["current_sentiment"] = result.polarity
        await state.working_memory.set(USER_CONTEXT_KEY, state.user_context)

        history = await state.working_memory.get(SENTIMENT_HISTORY_KEY) or _empty_history()
        history["trends"] = [
            *history["trends"],
            {
                "turn_id": turn_id,
                "timestamp": timestamp,
                "score": result.score,
                "polarity": result.polarity,
                "intensity": result.intensity,
                "context": text[:_PREVIEW_CHARS],
            },
        ][-limits.history_window :]
        runs = ("consecutive_frustration", "consecutive_neutral", "consecutive_satisfaction")
        if result.score < limits.frustration:
            extended = runs[0]
        elif result.score > limits.satisfaction:
            extended = runs[2]
        else:
            extended = runs[1]
        for run in runs:
            history[run] = history[run] + 1 if run == extended else 0
        history["last_analyzed_turn_id"] = turn_id
        await state.working_memory.set(SENTIMENT_HISTORY_KEY, history)

        for event_type, severity, metadata in self._detect(state, text, result, history, limits):
            event = GMIEvent(event_type, timestamp, turn_id, severity, metadata)
            state.events.emit(event)
            state.record(
                ReasoningEntryType.DEBUG,
                f"event {event_type.value} ({severity})",
                {"event": event_type.value, "severity": severity},
                turn_id,
            )

    def _detect(
        self,
        state: GMIState,
        text: str,
        result: SentimentResult,
        history: dict[str, Any],
        limits: SentimentThresholds,
    ) -> list[_Found]:
        frustration = history["consecutive_frustration"]
        neutral = history["consecutive_neutral"]
        satisfaction = history["consecutive_satisfaction"]

        def metadata(run: int | None, **fields: Any) -> GMIEventMetadata:
            return GMIEventMetadata(
                sentiment_score=result.score,
                sentiment_polarity=result.polarity,
                sentiment_intensity=result.intensity,
                consecutive_turns=run,
                evidence_preview=text[:_PREVIEW_CHARS],
                **fields,
            )

        found: list[_Found] = []
        strong_negative = (
            result.score < limits.frustration and result.intensity > limits.frustration_intensity
        )
        if strong_negative or frustration >= limits.consecutive_turns:
            severity: EventSeverity = "high" if frustration >= 2 else "medium"
            found.append((GMIEventType.USER_FRUSTRATED, severity, metadata(frustration)))

        phrases = matched_confusion_phrases(text)
        muddled = (
            result.polarity == "neutral"
            and len(result.negative_tokens) > limits.confusion_negative_tokens
        )
        if phrases or muddled:
            severity = "high" if neutral >= 2 else "medium"
            trigger = "keyword" if phrases else "pattern"
            found.append(
                (
                    GMIEventType.USER_CONFUSED,
                    severity,
                    metadata(neutral, triggered_by=trigger, trigger_keywords=tuple(phrases)),
                )
            )

        strong_positive = (
            result.score > limits.satisfaction and result.intensity > limits.satisfaction_intensity
        )
        if strong_positive or satisfaction >= limits.consecutive_turns + 1:
            found.append((GMIEventType.USER_SATISFIED, "low", metadata(satisfaction)))
        return found + _pattern_events(state, neutral, limits, metadata)

    async def forget_turns(self, state: GMIState, turn_ids: Iterable[str]) -> None:
        """Blank the context of the trends of ``turn_ids`` (a history replace or clear)."""
        dropped = set(turn_ids)
        history = await state.working_memory.get(SENTIMENT_HISTORY_KEY)
        if not history:
            return
        for trend in history["trends"]:
            if trend["turn_id"] in dropped:
                trend["context"] = ""
        await state.working_memory.set(SENTIMENT_HISTORY_KEY, history)


def _recent_user_lengths(messages: Sequence[Any]) -> list[int]:
    return [len(m.text) for m in messages if m.role is Role.USER]


def _pattern_events(
    state: GMIState,
    neutral: int,
    limits: SentimentThresholds,
    metadata: Callable[..., GMIEventMetadata],
) -> list[_Found]:
    """ERROR_THRESHOLD_EXCEEDED and LOW_ENGAGEMENT, read from the trace and the history."""
    found: list[_Found] = []
    errors = sum(
        1
        for entry in state.trace.entries(last=limits.error_window)
        if entry.type is ReasoningEntryType.ERROR
    )
    if errors >= limits.errors:
        found.append(
            (
                GMIEventType.ERROR_THRESHOLD_EXCEEDED,
                "high",
                metadata(None, triggered_by="error", error_count=errors),
            )
        )
    if neutral >= limits.low_engagement_turns:
        lengths = _recent_user_lengths(state.history.messages()[-5:])
        if lengths and sum(lengths) / len(lengths) < limits.low_engagement_chars:
            found.append(
                (GMIEventType.LOW_ENGAGEMENT, "medium", metadata(neutral, triggered_by="pattern"))
            )
    return found
