"""Structured answers: a response schema in, a validated object out.

``response_schema`` is a pydantic model class or a JSON schema dict. The model's answer (the
step's text, wherever its provider put the schema) becomes ``result.object`` only when it parses,
validates and was not stopped by the output limit; otherwise `ObjectGenerationError`, which names
a cut-off (spec: "Completion options").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import jsonschema
from pydantic import BaseModel, ValidationError

from agentos.core.errors import GMIError, GMIErrorCode

__all__ = ["ObjectGenerationError", "ResponseSchema", "StructuredSpec", "structured_spec"]

ResponseSchema = type[BaseModel] | dict[str, Any]
"""A pydantic model class, or a JSON schema of the answer."""

_NAME = re.compile(r"[^A-Za-z0-9_-]+")


class ObjectGenerationError(GMIError):
    """The model's answer is not an object of the schema (code ``PARSING_ERROR``).

    ``text`` is the answer as received and ``finish_reason`` why the step ended; an answer the
    output limit cut off (``length``) is refused whatever its JSON, and the message says so.
    """

    def __init__(self, message: str, *, text: str, finish_reason: str) -> None:
        super().__init__(
            message,
            GMIErrorCode.PARSING_ERROR,
            {"finish_reason": finish_reason, "text_preview": text[:200]},
            component="api",
        )
        self.text = text
        self.finish_reason = finish_reason


@dataclass(frozen=True, slots=True)
class StructuredSpec:
    """A response schema ready to send (``json_schema``, ``name``) and to check answers with."""

    json_schema: dict[str, Any]
    name: str
    model: type[BaseModel] | None

    def parse(self, text: str, finish_reason: str) -> Any:
        """The validated object of ``text``; raises `ObjectGenerationError`."""
        if finish_reason == "length":
            raise ObjectGenerationError(
                "The answer was cut off by the output limit (finish reason 'length') before it "
                "was a complete object; raise max_tokens",
                text=text,
                finish_reason=finish_reason,
            )
        if self.model is not None:
            try:
                return self.model.model_validate_json(text)
            except ValidationError as exc:
                raise ObjectGenerationError(
                    f"The answer does not match {self.name}: {exc.errors()[0]['msg']}",
                    text=text,
                    finish_reason=finish_reason,
                ) from exc
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ObjectGenerationError(
                f"The answer is not JSON: {exc.msg} at position {exc.pos}",
                text=text,
                finish_reason=finish_reason,
            ) from exc
        errors = sorted(
            jsonschema.Draft202012Validator(self.json_schema).iter_errors(value),
            key=lambda e: list(e.path),
        )
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path) or "<root>"
            raise ObjectGenerationError(
                f"The answer does not match {self.name} at {where}: {errors[0].message}",
                text=text,
                finish_reason=finish_reason,
            )
        return value


def structured_spec(schema: ResponseSchema, name: str | None = None) -> StructuredSpec:
    """Check ``schema`` and name it (``schema_name``, else the model's name, else ``response``).

    Raises `GMIError` naming ``response_schema`` for anything that is not a pydantic model class
    or a valid JSON schema of an object.
    """
    model: type[BaseModel] | None = None
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        model = schema
        json_schema = schema.model_json_schema()
        default_name = schema.__name__
    elif isinstance(schema, dict):
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise GMIError(
                f"response_schema: not a valid JSON schema: {exc.message}",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": "response_schema"},
            ) from exc
        json_schema = dict(schema)
        default_name = str(schema.get("title") or "response")
    else:
        raise GMIError(
            "response_schema: give a pydantic model class or a JSON schema dict, "
            f"not {type(schema).__name__}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "response_schema"},
        )
    if json_schema.get("type") != "object":
        raise GMIError(
            "response_schema: the answer must be an object (a schema with type 'object')",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "response_schema"},
        )
    chosen = _NAME.sub("_", name or default_name).strip("_")[:64] or "response"
    return StructuredSpec(json_schema, chosen, model)
