"""Configuration of the eight mechanisms and their personality modulation.

Spec: Cognitive memory, "The eight mechanisms" and "Personality modulation"; the defaults are the
reference's ``mechanisms/defaults.ts`` (reference §1.18), in seconds and snake_case.

`resolve_mechanisms_config()` reads what a host passes as ``cognitive_mechanisms``: ``None`` means
no engine at all, ``{}`` all eight mechanisms at their defaults, and a mapping per mechanism
overrides fields one by one. `apply_personality()` scales the resolved values by HEXACO traits.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, TypeVar

from agentos.memory.trace import SourceType
from agentos.memory.traits import HEXACO_TRAITS, trait_level

__all__ = [
    "DEFAULT_DECAY_MULTIPLIERS",
    "EmotionRegulationConfig",
    "InvoluntaryRecallConfig",
    "MechanismsConfig",
    "MetacognitiveFOKConfig",
    "ReconsolidationConfig",
    "RetrievalInducedForgettingConfig",
    "SchemaEncodingConfig",
    "SourceConfidenceDecayConfig",
    "TemporalGistConfig",
    "apply_personality",
    "resolve_mechanisms_config",
]

DEFAULT_DECAY_MULTIPLIERS: Mapping[str, float] = MappingProxyType(
    {
        SourceType.USER_STATEMENT.value: 1.0,
        SourceType.TOOL_RESULT.value: 1.0,
        SourceType.OBSERVATION.value: 0.95,
        SourceType.EXTERNAL.value: 0.90,
        SourceType.AGENT_INFERENCE.value: 0.80,
        SourceType.REFLECTION.value: 0.75,
        SourceType.FACT_GRAPH.value: 0.85,
        SourceType.TYPED_NETWORK.value: 0.85,
        SourceType.RETRIEVED_DOCUMENT.value: 0.95,
        SourceType.HUMAN_APPROVAL.value: 1.0,
        SourceType.IDENTITY_PROVIDER.value: 1.0,
        SourceType.SYSTEM_CONFIG.value: 1.0,
        SourceType.EXTERNAL_API.value: 0.90,
        SourceType.MEMORY_SUMMARY.value: 0.75,
    }
)
"""Stability multipliers by source type, one per `SourceType` (reference §1.18)."""


def _check_range(owner: str, name: str, value: float, low: float, high: float) -> None:
    # Bad values are refused when the config is built, before any trace is touched.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{owner}.{name} must be a finite number, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{owner}.{name} must be between {low} and {high}, got {value!r}")


def _check_count(owner: str, name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{owner}.{name} must be a non-negative integer, got {value!r}")


def _check_flag(owner: str, name: str, value: bool) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{owner}.{name} must be true or false, got {value!r}")


@dataclass(frozen=True, slots=True)
class ReconsolidationConfig:
    """A recalled trace's affect drifts toward the current mood (on access).

    ``immune_above_importance`` is on the 0..1 importance scale: a trace whose importance (or,
    lacking one, encoding strength) is at least this never drifts. The reference compares a 0..1
    strength with 9, so nothing was ever immune; 0.9 matches the flashbulb floor of the other
    mechanisms.
    """

    enabled: bool = True
    drift_rate: float = 0.05
    max_drift_per_trace: float = 0.4
    immune_above_importance: float = 0.9

    def __post_init__(self) -> None:
        _check_flag("reconsolidation", "enabled", self.enabled)
        _check_range("reconsolidation", "drift_rate", self.drift_rate, 0.0, 1.0)
        _check_range("reconsolidation", "max_drift_per_trace", self.max_drift_per_trace, 0.0, 6.0)
        _check_range(
            "reconsolidation", "immune_above_importance", self.immune_above_importance, 0, 1
        )


@dataclass(frozen=True, slots=True)
class RetrievalInducedForgettingConfig:
    """Candidates similar to the query that were not recalled lose stability (on retrieval)."""

    enabled: bool = True
    similarity_threshold: float = 0.7
    suppression_factor: float = 0.12
    max_suppressions_per_query: int = 5

    def __post_init__(self) -> None:
        owner = "retrieval_induced_forgetting"
        _check_flag(owner, "enabled", self.enabled)
        _check_range(owner, "similarity_threshold", self.similarity_threshold, -1.0, 1.0)
        _check_range(owner, "suppression_factor", self.suppression_factor, 0.0, 1.0)
        _check_count(owner, "max_suppressions_per_query", self.max_suppressions_per_query)


@dataclass(frozen=True, slots=True)
class InvoluntaryRecallConfig:
    """An old, emotional memory sometimes surfaces unprompted (at prompt assembly)."""

    enabled: bool = True
    probability: float = 0.08
    min_age_days: float = 14.0
    min_strength: float = 0.15

    def __post_init__(self) -> None:
        _check_flag("involuntary_recall", "enabled", self.enabled)
        _check_range("involuntary_recall", "probability", self.probability, 0.0, 1.0)
        _check_range("involuntary_recall", "min_age_days", self.min_age_days, 0.0, math.inf)
        _check_range("involuntary_recall", "min_strength", self.min_strength, 0.0, 1.0)


@dataclass(frozen=True, slots=True)
class MetacognitiveFOKConfig:
    """Near misses of a retrieval surface as feeling-of-knowing signals.

    With ``surface_tip_of_tongue`` false only ``high_confidence`` signals are returned.
    """

    enabled: bool = True
    partial_activation_threshold: float = 0.3
    surface_tip_of_tongue: bool = True

    def __post_init__(self) -> None:
        owner = "metacognitive_fok"
        _check_flag(owner, "enabled", self.enabled)
        _check_range(
            owner, "partial_activation_threshold", self.partial_activation_threshold, 0.0, 1.0
        )
        _check_flag(owner, "surface_tip_of_tongue", self.surface_tip_of_tongue)


@dataclass(frozen=True, slots=True)
class TemporalGistConfig:
    """Old traces retrieved at least ``min_retrieval_count`` times become a gist (consolidation)."""

    enabled: bool = True
    age_threshold_days: float = 60.0
    min_retrieval_count: int = 2
    preserve_entities: bool = True
    preserve_emotional_context: bool = True

    def __post_init__(self) -> None:
        _check_flag("temporal_gist", "enabled", self.enabled)
        _check_range("temporal_gist", "age_threshold_days", self.age_threshold_days, 0, math.inf)
        _check_count("temporal_gist", "min_retrieval_count", self.min_retrieval_count)
        _check_flag("temporal_gist", "preserve_entities", self.preserve_entities)
        _check_flag("temporal_gist", "preserve_emotional_context", self.preserve_emotional_context)


@dataclass(frozen=True, slots=True)
class SchemaEncodingConfig:
    """A new trace that fits a known cluster is encoded weaker, a novel one stronger."""

    enabled: bool = True
    cluster_similarity_threshold: float = 0.75
    novelty_boost: float = 1.3
    congruency_discount: float = 0.85

    def __post_init__(self) -> None:
        owner = "schema_encoding"
        _check_flag(owner, "enabled", self.enabled)
        _check_range(
            owner, "cluster_similarity_threshold", self.cluster_similarity_threshold, -1.0, 1.0
        )
        _check_range(owner, "novelty_boost", self.novelty_boost, 0.0, math.inf)
        _check_range(owner, "congruency_discount", self.congruency_discount, 0.0, math.inf)


@dataclass(frozen=True, slots=True)
class SourceConfidenceDecayConfig:
    """Stability multipliers by source type, applied at most once an hour (consolidation).

    ``decay_multipliers`` maps every `SourceType` value to its multiplier (read-only).
    """

    enabled: bool = True
    decay_multipliers: Mapping[str, float] = field(
        default_factory=lambda: DEFAULT_DECAY_MULTIPLIERS, hash=False
    )

    def __post_init__(self) -> None:
        _check_flag("source_confidence_decay", "enabled", self.enabled)
        merged = dict(DEFAULT_DECAY_MULTIPLIERS)
        for key, value in self.decay_multipliers.items():
            name = _source_key(key)
            _check_range("source_confidence_decay.decay_multipliers", name, value, 0.0, math.inf)
            merged[name] = float(value)
        # A frozen dataclass sets its own field through object.__setattr__.
        object.__setattr__(self, "decay_multipliers", MappingProxyType(merged))


@dataclass(frozen=True, slots=True)
class EmotionRegulationConfig:
    """Intense memories are reappraised, and those still intense suppressed (consolidation)."""

    enabled: bool = True
    reappraisal_rate: float = 0.15
    suppression_threshold: float = 0.8
    max_regulation_per_cycle: int = 10

    def __post_init__(self) -> None:
        owner = "emotion_regulation"
        _check_flag(owner, "enabled", self.enabled)
        _check_range(owner, "reappraisal_rate", self.reappraisal_rate, 0.0, 1.0)
        _check_range(owner, "suppression_threshold", self.suppression_threshold, 0.0, 1.0)
        _check_count(owner, "max_regulation_per_cycle", self.max_regulation_per_cycle)


@dataclass(frozen=True, slots=True)
class MechanismsConfig:
    """The eight mechanisms' settings; ``MechanismsConfig()`` is all eight at their defaults."""

    reconsolidation: ReconsolidationConfig = field(default_factory=ReconsolidationConfig)
    retrieval_induced_forgetting: RetrievalInducedForgettingConfig = field(
        default_factory=RetrievalInducedForgettingConfig
    )
    involuntary_recall: InvoluntaryRecallConfig = field(default_factory=InvoluntaryRecallConfig)
    metacognitive_fok: MetacognitiveFOKConfig = field(default_factory=MetacognitiveFOKConfig)
    temporal_gist: TemporalGistConfig = field(default_factory=TemporalGistConfig)
    schema_encoding: SchemaEncodingConfig = field(default_factory=SchemaEncodingConfig)
    source_confidence_decay: SourceConfidenceDecayConfig = field(
        default_factory=SourceConfidenceDecayConfig
    )
    emotion_regulation: EmotionRegulationConfig = field(default_factory=EmotionRegulationConfig)


