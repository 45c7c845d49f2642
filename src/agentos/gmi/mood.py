"""The GMI's mood (reference §1.2 ``GMIMood``) and a PAD state beside it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["GMIMood", "PADState"]


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
