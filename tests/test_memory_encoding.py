"""Encoding (reference §1.13): §3 memory-math cases 6 and 7, hand-derived cases, properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.memory.decay import is_prunable
from agentos.memory.encoding import (
    DEFAULT_ENCODING_CONFIG,
    ContentFeatures,
    EncodingConfig,
    compute_encoding,
    detect_features,
    encoding_weights,
    yerkes_dodson,
)
from agentos.memory.trace import HOUR, PAD, MemoryScope, MemoryTrace, MemoryType

NOW = 1_700_000_000.0
NEUTRAL = PAD(0.0, 0.0, 0.0)
ALL_FEATURES = ContentFeatures(
    has_novelty=True,
    has_procedure=True,
    has_emotion=True,
    has_social_content=True,
    has_cooperation=True,
    has_ethical_content=True,
    has_contradiction=True,
)
HEXACO = (
    "honesty",
    "emotionality",
    "extraversion",
    "agreeableness",
    "conscientiousness",
    "openness",
)


# --- §3 case 6: neutral mood, no traits, no features --------------------------------------------


def test_case6_neutral_encoding() -> None:
    result = compute_encoding(NEUTRAL, None, detect_features("the meeting room is on floor two"))
    assert result.strength == pytest.approx(0.2875, abs=1e-6)
    assert result.stability == pytest.approx(9_810.0, abs=1e-6)  # 9 810 000 ms
    assert result.importance == pytest.approx(0.4025, abs=1e-6)
    assert result.attention == pytest.approx(0.575, abs=1e-6)
    assert result.flashbulb is False
    ctx = result.emotional_context
    assert (ctx.valence, ctx.arousal, ctx.dominance, ctx.intensity) == (0.0, 0.5, 0.0, 0.0)
    assert ctx.gmi_mood is None


@pytest.mark.parametrize(
    ("arousal01", "boost"), [(0.0, 0.3), (0.5, 1.0), (0.3, 0.84), (0.7, 0.84), (1.0, 0.3)]
)
def test_case6_yerkes_dodson(arousal01: float, boost: float) -> None:
    assert yerkes_dodson(arousal01) == pytest.approx(boost, abs=1e-6)


def test_case6_neutral_memory_falls_below_pruning_after_4_77_hours() -> None:
    # 0.2875·exp(-t/9810) = 0.05  ⇔  t = 9810·ln(5.75) ≈ 17 160 s ≈ 4.77 h.
    result = compute_encoding(NEUTRAL, {}, ContentFeatures())
    crossing = result.stability * math.log(result.strength / 0.05)
    assert crossing == pytest.approx(9_810.0 * math.log(5.75), abs=1e-6)
    assert crossing / HOUR == pytest.approx(4.7665, abs=1e-4)
    trace = MemoryTrace(
        id="t",
        type=MemoryType.EPISODIC,
        scope=MemoryScope.USER,
        scope_id="u",
        content="x",
        created_at=NOW,
        encoding_strength=result.strength,
        stability=result.stability,
    )
    assert not is_prunable(trace, NOW + crossing - 1.0)
    assert is_prunable(trace, NOW + crossing + 1.0)


# --- §3 case 7: trait weights ------------------------------------------------------------------


def test_case7_weights_for_empty_traits() -> None:
    weights = encoding_weights({})
    assert weights.novelty == pytest.approx(0.65, abs=1e-6)
    assert weights.procedural == pytest.approx(0.65, abs=1e-6)
    assert weights.emotional == pytest.approx(0.6, abs=1e-6)
    assert weights.social == pytest.approx(0.6, abs=1e-6)
    assert weights.cooperative == pytest.approx(0.6, abs=1e-6)
    assert weights.ethical == pytest.approx(0.6, abs=1e-6)
    assert encoding_weights(None) == weights


def test_case7_traits_scale_and_clamp() -> None:
    assert encoding_weights({"openness": 1.0}).novelty == pytest.approx(1.0, abs=1e-6)
    assert encoding_weights({"openness": 2.0}).novelty == pytest.approx(1.0, abs=1e-6)
    assert encoding_weights({"emotionality": -1.0}).emotional == pytest.approx(0.2, abs=1e-6)
    # conscientiousness 0 → procedural 0.3; honesty 0.25 → ethical 0.2 + 0.8·0.25 = 0.4.
    weights = encoding_weights({"conscientiousness": 0.0, "honesty": 0.25})
    assert weights.procedural == pytest.approx(0.3, abs=1e-6)
    assert weights.ethical == pytest.approx(0.4, abs=1e-6)
    # NaN counts as missing (0.5): social 0.2 + 0.4 = 0.6.
    assert encoding_weights({"extraversion": math.nan}).social == pytest.approx(0.6, abs=1e-6)


# --- hand-derived cases --------------------------------------------------------------------------


def test_flashbulb_at_maximal_intensity() -> None:
    # pad (1, 1, 0.2), sentiment 1, no traits (w_emo 0.6), no features (attention 0.575):
    #   a = 1, valence = 0.7 + 0.3 = 1, intensity = 1 > 0.8 → flashbulb
    #   arousal boost = max(0.3, 1 - 4·0.25) = 0.3; emotional boost = 1 + 1·0.6·0.5 = 1.3
    #   congruence = 1 + 1·0.6·0.3 = 1.18
    #   strength = 0.5·0.3·1.3·0.575·1.18·2 = 0.264615
    #   stability = 3600·(1 + 6·0.264615)·5 = 46 578.42 s
    #   importance = 0.6·0.264615 + 0.4·0.575 = 0.388769
    result = compute_encoding(
        PAD(1.0, 1.0, 0.2), None, ContentFeatures(), content_sentiment=1.0, gmi_mood="curious"
    )
    assert result.flashbulb is True
    assert result.strength == pytest.approx(0.264615, abs=1e-6)
    assert result.stability == pytest.approx(3600 * (1 + 6 * 0.264615) * 5, abs=1e-2)
    assert result.stability == pytest.approx(3600 * (1 + 6 * result.strength) * 5, abs=1e-6)
    assert result.importance == pytest.approx(0.388769, abs=1e-6)
    ctx = result.emotional_context
    assert ctx.valence == pytest.approx(1.0)
    assert ctx.arousal == pytest.approx(1.0)
    assert ctx.dominance == pytest.approx(0.2)
    assert ctx.intensity == pytest.approx(1.0)
    assert ctx.gmi_mood == "curious"


def test_every_feature_with_maximal_traits() -> None:
    # traits all 1 → every weight 1. attention = 0.5 + 0.15 + 0.15 + 0.10·4 + 0.15 + 0.15·0.5
    #   = 1.425 → capped 1.
    # pad (0.5, 0, 0), sentiment 0.5: a = 0.5 (boost 1), valence = 0.35 + 0.15 = 0.5,
    #   intensity 0.25, emotional boost = 1 + 0.25·1·0.5 = 1.125,
    #   congruence = 1 + 0.25·1·0.3 = 1.075
    #   strength = 0.5·1·1.125·1·1.075 = 0.6046875
    #   stability = 3600·(1 + 6·0.6046875) = 16 661.25 s
    #   importance = 0.6·0.6046875 + 0.4·1 = 0.7628125
    traits = dict.fromkeys(HEXACO, 1.0)
    result = compute_encoding(PAD(0.5, 0.0, 0.0), traits, ALL_FEATURES, content_sentiment=0.5)
    assert result.attention == pytest.approx(1.0, abs=1e-6)
    assert result.strength == pytest.approx(0.6046875, abs=1e-6)
    assert result.stability == pytest.approx(16_661.25, abs=1e-6)
    assert result.importance == pytest.approx(0.7628125, abs=1e-6)
    assert result.flashbulb is False
    assert result.emotional_context.valence == pytest.approx(0.5, abs=1e-6)
    assert result.emotional_context.intensity == pytest.approx(0.25, abs=1e-6)


def test_novelty_with_open_personality() -> None:
    # openness 1 → w_nov 1; attention = 0.5 + 0.15·1 + 0.075 = 0.725
    #   strength = 0.5·0.725 = 0.3625; stability = 3600·(1 + 2.175) = 11 430 s
    #   importance = 0.6·0.3625 + 0.4·0.725 = 0.5075
    result = compute_encoding(NEUTRAL, {"openness": 1.0}, ContentFeatures(has_novelty=True))
    assert result.attention == pytest.approx(0.725, abs=1e-6)
    assert result.strength == pytest.approx(0.3625, abs=1e-6)
    assert result.stability == pytest.approx(11_430.0, abs=1e-6)
    assert result.importance == pytest.approx(0.5075, abs=1e-6)


def test_incongruent_sentiment_gets_no_congruence_bonus() -> None:
    # pad (0.5, 0, 0), sentiment -0.5: valence = -0.35 + 0.15 = -0.2, intensity 0.1,
    #   congruence = 1 + max(0, -0.25)·... = 1; emotional boost = 1 + 0.1·0.6·0.5 = 1.03
    #   strength = 0.5·1·1.03·0.575·1 = 0.296125
    result = compute_encoding(PAD(0.5, 0.0, 0.0), None, ContentFeatures(), content_sentiment=-0.5)
    assert result.emotional_context.valence == pytest.approx(-0.2, abs=1e-6)
    assert result.emotional_context.intensity == pytest.approx(0.1, abs=1e-6)
    assert result.strength == pytest.approx(0.296125, abs=1e-6)


def test_config_scales_strength_and_stability() -> None:
    # base strength 1, base stability 60 s: strength = 0.575, stability = 60·(1 + 3.45) = 267 s
    config = EncodingConfig(base_strength=1.0, base_stability=60.0)
    result = compute_encoding(NEUTRAL, None, ContentFeatures(), config=config)
    assert result.strength == pytest.approx(0.575, abs=1e-6)
    assert result.stability == pytest.approx(267.0, abs=1e-6)
    assert EncodingConfig() == DEFAULT_ENCODING_CONFIG


def test_contradiction_raises_attention_regardless_of_traits() -> None:
    # contradiction adds a flat 0.15: attention 0.725 for any personality.
    for value in (0.0, 1.0):
        traits = dict.fromkeys(HEXACO, value)
        result = compute_encoding(NEUTRAL, traits, ContentFeatures(has_contradiction=True))
        assert result.attention == pytest.approx(0.725, abs=1e-6)


# --- keyword feature detection -----------------------------------------------------------------


def test_detect_features_by_keyword() -> None:
    features = detect_features("I just learned HOW TO install the new router")
    assert features.has_novelty
    assert features.has_procedure
    assert not features.has_emotion
    assert features.topic_relevance == 0.5

    assert detect_features("My sister and I felt so happy").has_social_content
    assert detect_features("My sister and I felt so happy").has_emotion
    assert detect_features("Thank you for the help").has_cooperation
    assert detect_features("He lied about it, which was unfair").has_ethical_content
    assert detect_features("Actually, I changed  my\nmind").has_contradiction


def test_detect_features_matches_whole_words_only() -> None:
    features = detect_features("The renewal of the stepladder license")
    assert not features.has_novelty  # "new" inside "renewal"
    assert not features.has_procedure  # "step" inside "stepladder"
    assert detect_features("") == ContentFeatures()


# --- properties --------------------------------------------------------------------------------

_any_float = st.floats(allow_nan=True, allow_infinity=True)
_unit = st.floats(min_value=-1.0, max_value=1.0)
_traits = st.dictionaries(st.sampled_from(HEXACO), _any_float, max_size=6)
_features = st.builds(
    ContentFeatures,
    has_novelty=st.booleans(),
    has_procedure=st.booleans(),
    has_emotion=st.booleans(),
    has_social_content=st.booleans(),
    has_cooperation=st.booleans(),
    has_ethical_content=st.booleans(),
    has_contradiction=st.booleans(),
    topic_relevance=st.floats(min_value=0.0, max_value=1.0),
)


@given(
    pad=st.builds(PAD, _any_float, _any_float, _any_float),
    traits=_traits,
    features=_features,
    sentiment=_any_float,
)
def test_encoding_stays_in_range_for_any_input(
    pad: PAD, traits: dict[str, float], features: ContentFeatures, sentiment: float
) -> None:
    result = compute_encoding(pad, traits, features, content_sentiment=sentiment)
    assert 0.0 < result.strength <= 1.0
    assert 0.0 < result.importance <= 1.0
    assert 0.5 <= result.attention <= 1.0
    base = DEFAULT_ENCODING_CONFIG.base_stability
    assert base < result.stability <= base * 7 * 5
    ctx = result.emotional_context
    assert 0.0 <= ctx.arousal <= 1.0
    assert 0.0 <= ctx.intensity <= 1.0
    assert -1.0 <= ctx.valence <= 1.0
    assert result.flashbulb == (ctx.intensity > 0.8)


@given(pad=st.builds(PAD, _unit, _unit, _unit), sentiment=_unit, traits=_traits)
def test_more_features_never_lower_strength(
    pad: PAD, sentiment: float, traits: dict[str, float]
) -> None:
    plain = compute_encoding(pad, traits, ContentFeatures(), content_sentiment=sentiment)
    rich = compute_encoding(pad, traits, ALL_FEATURES, content_sentiment=sentiment)
    assert rich.strength >= plain.strength
    assert rich.importance >= plain.importance
