"""How strongly a new memory is encoded (reference §1.13 ``EncodingModel``).

A trace's initial strength, stability and importance come from three things: the mood it was
encoded in (PAD), the personality doing the encoding (HEXACO traits: an open mind attends to
novelty, a conscientious one to procedures, ...) and what the content is about (novel,
procedural, emotional, social, cooperative, ethical, contradicting). The model combines:

* a Yerkes-Dodson arousal boost: moderate arousal encodes best, calm and panic both worse;
* an emotional boost from the affect's intensity, weighted by emotionality;
* attention, raised by each content feature the personality cares about;
* mood congruence: content whose sentiment agrees with the mood sticks better;
* flashbulb memories: very intense moments are encoded twice as strongly and five times as
  stably.

Times are seconds (the reference's ``baseStabilityMs`` 3 600 000 is 3 600 s here).
`compute_encoding` is the one entry point; `detect_features` is the keyword feature detector the
reference calls ``keyword`` strategy.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from agentos.memory.trace import HOUR, PAD, EmotionalContext
from agentos.memory.traits import trait_level

__all__ = [
    "DEFAULT_ENCODING_CONFIG",
    "ContentFeatures",
    "EncodingConfig",
    "EncodingResult",
    "EncodingWeights",
    "FEATURE_KEYWORDS",
    "compute_encoding",
    "detect_features",
    "encoding_weights",
    "yerkes_dodson",
]


@dataclass(frozen=True, slots=True)
class EncodingConfig:
    """The constants of encoding (reference defaults).

    ``base_strength`` scales every strength; a trace whose emotional intensity exceeds
    ``flashbulb_threshold`` is a flashbulb memory, its strength multiplied by
    ``flashbulb_strength_multiplier`` (then capped at 1) and its stability by
    ``flashbulb_stability_multiplier``; ``base_stability`` (seconds) is the stability of a trace
    of strength 0, growing by ``6 * base_stability`` per unit of strength.
    """

    base_strength: float = 0.5
    flashbulb_threshold: float = 0.8
    flashbulb_strength_multiplier: float = 2.0
    flashbulb_stability_multiplier: float = 5.0
    base_stability: float = HOUR


DEFAULT_ENCODING_CONFIG = EncodingConfig()
"""The reference's encoding defaults."""


@dataclass(frozen=True, slots=True)
class EncodingWeights:
    """How much a personality attends to each kind of content (each in its own 0..1 range).

    From HEXACO traits ``t`` (missing → 0.5, clamped to [0, 1]): novelty ``0.3 + 0.7·openness``,
    procedural ``0.3 + 0.7·conscientiousness``, emotional ``0.2 + 0.8·emotionality``, social
    ``0.2 + 0.8·extraversion``, cooperative ``0.2 + 0.8·agreeableness``, ethical
    ``0.2 + 0.8·honesty``.
    """

    novelty: float
    procedural: float
    emotional: float
    social: float
    cooperative: float
    ethical: float


def encoding_weights(traits: Mapping[str, float] | None) -> EncodingWeights:
    """The attention weights of a personality (see `EncodingWeights` for the formulas)."""
    return EncodingWeights(
        novelty=0.3 + 0.7 * trait_level(traits, "openness"),
        procedural=0.3 + 0.7 * trait_level(traits, "conscientiousness"),
        emotional=0.2 + 0.8 * trait_level(traits, "emotionality"),
        social=0.2 + 0.8 * trait_level(traits, "extraversion"),
        cooperative=0.2 + 0.8 * trait_level(traits, "agreeableness"),
        ethical=0.2 + 0.8 * trait_level(traits, "honesty"),
    )


@dataclass(frozen=True, slots=True)
class ContentFeatures:
    """What a piece of content is about, as encoding reads it.

    Each ``has_*`` flag raises attention by its weight; ``topic_relevance`` (0..1) raises it by
    ``0.15·topic_relevance``. The defaults describe content with no feature at all and the
    neutral relevance 0.5 the keyword detector always reports.
    """

    has_novelty: bool = False
    has_procedure: bool = False
    has_emotion: bool = False
    has_social_content: bool = False
    has_cooperation: bool = False
    has_ethical_content: bool = False
    has_contradiction: bool = False
    topic_relevance: float = 0.5


