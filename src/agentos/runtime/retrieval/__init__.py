"""The retrieval augmentor the full runtime ships (issue 13, item 5; DESIGN.md §3, rank 6).

`SQLiteRetrievalAugmentor` implements the GMI's seam, `agentos.substrate.collaborators.
RetrievalAugmentor` (spec: What a turn does, step 2: "the GMI calls retrieveContext() and emits
a RAG_SOURCES_AVAILABLE chunk with the retrieved sources"; step 7: "the GMI ingests the exchange
into the retrieval augmentor"). Usage::

    augmentor = SQLiteRetrievalAugmentor(embedder)             # in memory; or path=...
    await augmentor.ingest_documents([IngestedDocument("runbook", text, "ops-docs")])
    result = await augmentor.retrieve_context(
        "how do I rotate the keys?", RagRetrievalOptions(top_k=5, strategy="hybrid")
    )

**Ingestion.** Each document is cut by `chunk_text` (paragraphs, then sentences, packed to
`ChunkingOptions.max_tokens` estimated tokens with ``overlap_tokens`` carried over), each chunk
embedded with the configured `agentos.llm.Embedder`, and stored in SQLite on the project's
foundation (`agentos.storage.sqlite`: WAL, a schema version per store, migrations), with an FTS5
full-text index and the unit vector. Ingesting a document id again replaces its chunks. Each
chunk keeps its document's ``data_source_id`` and metadata.

**Retrieval** (``RagRetrievalOptions.strategy``), always limited to the target data sources:

- ``similarity``: cosine top-k over the vectors;
- ``hybrid``: BM25 from FTS5 and the vector ranking, each `candidate_count` long, fused by
  reciprocal rank fusion with ``RRF_K`` = 60;
- ``mmr``: maximal marginal relevance over the vector candidates, ``MMR_LAMBDA`` = 0.5.

`RetrievedChunk.score` is the cosine for ``similarity`` and ``mmr`` and the fused RRF score for
``hybrid``; ``id`` is ``"<document id>#<chunk index>"`` and ``metadata`` the document's
metadata plus ``document_id`` and ``chunk_index``. `RetrievalResult.augmented_context` is the
chunks' texts in rank order joined by `CONTEXT_SEPARATOR` (a blank line). The full-text query
is built from the letters and digits of the user's text, each term quoted (see
`agentos.runtime.retrieval._keyword`), so no user text can raise an SQL error.

**Vectors in memory.** The vectors are loaded from SQLite into one numpy matrix when the
augmentor opens and kept in step with every committed write, so a vector search never reads
the database; only the hits' rows are read.
"""

from __future__ import annotations

from ._augmentor import CONTEXT_SEPARATOR, EMBED_BATCH, SQLiteRetrievalAugmentor, candidate_count
from ._checks import STRATEGIES
from ._chunking import DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP_TOKENS, ChunkingOptions, chunk_text
from ._keyword import MAX_QUERY_TERMS
from ._ranking import MMR_LAMBDA, RRF_K
from ._schema import RETRIEVAL_MIGRATIONS, RETRIEVAL_STORE

__all__ = [
    "CONTEXT_SEPARATOR",
    "DEFAULT_CHUNK_TOKENS",
    "DEFAULT_OVERLAP_TOKENS",
    "EMBED_BATCH",
    "MAX_QUERY_TERMS",
    "MMR_LAMBDA",
    "RETRIEVAL_MIGRATIONS",
    "RETRIEVAL_STORE",
    "RRF_K",
    "STRATEGIES",
    "ChunkingOptions",
    "SQLiteRetrievalAugmentor",
    "candidate_count",
    "chunk_text",
]
