"""Structured output on Anthropic (private to `providers.anthropic`): per-model traits and routes.

The route a schema takes (spec: Completion options), decided per request by `schema_plan`:

- ``output_format``: the JSON output format (``output_config.format``), when the model has it
  and the schema fits the format's limits (`fits_output_format`); the schema is sent closed
  (``additionalProperties: false`` on every object) with the keywords the format's grammar
  does not take moved into descriptions, as the SDK's own helper does;
- ``tool``: a forced call of a tool named after the schema, when the model accepts a forced
  tool choice, the schema's root is an object, no thinking budget is set (thinking cannot run
  with a forced tool) and ``tool_choice`` is not passed through (``auto``, ``none`` or another
  tool's name);
- ``prompt``: otherwise, the schema as a system instruction after the leading system messages.

The per-model tables below are data that changes with Anthropic's releases.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentos.llm.model import CompletionOptions, SchemaRoute
from agentos.llm.schema_prompt import SchemaWording

__all__ = [
    "SCHEMA_WORDING",
    "ModelTraits",
    "SchemaPlan",
    "fits_output_format",
    "for_output_format",
    "model_traits",
    "schema_plan",
]

_DEFAULT_SCHEMA_TOOL = "structured_output"

# --- what each model family accepts: data that changes with Anthropic's releases --------------
# Model ids are compared without a date suffix (claude-sonnet-4-20250514 -> claude-sonnet-4) or
# "-latest". Last reviewed against the spec and Anthropic's docs in November 2026.

# No JSON output format: Claude 3 and the first Claude 4 models, which answer every schema with a
# forced tool call (spec: "every schema on Claude Opus 4 and Sonnet 4").
_NO_OUTPUT_FORMAT = frozenset(
    {"claude-opus-4", "claude-opus-4-0", "claude-sonnet-4", "claude-sonnet-4-0"}
    | {"claude-4-opus", "claude-4-sonnet"}
)
# Refuse a forced tool choice (spec: Claude Opus 5.5, Sonnet 5.5, Fable, Mythos 5.1).
_NO_FORCED_TOOL = frozenset({"claude-opus-5-5", "claude-sonnet-5-5", "claude-mythos-5-1"})
_NO_FORCED_TOOL_PREFIXES = ("claude-fable",)
# Take a thinking budget ({"type": "enabled", "budget_tokens": n}) and not adaptive thinking:
# the models before 4.6. The 4.6 models deprecate the budget for {"type": "adaptive"}, Opus 4.7
# and later reject it with a 400; any model not listed gets adaptive thinking.
_MANUAL_BUDGET = frozenset(
    {"claude-opus-4", "claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-5"}
    | {"claude-sonnet-4", "claude-sonnet-4-0", "claude-sonnet-4-5", "claude-haiku-4-5"}
    | {"claude-4-opus", "claude-4-sonnet"}
)
_CLAUDE_3 = "claude-3"

_DATE_SUFFIX = re.compile(r"-(\d{8}|latest)$")


@dataclass(frozen=True, slots=True)
class ModelTraits:
    """What a Claude model accepts, as far as this adapter's choices depend on it."""

    output_format: bool
    forced_tool_choice: bool
    manual_thinking_budget: bool


def model_traits(model_id: str) -> ModelTraits:
    """The traits of ``model_id``; a model not in the tables is taken to be a current one."""
    family = _DATE_SUFFIX.sub("", model_id.strip().lower())
    claude_3 = family.startswith(_CLAUDE_3)
    return ModelTraits(
        output_format=not claude_3 and family not in _NO_OUTPUT_FORMAT,
        forced_tool_choice=family not in _NO_FORCED_TOOL
        and not family.startswith(_NO_FORCED_TOOL_PREFIXES),
        manual_thinking_budget=claude_3 or family in _MANUAL_BUDGET,
    )


# --- structured output -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SchemaPlan:
    """Where a request puts its schema: the route and, for ``tool``, the tool's name."""

    route: SchemaRoute
    tool_name: str | None = None


def schema_plan(model_id: str, options: CompletionOptions) -> SchemaPlan | None:
    """Where the schema of ``options`` goes on ``model_id`` (``None``: no schema asked for)."""
    schema = options.response_schema
    if schema is None:
        return None
    traits = model_traits(model_id)
    if traits.output_format and fits_output_format(schema):
        return SchemaPlan("output_format")
    name = _tool_name(options.schema_name)
    choice = options.tool_choice
    passthrough = choice is not None and choice not in ("required", name)
    if (
        traits.forced_tool_choice
        and _object_root(schema)
        and options.thinking_budget_tokens is None  # thinking cannot run with a forced tool
        and not passthrough
    ):
        return SchemaPlan("tool", name)
    return SchemaPlan("prompt")


