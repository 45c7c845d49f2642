"""An edge of the memory graph (reference §1.16): two traces, a kind and a weight in 0..1."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["EdgeType", "MemoryEdge", "edge_key"]


class EdgeType(StrEnum):
    """Why two traces are linked."""

    SHARED_ENTITY = "SHARED_ENTITY"
    TEMPORAL_SEQUENCE = "TEMPORAL_SEQUENCE"
    SCHEMA_INSTANCE = "SCHEMA_INSTANCE"
    CO_ACTIVATED = "CO_ACTIVATED"
    CONTRADICTS = "CONTRADICTS"


@dataclass(frozen=True, slots=True)
class MemoryEdge:
    """An undirected link between ``source`` and ``target`` (trace ids) of one type."""

    source: str
    target: str
    type: EdgeType
    weight: float
    created_at: float = 0.0

    def key(self) -> tuple[str, str, EdgeType]:
        """The edge's identity: its two ends in sorted order and its type."""
        a, b = sorted((self.source, self.target))
        return a, b, self.type


def edge_key(key: Sequence[str]) -> tuple[str, str, EdgeType]:
    """An edge key in `MemoryEdge.key` form: the two ends sorted, the type an `EdgeType`."""
    source, target, kind = key
    low, high = sorted((source, target))
    return low, high, EdgeType(kind)
