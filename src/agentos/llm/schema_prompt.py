"""The schema message: a JSON schema carried in the prompt (spec: Completion options).

A request with a ``response_schema`` whose payload cannot carry the schema (OpenAI's JSON mode,
the local model, a test double, Anthropic's ``prompt`` route) gets it as one system message
after the prompt's leading system messages (`agentos.llm.model.with_schema_prompt`).
`schema_instruction` is that message's text: a lead sentence, then the schema as compact JSON.
Its words name no provider; `NEUTRAL_WORDING` is what every adapter sends unless it has sent
other words since before they were shared (Anthropic's, `SchemaWording`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["NEUTRAL_WORDING", "SchemaWording", "schema_instruction"]


@dataclass(frozen=True, slots=True)
class SchemaWording:
    """How a schema message is worded.

    ``lead`` is the sentence before the schema, with ``{label}`` where the schema's name goes
    (`` (name)``, or nothing without a name); ``sort_keys`` sorts the schema's keys, so the text
    is stable across runs however the schema was built (a prompt cache keeps it).
    """

    lead: str
    sort_keys: bool = True


NEUTRAL_WORDING = SchemaWording(
    "Respond with a single JSON object that matches this JSON schema{label}, and with nothing else"
)
"""The words every adapter that sends a schema in the prompt uses by default."""


def schema_instruction(
    schema: Mapping[str, Any], name: str | None = None, *, wording: SchemaWording = NEUTRAL_WORDING
) -> str:
    """The system message that carries a schema the payload cannot enforce.

    It asks for JSON matching ``schema`` and nothing else (``wording``'s lead, naming ``name``
    when given), followed by a colon, a new line and the schema as compact JSON.
    """
    label = f" ({name})" if name else ""
    text = json.dumps(schema, ensure_ascii=False, sort_keys=wording.sort_keys)
    return f"{wording.lead.format(label=label)}:\n{text}"
