"""OpenAI's strict structured outputs: whether a JSON schema fits them.

A ``response_schema`` goes to OpenAI as the strict ``json_schema`` format when the schema fits
the subset "Structured Outputs > Supported schemas" allows (`strict_mode_problem` says why one
does not); otherwise the request uses JSON mode with the schema in the prompt
(`agentos.llm.providers._openai_wire`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["strict_mode_problem"]

# OpenAI's strict mode: the JSON Schema subset of "Structured Outputs > Supported schemas".
_STRICT_KEYWORDS: Final = frozenset(
    {
        # structure
        "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum",
        "const", "$ref", "$defs", "definitions",
        # annotations (the SDK's own strict helper keeps them)
        "title", "description", "default",
        # strings, numbers, arrays
        "pattern", "format",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minItems", "maxItems",
    }
)  # fmt: skip
_STRICT_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_JSON_TYPES: Final = frozenset(
    {"string", "number", "integer", "boolean", "object", "array", "null"}
)
_MAX_DEPTH: Final = 10
_MAX_PROPERTIES: Final = 5000
_MAX_ENUM_VALUES: Final = 1000


def strict_mode_problem(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` does not fit OpenAI's strict structured outputs, or ``None`` if it fits.

    Strict mode takes a root object (not ``anyOf``) whose every object lists all its
    properties in ``required`` and sets ``additionalProperties: false``, built from the
    keywords OpenAI supports (a ``$ref`` alone in its node), within 10 levels of nesting (the
    root and the leaves count), 5,000 properties and 1,000 enum values. The check is
    conservative: a schema it refuses goes to JSON mode, which any schema survives, while a
    schema strict mode rejects would fail the call.
    """
    if schema.get("type") != "object" or "anyOf" in schema:
        return "the root must be an object schema, not a union"
    walk = _StrictWalk()
    problem = walk.node(schema, "#", 1)
    for key in ("$defs", "definitions"):
        defs = schema.get(key)
        if problem is None and isinstance(defs, Mapping):
            problem = walk.definitions(defs, f"#/{key}", 1)
    if problem is None and walk.properties > _MAX_PROPERTIES:
        problem = f"more than {_MAX_PROPERTIES} object properties"
    if problem is None and walk.enum_values > _MAX_ENUM_VALUES:
        problem = f"more than {_MAX_ENUM_VALUES} enum values"
    return problem


class _StrictWalk:
    """One pass over a schema, counting what strict mode limits."""

    def __init__(self) -> None:
        self.properties = 0
        self.enum_values = 0

    def definitions(self, defs: Mapping[str, Any], path: str, depth: int) -> str | None:
        for name, sub in defs.items():
            problem = self.node(sub, f"{path}/{name}", depth)
            if problem is not None:
                return problem
        return None

    def node(self, node: object, path: str, depth: int) -> str | None:
        if not isinstance(node, Mapping):
            return f"{path} is not a schema object"
        if depth > _MAX_DEPTH:
            return f"{path} nests deeper than {_MAX_DEPTH} levels"
        unsupported = sorted(set(node) - _STRICT_KEYWORDS)
        if unsupported:
            return f"{path} uses {', '.join(unsupported)}"
        if "$ref" in node:
            ref = node["$ref"]
            if len(node) > 1 or not isinstance(ref, str) or not ref.startswith("#"):
                return f"{path} has a $ref beside other keywords or outside the schema"
            return None
        types = node.get("type")
        kinds = [types] if isinstance(types, str) else types
        if kinds is None:
            if not any(key in node for key in ("anyOf", "enum", "const")):
                return f"{path} has no type"
            kinds = []
        if not isinstance(kinds, list) or not all(kind in _JSON_TYPES for kind in kinds):
            return f"{path} has an unknown type {types!r}"
        if "format" in node and node["format"] not in _STRICT_FORMATS:
            return f"{path} uses the format {node['format']!r}"
        if isinstance(node.get("enum"), list):
            self.enum_values += len(node["enum"])
        for key in ("$defs", "definitions"):
            if isinstance(node.get(key), Mapping) and path != "#":
                problem = self.definitions(node[key], f"{path}/{key}", depth)
                if problem is not None:
                    return problem
        if "object" in kinds or "properties" in node:
            problem = self._object(node, path, depth)
            if problem is not None:
                return problem
        if "array" in kinds or "items" in node:
            if not isinstance(node.get("items"), Mapping):
                return f"{path} is an array without an items schema"
            problem = self.node(node["items"], f"{path}/items", depth + 1)
            if problem is not None:
                return problem
        variants = node.get("anyOf")
        if variants is not None:
            if not isinstance(variants, list) or not variants:
                return f"{path}/anyOf is not a list of schemas"
            for index, variant in enumerate(variants):
                problem = self.node(variant, f"{path}/anyOf/{index}", depth)
                if problem is not None:
                    return problem
        return None

    def _object(self, node: Mapping[str, Any], path: str, depth: int) -> str | None:
        if node.get("additionalProperties") is not False:
            return f"{path} does not set additionalProperties to false"
        properties = node.get("properties", {})
        if not isinstance(properties, Mapping):
            return f"{path}/properties is not an object"
        required = node.get("required", [])
        if not isinstance(required, list) or set(required) != set(properties):
            return f"{path} does not list every property as required"
        self.properties += len(properties)
        for name, sub in properties.items():
            problem = self.node(sub, f"{path}/properties/{name}", depth + 1)
            if problem is not None:
                return problem
        return None
