"""The eight cognitive-memory mechanisms and their personality modulation (rank 2).

Spec: Cognitive memory, "The eight mechanisms" and "Personality modulation". Each mechanism is a
module of small functions that mutate traces in place and return what they changed;
`CognitiveMechanismsEngine` applies the configuration, scaled by HEXACO traits, at the hooks the
memory manager calls.
"""

from agentos.memory.mechanisms.candidates import Candidate, ScoredCandidate
from agentos.memory.mechanisms.config import (
    DEFAULT_DECAY_MULTIPLIERS,
    EmotionRegulationConfig,
    InvoluntaryRecallConfig,
    MechanismsConfig,
    MetacognitiveFOKConfig,
    ReconsolidationConfig,
    RetrievalInducedForgettingConfig,
    SchemaEncodingConfig,
    SourceConfidenceDecayConfig,
    TemporalGistConfig,
    apply_personality,
    resolve_mechanisms_config,
)
from agentos.memory.mechanisms.emotion_regulation import Regulation, apply_emotion_regulation
from agentos.memory.mechanisms.engine import (
    CognitiveMechanismsEngine,
    ConsolidationEffects,
    RetrievalEffects,
)
from agentos.memory.mechanisms.feeling_of_knowing import (
    FeelingOfKnowing,
    detect_feeling_of_knowing,
)
from agentos.memory.mechanisms.forgetting import apply_retrieval_induced_forgetting
from agentos.memory.mechanisms.involuntary_recall import select_involuntary_memory
from agentos.memory.mechanisms.reconsolidation import Drift, apply_reconsolidation
from agentos.memory.mechanisms.schema_encoding import (
    ClusterCentroids,
    SchemaMatch,
    apply_schema_encoding,
)
from agentos.memory.mechanisms.source_decay import apply_source_confidence_decay
from agentos.memory.mechanisms.temporal_gist import apply_temporal_gist

__all__ = [
    "DEFAULT_DECAY_MULTIPLIERS",
    "Candidate",
    "ClusterCentroids",
    "CognitiveMechanismsEngine",
    "ConsolidationEffects",
    "Drift",
    "EmotionRegulationConfig",
    "FeelingOfKnowing",
    "InvoluntaryRecallConfig",
    "MechanismsConfig",
    "MetacognitiveFOKConfig",
    "ReconsolidationConfig",
    "Regulation",
    "RetrievalEffects",
    "RetrievalInducedForgettingConfig",
    "SchemaEncodingConfig",
    "SchemaMatch",
    "ScoredCandidate",
    "SourceConfidenceDecayConfig",
    "TemporalGistConfig",
    "apply_emotion_regulation",
    "apply_personality",
    "apply_reconsolidation",
    "apply_retrieval_induced_forgetting",
    "apply_schema_encoding",
    "apply_source_confidence_decay",
    "apply_temporal_gist",
    "detect_feeling_of_knowing",
    "resolve_mechanisms_config",
    "select_involuntary_memory",
]
