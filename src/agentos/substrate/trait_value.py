"""The check on a personality trait a GMI is asked to set (`GMI.set_personality_trait`).

Spec (The personality section): "GMI.setPersonalityTrait(), and so adapt_personality, changes the
GMI's copy of the persona and no prompt"; the trait is one of the six HEXACO traits and its value
a number from 0 to 1.
"""

from __future__ import annotations

import math

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.persona.definition import HEXACO_TRAITS

__all__ = ["checked_trait_value"]


def checked_trait_value(trait: str, value: object) -> float:
    """``value`` as a float, or ``VALIDATION_ERROR`` naming the trait.

    Refuses a trait that is not a HEXACO trait, and a value that is a bool, not a number, not
    finite or outside 0 to 1.
    """
    if trait not in HEXACO_TRAITS:
        raise GMIError(
            f"unknown personality trait {trait!r}; the traits are {', '.join(HEXACO_TRAITS)}",
            GMIErrorCode.VALIDATION_ERROR,
        )
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0.0 <= value <= 1.0
    ):
        raise GMIError(
            f"personality trait {trait} must be a number from 0 to 1, got {value!r}",
            GMIErrorCode.VALIDATION_ERROR,
        )
    return float(value)
