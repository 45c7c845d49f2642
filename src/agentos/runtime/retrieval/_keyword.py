"""BM25 candidates from the FTS5 index, with the query built safely from arbitrary user text.

**The query is never the user's text.** `query_terms` takes the runs of letters and digits of
the text (after NFKC normalisation), distinct by their folded form, the first `MAX_QUERY_TERMS`
of them; `match_expression` wraps each in double quotes (a quote inside is doubled, FTS5's own
escape) and joins them with ``OR``. Inside quotes FTS5 reads no operator, so ``NEAR``, ``AND``,
``-``, ``*``, ``:``, ``^`` or unbalanced quotes in the user's text are plain words or nothing,
and a text with no letter or digit gives no query at all: the retrieval then uses the vectors
alone and never raises an SQL error.

**Terms BM25 gives no weight are left out.** FTS5's ``bm25()`` floors the IDF of a term found in
at least half of the chunks (``log((N - n + 0.5) / (n + 0.5)) <= 0``) at 1e-6, so such a term
adds no keyword evidence; matching it would only rank every chunk that holds it, and scoring
those is what a full-text query spends its time on. `bm25_candidates` reads each term's chunk
count from the index's ``fts5vocab`` view and keeps the terms found in fewer than half of the
chunks (a term the view does not know, which folds differently in SQLite than here, is kept).
When no term is kept, there are no BM25 candidates.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Sequence

from agentos.storage.sqlite import Database

__all__ = ["MAX_QUERY_TERMS", "bm25_candidates", "match_expression", "query_terms"]

MAX_QUERY_TERMS = 32
"""The most distinct terms a full-text query carries (the first ones of the text)."""

_TERM = re.compile(r"[^\W_]+")


def query_terms(text: str) -> list[str]:
    """The distinct letter-and-digit runs of ``text``, in order, at most `MAX_QUERY_TERMS`."""
    terms: dict[str, str] = {}
    for term in _TERM.findall(unicodedata.normalize("NFKC", text)):
        terms.setdefault(_fold(term), term)
        if len(terms) == MAX_QUERY_TERMS:
            break
    return list(terms.values())


def _fold(term: str) -> str:
    """``term`` as the FTS5 tokenizer stores it: lower case, no diacritics (near enough)."""
    decomposed = unicodedata.normalize("NFKD", term)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def match_expression(terms: Sequence[str]) -> str | None:
    """The FTS5 ``MATCH`` expression ``"t1" OR "t2" ...`` for ``terms``, or ``None`` if none."""
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def bm25_candidates(
    database: Database, text: str, limit: int, total_chunks: int, sources: Collection[str]
) -> list[int]:
    """The ``seq`` of up to ``limit`` chunks best by BM25 for ``text``, best first.

    ``sources`` limits them to those data sources (empty: every chunk); ``total_chunks`` is the
    number of chunks stored. Equal BM25 scores rank by the smaller ``seq``.
    """
    terms = _weighted_terms(database, query_terms(text), total_chunks)
    expression = match_expression(terms)
    if expression is None or limit <= 0:
        return []
    if sources:
        marks = ", ".join("?" * len(sources))
        sql = (
            "SELECT f.rowid FROM retrieval_chunks_fts AS f "
            "JOIN retrieval_chunks AS c ON c.seq = f.rowid "
            f"WHERE retrieval_chunks_fts MATCH ? AND c.data_source_id IN ({marks}) "
            "ORDER BY f.rank, f.rowid LIMIT ?"
        )
        parameters: list[object] = [expression, *sorted(sources), limit]
    else:
        sql = (
            "SELECT rowid FROM retrieval_chunks_fts WHERE retrieval_chunks_fts MATCH ? "
            "ORDER BY rank, rowid LIMIT ?"
        )
        parameters = [expression, limit]
    return [int(row[0]) for row in database.fetchall(sql, parameters)]


def _weighted_terms(database: Database, terms: list[str], total_chunks: int) -> list[str]:
    """``terms`` without those found in at least half of the chunks (see the module)."""
    if not terms:
        return []
    folded = [_fold(term) for term in terms]
    marks = ", ".join("?" * len(folded))
    rows = database.fetchall(
        f"SELECT term, doc FROM retrieval_chunks_vocab WHERE term IN ({marks})", folded
    )
    counts = {str(row[0]): int(row[1]) for row in rows}
    return [
        term
        for term, key in zip(terms, folded, strict=True)
        if 2 * counts.get(key, 0) < total_chunks
    ]
