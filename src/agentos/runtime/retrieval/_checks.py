"""The checks a retrieval or an ingestion runs on its input before any work or write.

Each refusal is a `GMIError` (``INVALID_ARGUMENT``) whose ``details["option"]`` names the field,
as every entry point of agentos does (`agentos.api.call_checks.invalid`): ``query``, ``top_k``,
``strategy``, ``target_data_source_ids``; ``documents``, ``documents[i]``,
``documents[i].id``, ``.content``, ``.data_source_id``, ``.metadata``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence

from agentos.api.call_checks import check_text, invalid
from agentos.substrate.collaborators import IngestedDocument, RagRetrievalOptions

__all__ = ["STRATEGIES", "check_documents", "check_retrieval"]

STRATEGIES = ("similarity", "hybrid", "mmr")
"""The retrieval strategies, as `RagRetrievalOptions.strategy` names them."""


def check_retrieval(query: object, options: object) -> None:
    """Refuse a query that is not text and options that are not valid `RagRetrievalOptions`."""
    if not isinstance(query, str):
        invalid("query", f"must be a string, got {type(query).__name__}")
    check_text("query", query)
    if not isinstance(options, RagRetrievalOptions):
        invalid("options", f"must be RagRetrievalOptions, got {type(options).__name__}")
    top_k = options.top_k
    if not isinstance(top_k, int) or isinstance(top_k, bool):
        invalid("top_k", f"must be an integer, got {type(top_k).__name__}")
    if top_k < 1:
        invalid("top_k", f"must be at least 1, got {top_k}")
    if options.strategy not in STRATEGIES:
        close = difflib.get_close_matches(str(options.strategy), STRATEGIES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        invalid(
            "strategy",
            f"unknown strategy {options.strategy!r}{hint}; known: {', '.join(STRATEGIES)}",
        )
    targets = options.target_data_source_ids
    if isinstance(targets, str) or not isinstance(targets, Sequence):
        invalid("target_data_source_ids", f"must be a tuple of ids, got {type(targets).__name__}")
    for target in targets:
        if not isinstance(target, str):
            invalid("target_data_source_ids", f"holds a {type(target).__name__}, not an id")


def check_documents(documents: object) -> list[str]:
    """Refuse a batch with a bad document; return each document's metadata as JSON text.

    A batch is a sequence of `IngestedDocument` with distinct ids; an id is a non-blank string,
    the content a string, the data source ``None`` or a non-blank string, the metadata a mapping
    that JSON can hold.
    """
    if isinstance(documents, str | bytes) or not isinstance(documents, Sequence):
        invalid("documents", f"must be a sequence of documents, got {type(documents).__name__}")
    seen: set[str] = set()
    metadata: list[str] = []
    for position, document in enumerate(documents):
        field = f"documents[{position}]"
        if not isinstance(document, IngestedDocument):
            invalid(field, f"must be an IngestedDocument, got {type(document).__name__}")
        _check_document(field, document)
        if document.id in seen:
            invalid(f"{field}.id", f"{document.id!r} appears twice in one ingestion")
        seen.add(document.id)
        metadata.append(_metadata_json(field, document.metadata))
    return metadata


def _check_document(field: str, document: IngestedDocument) -> None:
    if not isinstance(document.id, str) or not document.id.strip():
        invalid(f"{field}.id", f"must be a non-empty string, got {document.id!r}")
    check_text(f"{field}.id", document.id)
    if not isinstance(document.content, str):
        invalid(f"{field}.content", f"must be a string, got {type(document.content).__name__}")
    check_text(f"{field}.content", document.content)
    source = document.data_source_id
    if source is not None and (not isinstance(source, str) or not source.strip()):
        invalid(f"{field}.data_source_id", f"must be None or a non-empty string, got {source!r}")
    if source is not None:
        check_text(f"{field}.data_source_id", source)


def _metadata_json(field: str, metadata: object) -> str:
    if not isinstance(metadata, Mapping):
        invalid(f"{field}.metadata", f"must be a mapping, got {type(metadata).__name__}")
    try:
        return json.dumps(dict(metadata), ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as error:
        invalid(f"{field}.metadata", f"must hold JSON values only ({error})")
