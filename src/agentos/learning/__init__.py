"""The learning layer (spec "Learning"; rank 4).

`create_learning_layer` builds a `LearningLayer`; a host opens one learner session per GMI with
`LearningLayer.gmi_session`, a product's own turn loop one per learner with
`LearningLayer.for_learner`. Each prepared turn carries the personality section at priority 2
(`render_section`), whether it has a learner, and the mode in effect (the process switches,
`learning_switches`). `LearningLayer.manifest` reports the deployment's loops.
"""

from __future__ import annotations

from agentos.substrate.learning_seam import PreparedTurn, TurnPreparation

from .gmi_binding import GMILearnerSession
from .layer import MANIFEST_LOG_PREFIX, LearningLayer, Surface, create_learning_layer
from .learner import LearnerContext, LearnerKey, LearnerSession, NoLearnerReason
from .manifest import HOST_LOOPS, LAYER_LOOPS, LoopManifest, LoopState
from .section import render_section
from .settings import ANONYMOUS_USER_IDS, LearningMode, LearningSettings, check_learning
from .switches import ModeSetBy, effective_mode, learning_switches

__all__ = [
    "ANONYMOUS_USER_IDS",
    "HOST_LOOPS",
    "LAYER_LOOPS",
    "MANIFEST_LOG_PREFIX",
    "GMILearnerSession",
    "LearnerContext",
    "LearnerKey",
    "LearnerSession",
    "LearningLayer",
    "LearningMode",
    "LearningSettings",
    "LoopManifest",
    "LoopState",
    "ModeSetBy",
    "NoLearnerReason",
    "PreparedTurn",
    "Surface",
    "TurnPreparation",
    "check_learning",
    "create_learning_layer",
    "effective_mode",
    "learning_switches",
    "render_section",
]