def fits_output_format(schema: dict[str, Any]) -> bool:
    """Whether the JSON output format can carry ``schema``.

    It cannot carry records (an object whose ``additionalProperties`` is a schema or true,
    ``patternProperties``, or an object with no ``properties`` that does not forbid others:
    the format closes every object) or recursive schemas.
    """
    return not any(_is_record(node) for node in _subschemas(schema)) and not _recursive(schema)


def _tool_name(schema_name: str | None) -> str:
    # Tool names must match ^[a-zA-Z0-9_-]{1,64}$.
    cleaned = re.sub(r"[^a-zA-Z0-9_-]", "_", schema_name or "")[:64]
    return cleaned or _DEFAULT_SCHEMA_TOOL


def _object_root(schema: dict[str, Any]) -> bool:
    # A tool's input_schema must be an object schema.
    return schema.get("type") == "object" or ("properties" in schema and "type" not in schema)


def _subschemas(schema: Any) -> Iterator[dict[str, Any]]:
    """``schema`` and every schema nested in it, by the JSON Schema keywords that nest them."""
    if not isinstance(schema, dict):
        return
    yield schema
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        nested = schema.get(key)
        if isinstance(nested, dict):
            for value in nested.values():
                yield from _subschemas(value)
    for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
        yield from _subschemas(schema.get(key))
    for key in ("anyOf", "oneOf", "allOf", "prefixItems", "items"):
        nested = schema.get(key)
        if isinstance(nested, list):
            for value in nested:
                yield from _subschemas(value)


def _is_record(node: dict[str, Any]) -> bool:
    if node.get("type") != "object" and "properties" not in node:
        return False
    extra = node.get("additionalProperties")
    if "patternProperties" in node or extra is True or isinstance(extra, dict):
        return True
    return "properties" not in node and extra is not False


def _recursive(schema: dict[str, Any]) -> bool:
    """Whether a ``$ref`` reaches the root or a definition that refers back to itself."""
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        for name, value in (schema.get(key) or {}).items():
            defs[f"#/{key}/{name}"] = value

    def refs(node: Any) -> set[str]:
        return {sub["$ref"] for sub in _subschemas(node) if isinstance(sub.get("$ref"), str)}

    if "#" in refs({k: v for k, v in schema.items() if k not in ("$defs", "definitions")}):
        return True
    graph = {name: refs(value) for name, value in defs.items()}
    if any("#" in targets for targets in graph.values()):
        return True
    visiting: set[str] = set()
    done: set[str] = set()

    def cycle(name: str) -> bool:
        if name in done:
            return False
        if name in visiting:
            return True
        visiting.add(name)
        found = any(cycle(target) for target in graph.get(name, ()) if target in graph)
        visiting.discard(name)
        done.add(name)
        return found

    return any(cycle(name) for name in graph)


# Keywords the output format's grammar does not take. Like the SDK's own transform, the schema
# keeps them as text in its description, so the model still sees them.
_UNSUPPORTED_KEYWORDS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
)
_STRING_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


def for_output_format(schema: Any) -> Any:
    """``schema`` in the shape the output format takes: closed objects, no unsupported bounds."""
    if isinstance(schema, list):
        return [for_output_format(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    moved: dict[str, Any] = {}
    for key, value in schema.items():
        unsupported = (
            key in _UNSUPPORTED_KEYWORDS
            or (key == "minItems" and value not in (0, 1))
            or (key == "format" and schema.get("type") == "string" and value not in _STRING_FORMATS)
        )
        if unsupported:
            moved[key] = value
        elif key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: for_output_format(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "prefixItems", "not"):
            out[key] = for_output_format(value)
        else:
            out[key] = value
    if out.get("type") == "object" or "properties" in out:
        out["additionalProperties"] = False
    if moved:
        note = "{" + ", ".join(f"{key}: {value}" for key, value in moved.items()) + "}"
        description = out.get("description")
        out["description"] = f"{description}\n\n{note}" if description else note
    return out


SCHEMA_WORDING = SchemaWording(
    "Respond only with JSON that matches this JSON schema{label}, with no other text and no "
    "Markdown code fence",
    sort_keys=False,
)
"""The words of the ``prompt`` route's schema message (`schema_instruction`).

Not the neutral words: the route also serves schemas whose root is not an object (a forced
tool needs one), so it asks for "JSON" rather than "a single JSON object"; Claude tends to
wrap JSON in a Markdown fence unless told not to; and the schema keeps its own key order, as
this adapter has always sent it (the provider tests pin the exact text).
"""
