"""`HashEmbedder`: a deterministic, normalised embedder that needs no model.

Words and word pairs are hashed (BLAKE2b, so vectors are the same in every process) into a
fixed number of signed buckets, and the vector is scaled to length 1. Texts that share words
point the same way; the same text always gives the same vector.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections.abc import Sequence

__all__ = ["HashEmbedder"]

_WORD = re.compile(r"\w+", re.UNICODE)


class HashEmbedder:
    """An `agentos.llm.Embedder` for tests: feature hashing of words and word pairs."""

    def __init__(self, dimension: int = 256, *, model_id: str = "hash-embedder") -> None:
        if not isinstance(dimension, int) or dimension < 2:
            raise ValueError(f"dimension must be an integer >= 2, got {dimension!r}")
        self._dimension = dimension
        self._model_id = model_id
        self.calls = 0
        """How many times `embed()` was called."""

    @property
    def model_id(self) -> str:
        """``"hash-embedder"`` unless set."""
        return self._model_id

    @property
    def dimension(self) -> int:
        """The vector length."""
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text."""
        self.calls += 1
        return [self.embed_one(text) for text in texts]

    def embed_one(self, text: str) -> list[float]:
        """The unit vector of one text (synchronously)."""
        words = [word.lower() for word in _WORD.findall(text)]
        features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
        if not features:
            features = ["\x00empty"]
        vector = [0.0] * self._dimension
        for feature in features:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            bucket = value % self._dimension
            vector[bucket] += 1.0 if (value >> 63) & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vector))
        if norm == 0.0:
            # Opposite signs cancelled out exactly: fall back to the first feature's bucket.
            digest = hashlib.blake2b(features[0].encode(), digest_size=8).digest()
            vector[int.from_bytes(digest, "little") % self._dimension] = 1.0
            return vector
        return [x / norm for x in vector]
