"""The GMI's mood (reference §1.2 ``GMIMood``) and the PAD state it stands for (§1.11)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["MOOD_KEY", "MOOD_PAD", "GMIMood", "PADState", "pad_for_mood"]

MOOD_KEY = "current_gmi_mood"
"""The working-memory key that holds the GMI's mood."""


class GMIMood(StrEnum):
    """The eight moods a GMI can be in."""

    NEUTRAL = "neutral"
    FOCUSED = "focused"
    EMPATHETIC = "empathetic"
    CURIOUS = "curious"
    ASSERTIVE = "assertive"
    ANALYTICAL = "analytical"
    FRUSTRATED = "frustrated"
    CREATIVE = "creative"


@dataclass(frozen=True, slots=True)
class PADState:
    """Pleasure, arousal and dominance, each from -1 to 1 (0 is neutral)."""

    pleasure: float = 0.0
    arousal: float = 0.0
    dominance: float = 0.0

    def __post_init__(self) -> None:
        for name in ("pleasure", "arousal", "dominance"):
            value = getattr(self, name)
            if not -1.0 <= value <= 1.0:
                raise ValueError(f"PADState.{name} must be from -1 to 1, got {value}")


MOOD_PAD: dict[GMIMood, PADState] = {
    GMIMood.NEUTRAL: PADState(0.0, 0.0, 0.0),
    GMIMood.EMPATHETIC: PADState(0.55, 0.15, 0.25),
    GMIMood.CURIOUS: PADState(0.35, 0.45, 0.15),
    GMIMood.ASSERTIVE: PADState(0.15, 0.35, 0.70),
    GMIMood.ANALYTICAL: PADState(0.10, -0.10, 0.45),
    GMIMood.FOCUSED: PADState(0.20, 0.10, 0.55),
    GMIMood.FRUSTRATED: PADState(-0.65, 0.60, 0.20),
    GMIMood.CREATIVE: PADState(0.45, 0.35, 0.35),
}
"""Each mood as a PAD state (reference §1.11, the memory bridge's map)."""


def pad_for_mood(mood: GMIMood) -> PADState:
    """The PAD state a mood stands for."""
    return MOOD_PAD[GMIMood(mood)]