_SOURCE_NAMES = frozenset(s.value for s in SourceType)
_MECHANISM_TYPES: dict[str, type[Any]] = {
    "reconsolidation": ReconsolidationConfig,
    "retrieval_induced_forgetting": RetrievalInducedForgettingConfig,
    "involuntary_recall": InvoluntaryRecallConfig,
    "metacognitive_fok": MetacognitiveFOKConfig,
    "temporal_gist": TemporalGistConfig,
    "schema_encoding": SchemaEncodingConfig,
    "source_confidence_decay": SourceConfidenceDecayConfig,
    "emotion_regulation": EmotionRegulationConfig,
}
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _snake(key: str) -> str:
    """``retrievalInducedForgetting`` → ``retrieval_induced_forgetting``; snake_case passes."""
    return _CAMEL_BOUNDARY.sub("_", key).lower()


def _source_key(key: object) -> str:
    name = key.value if isinstance(key, SourceType) else str(key)
    if name not in _SOURCE_NAMES:
        raise ValueError(
            f"source_confidence_decay.decay_multipliers: unknown source type {name!r} "
            f"(known: {', '.join(sorted(_SOURCE_NAMES))})"
        )
    return name


_C = TypeVar("_C")


def _resolve_one(name: str, cls: type[_C], value: object) -> _C:
    if value is None or value is True:
        return cls()
    if value is False:
        return cls(enabled=False)  # type: ignore[call-arg]
    if isinstance(value, cls):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(
            f"cognitive_mechanisms.{name} must be a mapping of its fields, got {value!r}"
        )
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    overrides: dict[str, Any] = {}
    for raw_key, field_value in value.items():
        key = _snake(str(raw_key))
        if key not in known:
            raise ValueError(
                f"cognitive_mechanisms.{name}: unknown field {raw_key!r} "
                f"(known: {', '.join(sorted(known))})"
            )
        overrides[key] = field_value
    if "decay_multipliers" in overrides:
        multipliers = overrides["decay_multipliers"]
        if not isinstance(multipliers, Mapping):
            raise ValueError(
                f"cognitive_mechanisms.{name}.decay_multipliers must be a mapping, "
                f"got {multipliers!r}"
            )
        # Merged key by key over the defaults (the reference deep-merges this one field).
        overrides["decay_multipliers"] = {**DEFAULT_DECAY_MULTIPLIERS, **multipliers}
    return cls(**overrides)


