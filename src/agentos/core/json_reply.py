"""Reading the JSON object a model was asked to answer with.

Models asked for "only a JSON object" sometimes wrap it in a code fence or a sentence.
`parse_json_object()` tries the whole reply, then each fenced block, then the text between the
first ``{`` and the last ``}``, and returns the first that parses as a JSON object.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["parse_json_object"]

_FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object ``text`` holds, or ``None`` when none parses."""
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCED.finditer(text))]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None
