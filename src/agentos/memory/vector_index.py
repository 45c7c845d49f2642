"""`VectorIndex`: an exact cosine index over unit-length float32 rows, in numpy.

Every vector is normalised when it is added, so a cosine is a dot product and a search is one
matrix-vector product over the live rows, an ``argpartition`` for the ``k`` best and a sort of
those ``k``. Rows live in one preallocated matrix whose capacity doubles when it fills, so an
add copies one row (and, rarely, the matrix); ids map to rows and back.

**Removal swaps with the last row**: the last live row moves into the freed row, so the live rows
stay one contiguous block, a search never reads a dead row and no tombstone mask is combined with
every query. `VectorIndex.remove` returns ``(row, last)``: whoever keeps per-row columns beside
the index (a store's filter columns) mirrors the move with ``column[row] = column[last]``.

**Similarities are exact and reproducible.** The float32 product only *ranks*; the similarities
returned (by `VectorIndex.top_k` and `VectorIndex.similarities` alike) are recomputed in float64
for just those rows, one row at a time, so a trace's similarity to a query is the same number
whichever call reports it, however many rows the index holds and in whichever process loaded it.
BLAS's float32 product does not promise that (its rounding depends on the row count).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["VectorIndex"]

_FloatArray = npt.NDArray[np.float32]
_Float64Array = npt.NDArray[np.float64]
_BoolArray = npt.NDArray[np.bool_]
_IntArray = npt.NDArray[np.intp]

_INITIAL_CAPACITY = 64
# Below this fraction of live rows a masked search gathers the selected rows and multiplies only
# those; above it one product over every row (with the rest set to -inf) is cheaper than the copy.
_GATHER_FRACTION = 0.25


class VectorIndex:
    """Exact cosine top-k over vectors keyed by string ids.

    The dimension is fixed by the first vector (or ``dimension=``); a vector of another length is
    a `ValueError` naming both. A zero or non-finite vector is refused (it has no direction).
    """

    def __init__(self, dimension: int | None = None, *, capacity: int = _INITIAL_CAPACITY) -> None:
        if dimension is not None and dimension <= 0:
            raise ValueError(f"a vector dimension must be positive, got {dimension}")
        self._dimension = dimension
        self._capacity = max(1, capacity)
        self._matrix: _FloatArray | None = None
        self._size = 0
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}

    @property
    def dimension(self) -> int | None:
        """The vector length (``None`` until the first vector fixes it)."""
        return self._dimension

    def __len__(self) -> int:
        return self._size

    def __contains__(self, id_: object) -> bool:
        return id_ in self._rows

    @property
    def ids(self) -> Sequence[str]:
        """The ids in row order (a read-only view: do not mutate)."""
        return self._ids

    @property
    def matrix(self) -> _FloatArray:
        """The live rows, ``(len, dimension)``, unit length (a read-only view)."""
        if self._matrix is None:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        view = self._matrix[: self._size]
        view.flags.writeable = False
        return view

    def row(self, id_: str) -> int:
        """The row of ``id_`` (`KeyError` when absent)."""
        return self._rows[id_]

    def rows(self, ids: Iterable[str]) -> _IntArray:
        """The rows of the ``ids`` that are present, in the order given (absent ones skipped)."""
        table = self._rows
        return np.fromiter((table[i] for i in ids if i in table), dtype=np.intp)

    def add(self, id_: str, vector: Sequence[float] | npt.NDArray[np.floating]) -> int:
        """Add ``vector`` (normalised here) under a new ``id_`` and return its row.

        `ValueError` for an id already present, a zero or non-finite vector, or a length other
        than the index's dimension.
        """
        if id_ in self._rows:
            raise ValueError(f"vector id {id_!r} is already in the index")
        unit = self.unit(vector)
        self._fix_dimension(unit.shape[0])
        self._reserve(self._size + 1)
        assert self._matrix is not None
        row = self._size
        self._matrix[row] = unit
        self._ids.append(id_)
        self._rows[id_] = row
        self._size += 1
        return row

    def add_many(
        self,
        ids: Sequence[str],
        vectors: npt.NDArray[np.floating],
        *,
        normalized: bool = False,
    ) -> None:
        """Add a block of vectors (one row of ``vectors`` per id) in one copy.

        With ``normalized=True`` the rows are taken bit for bit as given (they must already be
        unit length: a store reloading the rows it saved); otherwise each is normalised and
        checked as `add` does. Nothing is added when any row is refused.
        """
        block = np.asarray(vectors)
        if block.ndim != 2 or block.shape[0] != len(ids):
            raise ValueError(f"expected {len(ids)} rows of vectors, got shape {block.shape}")
        if len(ids) == 0:
            return
        self._check_dimension(block.shape[1], "vectors")
        # Checked id by id: set.isdisjoint(dict) would walk the whole dict on every call.
        if len(set(ids)) != len(ids) or any(i in self._rows for i in ids):
            raise ValueError("add_many: the ids repeat or are already in the index")
        if normalized:
            unit = block.astype(np.float32, copy=False)
        else:
            unit = np.stack([self.unit(row) for row in block])
        self._fix_dimension(block.shape[1])
        self._reserve(self._size + len(ids))
        assert self._matrix is not None
        start = self._size
        self._matrix[start : start + len(ids)] = unit
        for offset, id_ in enumerate(ids):
            self._rows[id_] = start + offset
        self._ids.extend(ids)
        self._size += len(ids)

    def remove(self, id_: str) -> tuple[int, int]:
        """Remove ``id_`` by moving the last row into its place; return ``(row, last)``.

        ``row`` is the freed row and ``last`` the former last row now stored there (equal when
        the removed row was the last). `KeyError` when ``id_`` is absent.
        """
        row = self._rows.pop(id_)
        last = self._size - 1
        assert self._matrix is not None
        if row != last:
            moved = self._ids[last]
            self._matrix[row] = self._matrix[last]
            self._ids[row] = moved
            self._rows[moved] = row
        self._ids.pop()
        self._size = last
        return row, last

    def top_k(
        self,
        query: Sequence[float] | npt.NDArray[np.floating],
        k: int,
        mask: _BoolArray | None = None,
    ) -> tuple[list[str], _Float64Array]:
        """The ``k`` ids most similar to ``query``, best first, and their cosine similarities.

        ``mask`` (one bool per row, ``len(index)`` long) limits the candidates to its True rows.
        Fewer than ``k`` come back when fewer are candidates. The similarities are float64
        (see the module's note on exactness); ties are in no promised order.
        """
        unit64 = self._query(query)
        if k <= 0 or self._size == 0 or self._matrix is None:
            return [], np.zeros(0, dtype=np.float64)
        live = self._matrix[: self._size]
        query32 = unit64.astype(np.float32)
        if mask is None:
            candidates: _IntArray | None = None
            scores = live @ query32
        else:
            mask = np.asarray(mask, dtype=np.bool_)  # an int array's ~ would be bitwise
            if mask.shape != (self._size,):
                raise ValueError(f"mask must hold {self._size} bools, got shape {mask.shape}")
            selected = int(np.count_nonzero(mask))
            if selected == 0:
                return [], np.zeros(0, dtype=np.float64)
            if selected == self._size:
                candidates, scores = None, live @ query32
            elif selected <= k or selected < self._size * _GATHER_FRACTION:
                candidates = np.flatnonzero(mask)
                scores = live[candidates] @ query32
            else:
                candidates = None
                scores = live @ query32
                np.copyto(scores, np.float32(-np.inf), where=~mask)
                k = min(k, selected)
        count = scores.shape[0]
        # argpartition on the scores themselves (not their negation: no extra array) puts the
        # k largest in the last k places.
        best = np.argpartition(scores, count - k)[count - k :] if k < count else np.arange(count)
        rows = best if candidates is None else candidates[best]
        exact = _exact(live[rows], unit64)
        # Rank the k by the exact similarities, so the order agrees with the numbers reported.
        order = np.argsort(-exact, kind="stable")
        ids = self._ids
        return [ids[r] for r in rows[order].tolist()], exact[order]

    def similarities(
        self, query: Sequence[float] | npt.NDArray[np.floating], ids: Sequence[str]
    ) -> dict[str, float]:
        """The cosine similarity of ``query`` to each id of ``ids`` present (absent: left out)."""
        unit64 = self._query(query)
        present = [i for i in ids if i in self._rows]
        if not present or self._matrix is None:
            return {}
        rows = self.rows(present)
        values = _exact(self._matrix[rows], unit64)
        return dict(zip(present, values.tolist(), strict=True))

    def vectors(self, ids: Sequence[str]) -> _FloatArray:
        """Copies of the unit rows of ``ids`` (``(len(ids), dimension)``; `KeyError` if absent)."""
        rows = np.array([self._rows[i] for i in ids], dtype=np.intp)
        if self._matrix is None:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        return self._matrix[rows]

    def unit(self, vector: Sequence[float] | npt.NDArray[np.floating]) -> _FloatArray:
        """The float32 unit row `add` would store for ``vector``, checked; the index is unchanged.

        `ValueError` for a zero, non-finite or non-1-D vector or one whose length is not the
        index's dimension (any positive length while the index has none).
        """
        values = np.asarray(vector, dtype=np.float64)
        if values.ndim != 1:
            raise ValueError(f"a vector must be one-dimensional, got shape {values.shape}")
        self._check_dimension(values.shape[0], "vector")
        return _normalise(values, "vector").astype(np.float32)

    def _query(self, query: Sequence[float] | npt.NDArray[np.floating]) -> _Float64Array:
        values = np.asarray(query, dtype=np.float64)
        if values.ndim != 1:
            raise ValueError(f"a query must be one-dimensional, got shape {values.shape}")
        self._check_dimension(values.shape[0], "query")
        return _normalise(values, "query")

    def _check_dimension(self, length: int, what: str) -> None:
        if length <= 0:
            raise ValueError(f"a {what} must not be empty")
        if self._dimension is not None and length != self._dimension:
            raise ValueError(
                f"a {what} of length {length} does not fit an index of dimension {self._dimension}"
            )

    def _fix_dimension(self, length: int) -> None:
        if self._dimension is None:
            self._dimension = length

    def _reserve(self, needed: int) -> None:
        assert self._dimension is not None
        if self._matrix is None:
            capacity = max(self._capacity, needed)
            self._matrix = np.empty((capacity, self._dimension), dtype=np.float32)
            return
        capacity = self._matrix.shape[0]
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        grown = np.empty((capacity, self._dimension), dtype=np.float32)
        grown[: self._size] = self._matrix[: self._size]
        self._matrix = grown


def _normalise(values: _Float64Array, what: str) -> _Float64Array:
    norm = float(np.linalg.norm(values))
    if not np.isfinite(norm):
        raise ValueError(f"a {what} must hold finite numbers")
    if norm == 0.0:
        raise ValueError(f"a zero {what} has no direction; cosine similarity is undefined")
    return values / norm


def _exact(rows: _FloatArray, unit64: _Float64Array) -> _Float64Array:
    # einsum's own loop computes each row's sum on its own, so the value does not depend on which
    # or how many other rows are in the call (a BLAS product's rounding does).
    result: _Float64Array = np.einsum("ij,j->i", rows.astype(np.float64), unit64)
    return result