def resolve_mechanisms_config(
    config: Mapping[str, Any] | MechanismsConfig | None,
) -> MechanismsConfig | None:
    """The mechanisms configuration a host's ``cognitive_mechanisms`` value describes.

    ``None`` → ``None`` (no mechanisms engine is built); ``{}`` → all eight at their defaults; a
    `MechanismsConfig` is returned as is. Each mechanism key (snake_case, or the TypeScript
    camelCase such as ``retrievalInducedForgetting`` / ``metacognitiveFOK``) takes a mapping whose
    fields (``drift_rate`` or ``driftRate``) override the defaults one by one, ``decay_multipliers``
    key by key; ``True`` / ``None`` mean the defaults and ``False`` the mechanism disabled.

    Raises:
        ValueError: naming an unknown mechanism, an unknown field, an unknown source type or a
            value out of range.
    """
    if config is None:
        return None
    if isinstance(config, MechanismsConfig):
        return config
    if not isinstance(config, Mapping):
        raise ValueError(f"cognitive_mechanisms must be a mapping, got {config!r}")
    resolved: dict[str, Any] = {}
    for raw_key, value in config.items():
        name = _snake(str(raw_key))
        cls = _MECHANISM_TYPES.get(name)
        if cls is None:
            raise ValueError(
                f"cognitive_mechanisms: unknown mechanism {raw_key!r} "
                f"(known: {', '.join(_MECHANISM_TYPES)})"
            )
        if name in resolved:
            raise ValueError(f"cognitive_mechanisms: mechanism {name!r} given twice")
        resolved[name] = _resolve_one(name, cls, value)
    return MechanismsConfig(**resolved)


