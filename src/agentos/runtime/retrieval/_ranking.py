"""How candidates become a ranking: reciprocal rank fusion and maximal marginal relevance.

- `reciprocal_rank_fusion` (the ``hybrid`` strategy): each chunk scores
  ``sum(1 / (RRF_K + rank))`` over the lists it appears in, ranks counted from 1. ``RRF_K`` is
  60, the constant of Cormack, Clarke and Büttcher (SIGIR 2009), which damps the weight of the
  very first ranks so that agreement between the lists counts more than one list's top pick.
- `maximal_marginal_relevance` (the ``mmr`` strategy): picks one candidate at a time, the one
  maximising ``MMR_LAMBDA * sim(query, c) - (1 - MMR_LAMBDA) * max(sim(c, s) for s picked)``
  (Carbonell and Goldstein, SIGIR 1998). ``MMR_LAMBDA`` is 0.5: relevance and novelty weigh the
  same, as LangChain's and LlamaIndex's MMR retrievers default to.

Both are deterministic: ties break by the better position in the first (vector) list, then by
the smaller key.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["MMR_LAMBDA", "RRF_K", "maximal_marginal_relevance", "reciprocal_rank_fusion"]

RRF_K = 60
"""The reciprocal rank fusion constant: a chunk at rank ``r`` of a list adds ``1 / (60 + r)``."""

MMR_LAMBDA = 0.5
"""The weight of relevance against novelty in maximal marginal relevance."""


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]]) -> list[tuple[int, float]]:
    """The keys of ``rankings`` (best first in each) fused, as ``(key, score)`` best first.

    A key's score adds ``1 / (RRF_K + rank)`` for each list it is in, in the order the lists are
    given. Equal scores rank by the key's best rank in any list, then by the key.
    """
    scores: dict[int, float] = {}
    best_rank: dict[int, int] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
            best_rank[key] = min(best_rank.get(key, rank), rank)
    return sorted(scores.items(), key=lambda item: (-item[1], best_rank[item[0]], item[0]))


def maximal_marginal_relevance(
    relevance: npt.NDArray[np.float64], vectors: npt.NDArray[np.float64], count: int
) -> list[int]:
    """The positions of up to ``count`` candidates in MMR order.

    ``relevance`` holds each candidate's cosine to the query and ``vectors`` their unit vectors,
    one row each, candidates ordered best relevance first; an exact tie in the MMR objective
    goes to the earlier candidate.
    """
    total = relevance.shape[0]
    if total == 0 or count <= 0:
        return []
    pairwise = vectors @ vectors.T
    # The largest similarity of each candidate to any candidate picked so far (none yet: 0).
    redundancy = np.zeros(total, dtype=np.float64)
    available = np.ones(total, dtype=np.bool_)
    picked: list[int] = []
    for _ in range(min(count, total)):
        objective = MMR_LAMBDA * relevance - (1.0 - MMR_LAMBDA) * redundancy
        objective[~available] = -np.inf
        choice = int(np.argmax(objective))  # argmax returns the first of equal maxima
        picked.append(choice)
        available[choice] = False
        redundancy = (
            pairwise[choice] if len(picked) == 1 else np.maximum(redundancy, pairwise[choice])
        )
    return picked
