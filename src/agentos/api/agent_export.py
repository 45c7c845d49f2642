"""An agent's options as a portable document (`agentos.api.agent.import_agent` reads one back).

The spec's Agent surface has ``export()``; `Agent` and `GmiAgent` both have it.

The document is plain JSON data::

    {"version": "1.0.0", "exported_at": "2026-11-30T22:24:00+00:00", "type": "agent",
     "config": {"runtime": "gmi", "name": "Tutor", "instructions": "...", ...},
     "omitted": ["api_key", "tools"], "metadata": {"author": "..."}}

``config`` holds every option whose value is plain data (strings, numbers, booleans, ``None``,
and lists and mappings of those). An option whose value is a live object (tools, a model
instance, hooks, a `SpendBudget`, stores, a memory provider, a usage ledger) cannot travel in a
document, so it is named in ``omitted`` for the importer to pass again. ``api_key`` is always
left out and named there too: a document gets shared, a key should not be (the TypeScript
export keeps it). So is the ``api_key`` of a fallback leg or of ``memory.embedding`` (DESIGN
§5.20): dropped, its place named in ``omitted`` (``fallback_providers[0].api_key``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final, Literal, NotRequired, TypedDict, cast

__all__ = ["EXPORT_VERSION", "AgentExport", "export_agent_config", "exported_config"]

EXPORT_VERSION: Final = "1.0.0"
"""The document version this code writes and reads."""

_SECRETS: Final = frozenset({"api_key"})


class AgentExport(TypedDict):
    """An exported agent (see the module doc)."""

    version: str
    exported_at: str
    type: Literal["agent"]
    config: dict[str, Any]
    omitted: list[str]
    metadata: NotRequired[dict[str, Any]]


def _plain(value: object) -> bool:
    """Whether ``value`` is JSON data that reads back as itself."""
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(_plain(item) for item in value)
    if isinstance(value, Mapping):
        return all(isinstance(key, str) and _plain(item) for key, item in value.items())
    return False


def _copy(value: Any, path: str = "", omitted: list[str] | None = None) -> Any:
    """A copy of plain data; with ``omitted``, without secrets, each dropped one named there."""
    if isinstance(value, list | tuple):
        return [_copy(item, f"{path}[{i}]", omitted) for i, item in enumerate(value)]
    if isinstance(value, Mapping):
        kept = {}
        for key, item in value.items():
            if omitted is not None and key in _SECRETS:
                omitted.append(f"{path}.{key}")
            else:
                kept[key] = _copy(item, f"{path}.{key}", omitted)
        return kept
    return value


def export_agent_config(
    options: Mapping[str, Any],
    *,
    runtime: Literal["legacy", "gmi"],
    metadata: Mapping[str, Any] | None = None,
) -> AgentExport:
    """The document for an agent built from ``options`` on ``runtime`` (see the module doc).

    ``metadata`` (a name, a description, an author, tags: any plain data) is kept as given; a
    value that is not plain data raises `ValueError` naming ``metadata``.
    """
    if metadata is not None and not (isinstance(metadata, Mapping) and _plain(metadata)):
        raise ValueError("metadata must be a mapping of plain JSON data (str keys)")
    config: dict[str, Any] = {}
    omitted: list[str] = []
    for name, value in options.items():
        if name in _SECRETS or not _plain(value):
            omitted.append(name)
        else:
            config[name] = _copy(value, name, omitted)
    if runtime == "gmi":
        config["runtime"] = "gmi"  # gmi() agents come back as gmi() agents
    document: AgentExport = {
        "version": EXPORT_VERSION,
        "exported_at": datetime.now(UTC).isoformat(),
        "type": "agent",
        "config": config,
        "omitted": sorted(omitted),
    }
    if metadata is not None:
        document["metadata"] = cast("dict[str, Any]", _copy(metadata))
    return document


def exported_config(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The options an exported ``document`` holds, after checking it is one.

    A document of another version or type, or without a ``config`` mapping, raises
    `ValueError` naming the field.
    """
    if not isinstance(document, Mapping):
        raise ValueError(f"an agent export is a mapping, not {type(document).__name__}")
    if document.get("version") != EXPORT_VERSION:
        raise ValueError(
            f"version: {document.get('version')!r} is not an agent export version this agentos "
            f"reads ({EXPORT_VERSION!r})"
        )
    if document.get("type") != "agent":
        raise ValueError(f"type: {document.get('type')!r} is not 'agent'")
    config = document.get("config")
    if not isinstance(config, Mapping):
        raise ValueError("config: an agent export needs its options as a mapping")
    return config
