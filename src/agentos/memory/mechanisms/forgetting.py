"""Retrieval-induced forgetting: recalling some memories suppresses their close competitors.

Spec: "The eight mechanisms" (similarity threshold 0.7, suppression factor 0.12, at most 5 per
query); reference §1.18, run after scoring in ``retrieve`` (§1.12). Unlike the reference, which
suppresses any candidate left out (§5 trap 9), a competitor here is a candidate that was not
recalled and whose similarity to the query reaches ``similarity_threshold``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from agentos.memory.mechanisms._common import FLASHBULB_STRENGTH
from agentos.memory.mechanisms.candidates import Candidate
from agentos.memory.mechanisms.config import RetrievalInducedForgettingConfig
from agentos.memory.trace import MemoryTrace

__all__ = ["MIN_SUPPRESSIBLE_STRENGTH", "apply_retrieval_induced_forgetting"]

MIN_SUPPRESSIBLE_STRENGTH = 0.1
"""Traces weaker than this are nearly gone already and are not suppressed further."""


def apply_retrieval_induced_forgetting(
    candidates: Iterable[Candidate],
    retrieved_ids: Collection[str],
    config: RetrievalInducedForgettingConfig,
) -> list[MemoryTrace]:
    """Suppress the competitors among ``candidates`` (mutates them); return the suppressed traces.

    A competitor is an active candidate not in ``retrieved_ids`` with ``vector_similarity ≥
    similarity_threshold`` and encoding strength in [0.1, 0.9) (flashbulb-grade traces are
    spared). The most similar competitors are suppressed first, at most
    ``max_suppressions_per_query``; each one's stability is multiplied by
    ``1 - suppression_factor``. Nothing is suppressed when nothing was retrieved: there was no
    retrieval practice to induce it.
    """
    if not config.enabled or not retrieved_ids:
        return []
    competitors = [
        c
        for c in candidates
        if c.trace.id not in retrieved_ids
        and c.trace.is_active
        and c.vector_similarity >= config.similarity_threshold
        and MIN_SUPPRESSIBLE_STRENGTH <= c.trace.encoding_strength < FLASHBULB_STRENGTH
    ]
    # sorted() is stable: equally similar competitors keep the caller's order.
    competitors.sort(key=lambda c: c.vector_similarity, reverse=True)
    suppressed: list[MemoryTrace] = []
    seen: set[str] = set()
    for candidate in competitors:
        if len(suppressed) >= config.max_suppressions_per_query:
            break
        trace = candidate.trace
        if trace.id in seen:
            continue
        seen.add(trace.id)
        trace.stability *= 1.0 - config.suppression_factor
        suppressed.append(trace)
    return suppressed
