"""Capability discovery: the runtime's tools a request may need, in the priority-55 prompt slot.

Spec ("RAG trigger and discovery context": the loop "injects capability-discovery context when
discovery is configured"; reference §1.1: ``metadata.capabilityDiscovery.promptContext`` becomes
the ``Capability Discovery Context`` system prompt at priority 55). The spec's discovery page is
not ours (DESIGN §5.15): a `CapabilityDiscovery` is any object whose ``discover(query, tools)``
returns the context text (``None``: nothing to add); the runtime passes the user's input and the
tools its GMIs offer, and the text reaches the turn as ``TurnOptions.capability_discovery``.

`KeywordCapabilityDiscovery` ships: it scores each tool by the stemmed words its name and
description share with the query (English Porter stems, `agentos.nlp`), keeps those sharing at
least ``min_overlap`` words, best first (ties in the order the tools are offered), at most
``top_k``, and lists them one per line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.model import ToolDefinition
from agentos.nlp import stem, tokenize

__all__ = ["DISCOVERY_LEAD", "CapabilityDiscovery", "KeywordCapabilityDiscovery"]

DISCOVERY_LEAD = "Tools that may help with this request:"
"""The first line of `KeywordCapabilityDiscovery`'s context."""

_WORD_SPLIT = re.compile(r"[_\-.]+")
_STOP_WORDS = frozenset(
    {
        "the",
        "and",
        "for",
        "with",
        "this",
        "that",
        "you",
        "are",
        "can",
        "what",
        "how",
        "who",
        "why",
        "when",
        "please",
        "from",
        "into",
        "about",
        "your",
        "have",
        "has",
        "was",
        "were",
        "will",
        "would",
        "could",
        "should",
        "does",
        "did",
        "not",
        "but",
        "all",
        "any",
        "our",
        "its",
        "them",
        "they",
    }
)


@runtime_checkable
class CapabilityDiscovery(Protocol):
    """Finds the capabilities a request may need and words them for the prompt."""

    async def discover(self, query: str, tools: Sequence[ToolDefinition]) -> str | None:
        """The discovery context for ``query`` among ``tools`` (``None``: nothing to add)."""
        ...


class KeywordCapabilityDiscovery:
    """Tools ranked by the stemmed words they share with the query (see the module doc)."""

    def __init__(self, *, top_k: int = 5, min_overlap: int = 1) -> None:
        """Raises `GMIError` (``INVALID_ARGUMENT`` naming the option) for a count below 1."""
        for name, value in (("top_k", top_k), ("min_overlap", min_overlap)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise GMIError(
                    f"{name}: must be an integer >= 1, got {value!r}",
                    GMIErrorCode.INVALID_ARGUMENT,
                    {"option": name},
                )
        self.top_k = top_k
        self.min_overlap = min_overlap

    async def discover(self, query: str, tools: Sequence[ToolDefinition]) -> str | None:
        """The best-matching tools as ``- name: description`` lines, or ``None``."""
        wanted = _stems(query)
        if not wanted:
            return None
        scored = [
            (len(wanted & _stems(f"{_WORD_SPLIT.sub(' ', tool.name)} {tool.description}")), i)
            for i, tool in enumerate(tools)
        ]
        kept = sorted(
            ((score, i) for score, i in scored if score >= self.min_overlap),
            key=lambda pair: (-pair[0], pair[1]),
        )[: self.top_k]
        if not kept:
            return None
        lines = [f"- {tools[i].name}: {tools[i].description}".rstrip(": ") for _, i in kept]
        return "\n".join([DISCOVERY_LEAD, *lines])


def _stems(text: str) -> set[str]:
    tokens = tokenize(text.lower())
    return {stem(token) for token in tokens if len(token) > 2 and token not in _STOP_WORDS}
