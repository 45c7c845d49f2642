"""The embedding seam: texts in, one normalised vector per text out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

__all__ = ["Embedder"]


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
