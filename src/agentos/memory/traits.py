"""HEXACO traits as cognitive memory reads them (spec: Personality modulation).

A memory receives the six traits (each 0..1) as a mapping; `trait_level()` reads one: a missing
trait, or one that is not a finite number (persona files written for the TypeScript runtime may
carry strings), counts as the neutral 0.5, and a value outside 0..1 is clamped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from agentos.persona.definition import HEXACO_TRAITS

__all__ = ["HEXACO_TRAITS", "TraitMap", "trait_level"]

TraitMap = Mapping[str, object]
"""HEXACO traits by name (``honesty``, ``emotionality``, ...); other entries are ignored."""


def trait_level(traits: TraitMap | None, name: str) -> float:
    """The trait ``name`` in 0..1 (0.5 when missing or unusable; see the module doc)."""
    value = traits.get(name) if traits is not None else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0.5
    return min(1.0, max(0.0, float(value)))
