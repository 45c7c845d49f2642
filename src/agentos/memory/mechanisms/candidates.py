"""What the retrieval hooks read about a candidate: its trace, score and query similarity.

The manager's scored candidates (``scoring.ScoredTrace``) have these three attributes, so it passes
them as they are; `ScoredCandidate` lets code that has no scorer build one. The mechanisms do not
import the scorer, so either can change without the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agentos.memory.trace import MemoryTrace

__all__ = ["Candidate", "ScoredCandidate"]


class Candidate(Protocol):
    """A retrieval candidate.

    ``score`` is its composite retrieval score (0..1) and ``vector_similarity`` its embedding
    similarity to the query, as the scorer used it.
    """

    @property
    def trace(self) -> MemoryTrace:
        """The candidate trace."""
        ...

    @property
    def score(self) -> float:
        """The composite retrieval score."""
        ...

    @property
    def vector_similarity(self) -> float:
        """The similarity of the trace's embedding to the query's."""
        ...


@dataclass(frozen=True, slots=True)
class ScoredCandidate:
    """A plain `Candidate`."""

    trace: MemoryTrace
    score: float
    vector_similarity: float