def apply_personality(
    config: MechanismsConfig, traits: Mapping[str, object] | None
) -> MechanismsConfig:
    """``config`` scaled by HEXACO traits (spec: Personality modulation; reference §1.18).

    For a trait value v (clamped to 0..1; missing or non-numeric = 0.5): emotionality scales the
    reconsolidation drift rate * (0.5 + v); conscientiousness the RIF suppression factor
    * (0.7 + 0.6v); openness the involuntary-recall probability * (0.5 + v) capped at 1 and the
    schema novelty boost * (0.8 + 0.4v); extraversion the FOK threshold * (1.3 - 0.6v);
    honesty lowers the agent-inference and reflection decay multipliers by 0.15v (floors 0.5
    and 0.4); agreeableness scales the reappraisal rate * (0.7 + 0.6v). Temporal gist is
    unscaled. ``traits=None`` returns ``config`` unchanged; ``{}`` is neutral for every scale
    but honesty's, which subtracts 0.075 (as the reference does).
    """
    if traits is None:
        return config
    v = {name: trait_level(traits, name) for name in HEXACO_TRAITS}
    h, e, x, a, c, o = (v[name] for name in HEXACO_TRAITS)
    recon, rif = config.reconsolidation, config.retrieval_induced_forgetting
    recall, fok = config.involuntary_recall, config.metacognitive_fok
    schema, decay = config.schema_encoding, config.source_confidence_decay
    regulation = config.emotion_regulation
    multipliers = dict(decay.decay_multipliers)
    inference, reflection = SourceType.AGENT_INFERENCE.value, SourceType.REFLECTION.value
    multipliers[inference] = max(0.5, multipliers[inference] - 0.15 * h)
    multipliers[reflection] = max(0.4, multipliers[reflection] - 0.15 * h)
    return replace(
        config,
        # Rates are capped at 1 so a scaled rate never overshoots its target.
        reconsolidation=replace(recon, drift_rate=min(1.0, recon.drift_rate * (0.5 + e))),
        retrieval_induced_forgetting=replace(
            rif, suppression_factor=min(1.0, rif.suppression_factor * (0.7 + 0.6 * c))
        ),
        involuntary_recall=replace(recall, probability=min(1.0, recall.probability * (0.5 + o))),
        metacognitive_fok=replace(
            fok,
            partial_activation_threshold=min(
                1.0, fok.partial_activation_threshold * (1.3 - 0.6 * x)
            ),
        ),
        schema_encoding=replace(schema, novelty_boost=schema.novelty_boost * (0.8 + 0.4 * o)),
        source_confidence_decay=replace(decay, decay_multipliers=multipliers),
        emotion_regulation=replace(
            regulation, reappraisal_rate=min(1.0, regulation.reappraisal_rate * (0.7 + 0.6 * a))
        ),
    )
