"""JSON grammars for the local model: the reply can only be JSON the schema allows.

llama.cpp constrains sampling with a GBNF grammar: at each step the sampler keeps only tokens
that continue a string of the grammar, and the end of generation only once the grammar is
complete. `schema_grammar` turns a JSON schema into that grammar with llama-cpp-python's own
converter (``json_schema_to_gbnf``, llama.cpp's ``json-schema-to-grammar``); its whitespace
is at most one space between tokens, so a reply cannot run away in blanks.
`json_object_grammar` is llama.cpp's grammar for any one JSON object.

`fitted_object_schema` shapes an object schema so that *every* answer its grammar allows fits in
a token budget: it keeps the required properties (and the ones a caller names), drops the
others, and bounds each free-text string to printable ASCII of a length computed from the budget
(`longest_answer`). Every token the grammar lets through is at least one byte, and ASCII text
has one byte per character, so an answer of at most N characters takes at most N tokens: a
reply capped at the budget is always whole JSON. Metaprompts on the local model use it (issue
11, item 13).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

__all__ = [
    "SAFE_TEXT_CHARS",
    "fitted_object_schema",
    "json_object_grammar",
    "longest_answer",
    "schema_grammar",
]

SAFE_TEXT_CHARS = "[ -!#-Z^-~]"
"""The characters a fitted free-text string may hold: printable ASCII but ``"``, ``[``, ``\\``,
``]`` (no escapes to write, one byte each)."""

MAX_FITTED_STRING = 200
"""The longest a fitted free-text string gets, however large the budget."""

# The fixed cost, in characters, of a value of each bounded kind: the converter's rule for it
# plus the optional space after it.
_SCALAR_CHARS = {"boolean": len("false") + 1, "null": len("null") + 1}
_INTEGER_CHARS = 1 + 16 + 1  # sign, up to 16 digits, space
_NUMBER_CHARS = 1 + 16 + 1 + 16 + 1 + 1 + 16 + 1  # sign, int, ".", fraction, "e", sign, exp, space


def schema_grammar(schema: Mapping[str, Any]) -> str:
    """The GBNF grammar of ``schema`` (llama-cpp-python's ``json_schema_to_gbnf``).

    Raises:
        ValueError: the converter does not support something in the schema.
        ModuleNotFoundError: llama-cpp-python is not installed.
    """
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        return str(json_schema_to_gbnf(json.dumps(schema)))
    except (AssertionError, KeyError, TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"no grammar for this schema: {exc!r}") from exc


def _value_chars(schema: Mapping[str, Any], name: str) -> int | None:
    """The longest text a bounded value may take, ``None`` for free text; raises if unbounded."""
    if "const" in schema:
        return len(json.dumps(schema["const"])) + 1
    if "enum" in schema:
        return max(len(json.dumps(value)) for value in schema["enum"]) + 1
    kind = schema.get("type")
    if kind == "string":
        return None
    if kind in _SCALAR_CHARS:
        return _SCALAR_CHARS[kind]
    if kind == "integer":
        return _INTEGER_CHARS
    if kind == "number":
        return _NUMBER_CHARS
    raise ValueError(f"property {name!r} ({kind or 'untyped'}) cannot be bounded in length")


def _object_overhead(names: Collection[str]) -> int:
    """Braces, keys, colons, commas and the optional spaces around them."""
    braces = 2 + 2  # "{" space ... "}" space
    keys = sum(len(json.dumps(name)) + 3 for name in names)  # key space ":" space
    commas = 2 * max(0, len(names) - 1)  # "," space
    return braces + keys + commas


def longest_answer(schema: Mapping[str, Any]) -> int:
    """The most characters an answer of a fitted schema's grammar can take.

    ``schema`` is an object whose properties are all required, each a ``const``, an ``enum``, a
    boolean, null, integer or number, or a string with a ``pattern`` of `SAFE_TEXT_CHARS`.

    Raises:
        ValueError: a property is of another kind (its length has no bound).
    """
    properties: Mapping[str, Any] = schema.get("properties", {})
    total = _object_overhead(properties)
    for name, prop in properties.items():
        chars = _value_chars(prop, name)
        if chars is None:
            length = _pattern_length(prop.get("pattern"))
            if length is None:
                raise ValueError(f"string property {name!r} has no bounded pattern")
            chars = 2 + length + 1  # quotes, text, space
        total += chars
    return total


def _pattern_length(pattern: object) -> int | None:
    """The upper length of a `_text_pattern`, ``None`` for any other pattern."""
    prefix = f"^{SAFE_TEXT_CHARS}{{1,"
    if not isinstance(pattern, str) or not pattern.startswith(prefix):
        return None
    tail = pattern.removeprefix(prefix).removesuffix("}$")
    return int(tail) if tail.isdigit() else None


def _text_pattern(length: int) -> str:
    return f"^{SAFE_TEXT_CHARS}{{1,{length}}}$"


def fitted_object_schema(
    schema: Mapping[str, Any], *, max_tokens: int, require: Collection[str] = ()
) -> dict[str, Any]:
    """``schema`` cut down so every answer its grammar allows takes at most ``max_tokens``.

    The result lists the schema's required properties and those of ``require`` that it
    defines, in the schema's order, all required; the other properties are dropped. Free-text
    strings become `SAFE_TEXT_CHARS` text of 1 to N characters, N shared out of what the budget
    leaves after the keys and the bounded values (at most `MAX_FITTED_STRING`); descriptions
    stay, so the schema still reads as the original.

    Raises:
        ValueError: ``schema`` is no object schema, a kept property cannot be bounded (an array,
            a nested object), or the budget cannot hold the keys with one character per string.
    """
    properties = schema.get("properties")
    if schema.get("type", "object") != "object" or not isinstance(properties, Mapping):
        raise ValueError("a fitted schema needs an object schema with properties")
    wanted = set(schema.get("required", ())) | set(require)
    kept = {name: dict(prop) for name, prop in properties.items() if name in wanted}
    fixed = _object_overhead(kept)
    free: list[str] = []
    for name, prop in kept.items():
        chars = _value_chars(prop, name)
        if chars is None:
            free.append(name)
            fixed += 3  # quotes and space
        else:
            fixed += chars
    room = max_tokens - fixed
    length = min(MAX_FITTED_STRING, room // len(free)) if free else 0
    if room < 0 or (free and length < 1):
        raise ValueError(f"{max_tokens} tokens cannot hold an answer with keys {', '.join(kept)}")
    for name in free:
        kept[name] = {**kept[name], "pattern": _text_pattern(length)}
        kept[name].pop("maxLength", None)
        kept[name].pop("minLength", None)
    return {"type": "object", "properties": kept, "required": list(kept)}


def json_object_grammar() -> str:
    """llama.cpp's ``grammars/json.gbnf``: any one JSON object (as llama-cpp-python ships it)."""
    from llama_cpp.llama_grammar import JSON_GBNF

    return str(JSON_GBNF)
