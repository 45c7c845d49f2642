"""Checking a tool's parameters against the JSON schema meta-schema, once per distinct schema."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

import jsonschema

__all__ = ["check_json_schema"]


def check_json_schema(parameters: Mapping[str, Any]) -> None:
    """Check ``parameters`` against the JSON schema meta-schema (raises `jsonschema.SchemaError`).

    Checking a schema costs about 0.5 ms; the same schemas come back often (an agency builds its
    ``delegate_to_<role>`` tools on every call), so a valid one is remembered by its canonical
    JSON text. A schema that JSON cannot encode is checked every time.
    """
    try:
        canonical = json.dumps(parameters, sort_keys=True)
    except (TypeError, ValueError):
        jsonschema.Draft202012Validator.check_schema(dict(parameters))
        return
    _check_canonical_schema(canonical)


@functools.lru_cache(maxsize=512)
def _check_canonical_schema(canonical: str) -> None:
    # lru_cache keeps only calls that return: an invalid schema raises and is checked again.
    jsonschema.Draft202012Validator.check_schema(json.loads(canonical))