FEATURE_KEYWORDS: Mapping[str, tuple[str, ...]] = {
    # Something the speaker has not met before: novelty cues.
    "has_novelty": (
        "new",
        "novel",
        "first time",
        "never before",
        "discovered",
        "just learned",
        "surprising",
        "unexpected",
        "unusual",
        "breakthrough",
    ),
    # How to do something: instructions, steps, setup.
    "has_procedure": (
        "how to",
        "step",
        "steps",
        "instructions",
        "procedure",
        "install",
        "configure",
        "set up",
        "recipe",
        "workflow",
    ),
    # Named feelings.
    "has_emotion": (
        "happy",
        "sad",
        "angry",
        "afraid",
        "scared",
        "love",
        "hate",
        "excited",
        "worried",
        "anxious",
        "upset",
        "frustrated",
        "proud",
        "lonely",
        "feel",
        "feeling",
    ),
    # Other people in the speaker's life.
    "has_social_content": (
        "friend",
        "friends",
        "family",
        "mother",
        "father",
        "mom",
        "dad",
        "wife",
        "husband",
        "partner",
        "colleague",
        "coworker",
        "boss",
        "sister",
        "brother",
        "party",
    ),
    # Working with or helping others.
    "has_cooperation": (
        "help",
        "helped",
        "together",
        "collaborate",
        "cooperate",
        "teamwork",
        "share",
        "support",
        "agreed",
        "thank you",
    ),
    # Honesty, fairness and right and wrong.
    "has_ethical_content": (
        "honest",
        "lie",
        "lied",
        "fair",
        "unfair",
        "ethical",
        "moral",
        "cheat",
        "steal",
        "promise",
        "right thing",
    ),
    # The content revises something said before.
    "has_contradiction": (
        "actually",
        "no longer",
        "not anymore",
        "changed my mind",
        "instead",
        "correction",
        "i was wrong",
        "not true",
        "incorrect",
    ),
}
"""The keyword detector's cue lists, by `ContentFeatures` flag.

Small on purpose: each list holds a few common English words or phrases that rarely appear
without the feature. A cue matches case-insensitively as a whole word or phrase (``new`` matches
"a new job", not "renewal"); the spaces of a phrase match any run of whitespace.
"""


def _cue_pattern(cues: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = (r"\s+".join(re.escape(word) for word in cue.split()) for cue in cues)
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.IGNORECASE)


_CUE_PATTERNS: dict[str, re.Pattern[str]] = {
    flag: _cue_pattern(cues) for flag, cues in FEATURE_KEYWORDS.items()
}


def detect_features(text: str) -> ContentFeatures:
    """The features of ``text`` by keyword (`FEATURE_KEYWORDS`); topic relevance is 0.5.

    A keyword detector cannot judge relevance to the conversation's topic, so it reports the
    neutral 0.5, as the reference does.
    """
    flags = {flag: pattern.search(text) is not None for flag, pattern in _CUE_PATTERNS.items()}
    return ContentFeatures(
        has_novelty=flags["has_novelty"],
        has_procedure=flags["has_procedure"],
        has_emotion=flags["has_emotion"],
        has_social_content=flags["has_social_content"],
        has_cooperation=flags["has_cooperation"],
        has_ethical_content=flags["has_ethical_content"],
        has_contradiction=flags["has_contradiction"],
        topic_relevance=0.5,
    )


def yerkes_dodson(arousal01: float) -> float:
    """The arousal boost ``max(0.3, 1 - 4·(a - 0.5)²)`` of arousal ``a`` in 0..1.

    An inverted U: 1.0 at moderate arousal (0.5), falling to the floor 0.3 at 0 and at 1.
    """
    return max(0.3, 1.0 - 4.0 * (arousal01 - 0.5) ** 2)


@dataclass(frozen=True, slots=True)
class EncodingResult:
    """A new trace's initial numbers.

    ``strength`` (0..1) is the trace's ``encoding_strength``, ``stability`` its stability in
    seconds, ``importance`` (0..1) its importance; ``flashbulb`` says the moment was intense
    enough for a flashbulb memory; ``attention`` (0.5..1) is the attention the content drew;
    ``emotional_context`` is the affect to store on the trace.
    """

    strength: float
    stability: float
    importance: float
    flashbulb: bool
    attention: float
    emotional_context: EmotionalContext


def _unit(value: float) -> float:
    # PAD and sentiment values live in -1..1; a value outside (or NaN) is clamped (NaN to the
    # neutral 0) so strength stays in 0..1 and intensity in 0..1 whatever the caller passes.
    if math.isnan(value):
        return 0.0
    return min(1.0, max(-1.0, value))


