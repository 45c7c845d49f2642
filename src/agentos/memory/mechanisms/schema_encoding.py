"""Schema encoding: a memory that fits what is known is encoded weaker, a novel one stronger.

Spec: "The eight mechanisms" (fits a cluster at similarity 0.75 → 0.85x, novel → 1.3x);
reference §1.18, run from ``encode`` (§1.12). The reference never sets cluster centroids, so it
never runs (§5 trap 9); here consolidation computes them from the memory graph's clusters and
hands them to the engine (`ClusterCentroids`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agentos.memory.mechanisms.config import SchemaEncodingConfig
from agentos.memory.trace import MemoryTrace

__all__ = ["ClusterCentroids", "SchemaMatch", "apply_schema_encoding"]

VectorLike = npt.ArrayLike


class ClusterCentroids:
    """Cluster id → centroid embedding, kept as one unit-normalised matrix for fast cosines.

    Centroids of zero length are dropped (they match nothing); all must share one dimension.
    """

    __slots__ = ("_ids", "_matrix")

    def __init__(self, centroids: Mapping[str, VectorLike] | None = None) -> None:
        ids: list[str] = []
        rows: list[npt.NDArray[np.float64]] = []
        for cluster_id, centroid in (centroids or {}).items():
            vector = np.asarray(centroid, dtype=np.float64).ravel()
            norm = float(np.linalg.norm(vector))
            if norm > 0.0:
                ids.append(cluster_id)
                rows.append(vector / norm)
        if len({r.shape[0] for r in rows}) > 1:
            raise ValueError("cluster centroids must all have the same dimension")
        self._ids: tuple[str, ...] = tuple(ids)
        self._matrix = np.vstack(rows) if rows else np.zeros((0, 0))

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def ids(self) -> tuple[str, ...]:
        """The cluster ids, in the order given."""
        return self._ids

    def nearest(self, embedding: VectorLike) -> tuple[str, float] | None:
        """The most similar cluster and its cosine with ``embedding`` (first on ties).

        ``None`` when there are no centroids or the embedding has zero length.
        """
        if not self._ids:
            return None
        vector = np.asarray(embedding, dtype=np.float64).ravel()
        if vector.shape[0] != self._matrix.shape[1]:
            raise ValueError(
                f"embedding has dimension {vector.shape[0]}, "
                f"cluster centroids {self._matrix.shape[1]}"
            )
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            return None
        cosines = self._matrix @ (vector / norm)
        best = int(np.argmax(cosines))
        return self._ids[best], float(cosines[best])


@dataclass(frozen=True, slots=True)
class SchemaMatch:
    """How a new trace was classified: congruent with ``cluster_id`` or novel (``None``)."""

    trace_id: str
    congruent: bool
    cluster_id: str | None
    similarity: float
    strength_before: float
    strength_after: float


def apply_schema_encoding(
    trace: MemoryTrace,
    embedding: VectorLike | Sequence[float],
    centroids: ClusterCentroids,
    config: SchemaEncodingConfig,
) -> SchemaMatch | None:
    """Adjust a new trace's encoding strength by how well it fits the known clusters.

    Nearest centroid cosine ≥ ``cluster_similarity_threshold`` → congruent: strength x
    ``congruency_discount``; else novel: strength * ``novelty_boost``, at most 1. Records
    ``schema_congruent``, ``schema_cluster_id`` and ``schema_similarity`` in ``metadata``.
    ``None`` (nothing changed) when disabled, without centroids or with a zero embedding.
    """
    if not config.enabled:
        return None
    nearest = centroids.nearest(embedding)
    if nearest is None:
        return None
    cluster_id, similarity = nearest
    before = trace.encoding_strength
    congruent = similarity >= config.cluster_similarity_threshold
    if congruent:
        trace.encoding_strength = before * config.congruency_discount
    else:
        trace.encoding_strength = min(1.0, before * config.novelty_boost)
    trace.metadata["schema_congruent"] = congruent
    trace.metadata["schema_cluster_id"] = cluster_id if congruent else None
    trace.metadata["schema_similarity"] = similarity
    return SchemaMatch(
        trace.id,
        congruent,
        cluster_id if congruent else None,
        similarity,
        before,
        trace.encoding_strength,
    )
