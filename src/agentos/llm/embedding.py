"""The embedding seam: texts in, one normalised vector per text out.

An embedder may also carry a ``similarity_calibration`` attribute (a `SimilarityCalibration`)
when its raw cosines do not spread over 0..1; `calibration_of` reads it, so a caller (the
memory's scoring) depends on this seam only, never on one embedder's module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["IDENTITY_CALIBRATION", "Embedder", "SimilarityCalibration", "calibration_of"]


@runtime_checkable
class Embedder(Protocol):
    """An embedding model with a fixed output size."""

    @property
    def model_id(self) -> str:
        """The embedding model's id."""
        ...

    @property
    def dimension(self) -> int:
        """The length of every vector `embed()` returns."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...


@dataclass(frozen=True, slots=True)
class SimilarityCalibration:
    """Maps an embedder's raw cosine onto 0..1: ``(cosine - floor) / (ceiling - floor)``, clamped.

    The identity calibration (floor 0, ceiling 1) clamps negative cosines to 0.
    """

    floor: float = 0.0
    ceiling: float = 1.0

    def __post_init__(self) -> None:
        if not self.floor < self.ceiling:
            raise ValueError(f"floor {self.floor} must be below ceiling {self.ceiling}")

    def apply(self, cosine: float) -> float:
        """The calibrated similarity of ``cosine``."""
        scaled = (cosine - self.floor) / (self.ceiling - self.floor)
        return min(1.0, max(0.0, scaled))


IDENTITY_CALIBRATION = SimilarityCalibration()
"""What an embedder without a ``similarity_calibration`` gets: cosines kept, negatives to 0."""


def calibration_of(embedder: object) -> SimilarityCalibration:
    """The embedder's ``similarity_calibration`` attribute, else `IDENTITY_CALIBRATION`.

    The attribute is optional (not a member of `Embedder`), so an embedder written before it
    existed, or one whose cosines already spread over 0..1, needs nothing.
    """
    found = getattr(embedder, "similarity_calibration", None)
    return found if isinstance(found, SimilarityCalibration) else IDENTITY_CALIBRATION
