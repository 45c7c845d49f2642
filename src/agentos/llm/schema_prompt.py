"""The schema message: a JSON schema carried in the prompt (spec: Completion options).

A request with a ``response_schema`` whose payload cannot carry the schema (OpenAI's JSON mode,
the local model, a test double) gets it as one system message after the prompt's leading
system messages (`agentos.llm.model.with_schema_prompt`). `schema_instruction` is that
message's text; it names no provider, so every adapter that sends a schema this way sends the
same words.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["schema_instruction"]


def schema_instruction(schema: Mapping[str, Any]) -> str:
    """The system message that carries a schema the payload cannot enforce.

    It asks for a single JSON object matching ``schema`` and nothing else, with the schema as
    compact JSON (keys sorted, so the text is stable across runs: a prompt cache keeps it).
    """
    return (
        "Respond with a single JSON object that matches this JSON schema, and with nothing "
        "else:\n" + json.dumps(schema, ensure_ascii=False, sort_keys=True)
    )