def compute_encoding(
    pad: PAD,
    traits: Mapping[str, float] | None,
    features: ContentFeatures,
    *,
    content_sentiment: float = 0.0,
    gmi_mood: str | None = None,
    config: EncodingConfig = DEFAULT_ENCODING_CONFIG,
) -> EncodingResult:
    """Encode content seen in mood ``pad`` by a personality with HEXACO ``traits``.

    With ``a = (pad.arousal + 1) / 2``, ``v = 0.7·content_sentiment + 0.3·pad.valence``,
    ``intensity = |v|·a`` and the weights ``w`` of `encoding_weights`::

        emotional_boost = 1 + intensity·w.emotional·0.5
        attention  = min(1, 0.5 + 0.15·w.novelty[novelty] + 0.15·w.procedural[procedure]
                            + 0.10·(w.emotional[emotion] + w.social[social]
                                    + w.cooperative[cooperation] + w.ethical[ethical])
                            + 0.15[contradiction] + 0.15·topic_relevance)
        congruence = 1 + max(0, pad.valence·content_sentiment)·w.emotional·0.3
        flashbulb  = intensity > flashbulb_threshold
        strength   = min(1, base_strength·yerkes_dodson(a)·emotional_boost·attention·congruence
                            ·(flashbulb_strength_multiplier if flashbulb))
        stability  = base_stability·(1 + 6·strength)·(flashbulb_stability_multiplier if flashbulb)
        importance = min(1, 0.6·strength + 0.4·attention)

    PAD components and ``content_sentiment`` are clamped to -1..1 first.
    """
    valence_in = _unit(pad.valence)
    sentiment = _unit(content_sentiment)
    affect = _encoding_affect(pad, sentiment, gmi_mood)
    weights = encoding_weights(traits)

    emotional_boost = 1.0 + affect.intensity * weights.emotional * 0.5
    attention = _attention(features, weights)
    congruence = 1.0 + max(0.0, valence_in * sentiment) * weights.emotional * 0.3
    flashbulb = affect.intensity > config.flashbulb_threshold

    factors = (affect.arousal, emotional_boost, attention, congruence)
    strength, stability = _strength_and_stability(config, factors, flashbulb)
    importance = min(1.0, 0.6 * strength + 0.4 * attention)

    return EncodingResult(
        strength=strength,
        stability=stability,
        importance=importance,
        flashbulb=flashbulb,
        attention=attention,
        emotional_context=affect,
    )


def _encoding_affect(pad: PAD, sentiment: float, gmi_mood: str | None) -> EmotionalContext:
    """The affect stored on the trace: ``v``, ``a``, the dominance and ``intensity = |v|·a``.

    ``sentiment`` is already clamped; ``v = 0.7·sentiment + 0.3·pad.valence`` and
    ``a = (pad.arousal + 1) / 2`` as in `compute_encoding`.
    """
    arousal01 = (_unit(pad.arousal) + 1.0) / 2.0
    valence = 0.7 * sentiment + 0.3 * _unit(pad.valence)
    return EmotionalContext(
        valence=valence,
        arousal=arousal01,
        dominance=_unit(pad.dominance),
        intensity=abs(valence) * arousal01,
        gmi_mood=gmi_mood,
    )


def _attention(features: ContentFeatures, weights: EncodingWeights) -> float:
    """The attention term of `compute_encoding`, summed in a fixed order (relevance first)."""
    relevance = features.topic_relevance
    relevance = 0.0 if math.isnan(relevance) else min(1.0, max(0.0, relevance))
    attention = 0.5 + 0.15 * relevance
    if features.has_novelty:
        attention += 0.15 * weights.novelty
    if features.has_procedure:
        attention += 0.15 * weights.procedural
    if features.has_emotion:
        attention += 0.10 * weights.emotional
    if features.has_social_content:
        attention += 0.10 * weights.social
    if features.has_cooperation:
        attention += 0.10 * weights.cooperative
    if features.has_ethical_content:
        attention += 0.10 * weights.ethical
    if features.has_contradiction:
        attention += 0.15
    return min(1.0, attention)


def _strength_and_stability(
    config: EncodingConfig, factors: tuple[float, float, float, float], flashbulb: bool
) -> tuple[float, float]:
    """`compute_encoding`'s strength and stability from ``(a, boost, attention, congruence)``.

    The factors multiply in the formula's order, so the values match it to the bit.
    """
    arousal01, emotional_boost, attention, congruence = factors
    raw = config.base_strength * yerkes_dodson(arousal01) * emotional_boost * attention
    raw *= congruence
    if flashbulb:
        raw *= config.flashbulb_strength_multiplier
    strength = min(1.0, raw)
    stability = config.base_stability * (1.0 + 6.0 * strength)
    if flashbulb:
        stability *= config.flashbulb_stability_multiplier
    return strength, stability
