"""`ChunkCatalog`: every stored chunk's unit vector and data source, in memory, row-aligned.

The vectors live in a `agentos.memory.vector_index.VectorIndex` (one numpy float32 matrix, exact
cosine top-k) keyed by the chunk's ``seq`` as text; beside it a numpy array holds each row's data
source as a small integer code, so a data-source filter is one ``np.isin`` over the codes. The
store loads the catalog from SQLite when it opens and changes it only after a write commits.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import numpy.typing as npt

from agentos.memory.vector_index import VectorIndex

__all__ = ["ChunkCatalog"]

_NO_SOURCE = -1  # the code of a chunk ingested without a data source
_INITIAL_CAPACITY = 64


class ChunkCatalog:
    """The chunks' vectors and data sources for filtered cosine search."""

    def __init__(self, dimension: int) -> None:
        self._index = VectorIndex(dimension)
        self._codes = np.full(_INITIAL_CAPACITY, _NO_SOURCE, dtype=np.int32)
        self._source_codes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._index)

    def unit(self, vector: Sequence[float]) -> npt.NDArray[np.float32]:
        """The checked float32 unit row of ``vector`` (`ValueError` if zero, wrong length, ...)."""
        return self._index.unit(vector)

    def load(
        self, seqs: Sequence[int], sources: Sequence[str | None], vectors: npt.NDArray[np.float32]
    ) -> None:
        """Add chunks in one block; ``vectors`` are their unit rows exactly as saved in SQLite.

        The rows are taken bit for bit (not normalised again), so a chunk's vector is the same
        whether it was just written or loaded by a later process.
        """
        start = len(self._index)
        self._index.add_many([str(seq) for seq in seqs], vectors, normalized=True)
        self._reserve(start + len(seqs))
        self._codes[start : start + len(seqs)] = [self._code(source) for source in sources]

    def remove(self, seq: int) -> None:
        """Drop ``seq``'s row (the last row moves into its place, codes mirrored)."""
        row, last = self._index.remove(str(seq))
        self._codes[row] = self._codes[last]

    def search(
        self, query: npt.NDArray[np.float32], k: int, sources: Collection[str]
    ) -> list[tuple[int, float]]:
        """The ``k`` chunks nearest ``query`` (a unit row) as ``(seq, cosine)``, best first.

        ``sources`` limits them to those data sources (empty: every chunk). Equal cosines rank
        by the smaller ``seq``, at the cut too: every row tied with the ``k``-th is compared, so
        the answer does not depend on the rows' order in the matrix. The float32 product only
        selects; the cosines reported are the index's exact float64 ones.
        """
        matrix = self._index.matrix
        total = matrix.shape[0]
        if total == 0 or k <= 0:
            return []
        scores = matrix @ query
        mask = self._mask(sources)
        if mask is not None:
            scores[~mask] = -np.inf
            k = min(k, int(np.count_nonzero(mask)))
            if k == 0:
                return []
        k = min(k, total)
        kth = np.partition(scores, total - k)[total - k]
        ids = self._index.ids
        tied = [ids[row] for row in np.flatnonzero(scores >= kth).tolist()]
        exact = self._index.similarities(query, tied)
        hits = sorted(((int(id_), exact[id_]) for id_ in tied), key=lambda hit: (-hit[1], hit[0]))
        return hits[:k]

    def vectors(self, seqs: Sequence[int]) -> npt.NDArray[np.float64]:
        """The unit rows of ``seqs``, as float64, one row each."""
        rows: npt.NDArray[np.float64] = self._index.vectors([str(seq) for seq in seqs]).astype(
            np.float64
        )
        return rows

    def _mask(self, sources: Collection[str]) -> npt.NDArray[np.bool_] | None:
        if not sources:
            return None
        codes = [self._source_codes[source] for source in sources if source in self._source_codes]
        live = self._codes[: len(self._index)]
        mask: npt.NDArray[np.bool_] = np.isin(live, np.array(codes, dtype=np.int32))
        return mask

    def _code(self, source: str | None) -> int:
        if source is None:
            return _NO_SOURCE
        return self._source_codes.setdefault(source, len(self._source_codes))

    def _reserve(self, needed: int) -> None:
        capacity = self._codes.shape[0]
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        grown = np.full(capacity, _NO_SOURCE, dtype=np.int32)
        grown[: self._codes.shape[0]] = self._codes
        self._codes = grown
