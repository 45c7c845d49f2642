"""Option checks shared by the packs: each refusal names its option (issue 13 item 6)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agentos.api.call_checks import invalid

from ._decision import GuardrailStage

__all__ = ["check_id", "check_stages", "map_strings", "token_spans"]

_TOKEN = re.compile(r"\S+")


def check_id(value: object) -> str:
    """``value`` as a guardrail id: a non-blank string, else `GMIError` naming ``id``."""
    if not isinstance(value, str) or not value.strip():
        invalid("id", f"must be a non-blank string, not {value!r}")
    return value


def check_stages(value: object, allowed: Iterable[GuardrailStage]) -> frozenset[GuardrailStage]:
    """``value`` as a non-empty set of stages among ``allowed``, else `GMIError` (``stages``)."""
    names = sorted(stage.value for stage in allowed)
    if isinstance(value, str) or not isinstance(value, Iterable):
        invalid("stages", f"must be a collection of stages among {names}, not {value!r}")
    stages: set[GuardrailStage] = set()
    for item in value:
        if not isinstance(item, str) or item not in names:
            invalid("stages", f"unknown stage {item!r} (known: {', '.join(names)})")
        stages.add(GuardrailStage(item))
    if not stages:
        invalid("stages", "name at least one stage")
    return frozenset(stages)


def token_spans(text: str) -> list[tuple[int, int]]:
    """Where each whitespace-separated token of ``text`` starts and ends."""
    return [match.span() for match in _TOKEN.finditer(text)]


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` (tool arguments) with ``change`` applied to every string inside it.

    Maps and lists are copied (a tuple becomes a list, as JSON has it); other values are kept.
    """
    if isinstance(value, str):
        return change(value)
    if isinstance(value, Mapping):
        return {key: map_strings(item, change) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [map_strings(item, change) for item in value]
    return value
