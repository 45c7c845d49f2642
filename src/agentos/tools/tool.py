"""`Tool`: a function the model can call, with a JSON schema for its arguments.

Make one from a typed Python function (`Tool.from_function()` or the `@tool` decorator: the
schema comes from the signature, descriptions from the docstring (Google or Sphinx style; a
parameter the docstring does not describe keeps an ``Annotated[..., Field(description=...)]``
description), arguments are validated by pydantic, sync and async functions both work) or from an
explicit JSON schema (`Tool.from_schema()`, arguments validated against the schema).

A tool may declare ``required_capabilities`` (reference §1.24 ``ITool.requiredCapabilities``),
which a `ToolOrchestrator` checks against the persona's allowed capabilities, and
``has_side_effects`` (``ITool.hasSideEffects``: the tool changes something outside the
conversation), which makes an orchestrator with human-in-the-loop approval ask before running it.
A handler parameter annotated with `ToolExecutionContext` receives the call's context and is left
out of the schema.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from types import UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints, overload

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import to_jsonable_python

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.model import ToolDefinition
from agentos.tools.context import ToolExecutionContext
from agentos.tools.schema_check import check_json_schema

__all__ = ["Tool", "ToolArgumentsError", "tool"]

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Keyword Args|Keyword Arguments|Other Parameters|"
    r"Returns?|Raises?|Yields?|Examples?|Notes?|Warnings?|Warns|Attributes|See Also|"
    r"References|Todo):\s*$"
)
_PARAM_SECTIONS = (
    "args",
    "arguments",
    "parameters",
    "keyword args",
    "keyword arguments",
    "other parameters",
)
_GOOGLE_PARAM = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(
    r"^\s*:(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$"
)
_SPHINX_FIELD = re.compile(r"^\s*:\w+(\s[^:]*)?:")
"""Any other Sphinx field (``:returns:``, ``:raises X:``, ``:type x:``): it ends a parameter."""

Handler = Callable[..., Any]


class ToolArgumentsError(GMIError):
    """The model's arguments do not fit the tool's schema (code ``VALIDATION_ERROR``)."""

    def __init__(self, tool_name: str, problems: list[str]) -> None:
        super().__init__(
            f"Invalid arguments for tool '{tool_name}': " + "; ".join(problems),
            GMIErrorCode.VALIDATION_ERROR,
            {"tool_name": tool_name, "problems": problems},
            component="tools",
        )


class Tool:
    """A callable tool: ``name``, ``description``, ``parameters`` (JSON schema) and a handler.

    ``required_capabilities`` are the capabilities a persona must allow for the tool to run;
    ``has_side_effects`` marks a tool that acts on the world (sends, writes, deletes), which a
    `ToolOrchestrator` with human-in-the-loop approval runs only once the approver agrees.
    """

    def __init__(
        self,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        handler: Handler,
        *,
        validate: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        required_capabilities: Iterable[str] = (),
        has_side_effects: bool = False,
    ) -> None:
        if not _NAME.fullmatch(name):
            raise ValueError(
                f"tool name {name!r} must be 1-64 letters, digits, '_' or '-' "
                "(providers reject other names)"
            )
        if parameters.get("type", "object") != "object":
            raise ValueError(f"tool {name!r}: parameters must be a JSON schema of type 'object'")
        self.name = name
        self.description = description
        self.parameters: dict[str, Any] = dict(parameters)
        self._handler = handler
        self._validate = validate or self._validate_with_schema
        self.required_capabilities = _capabilities(name, required_capabilities)
        if not isinstance(has_side_effects, bool):
            raise TypeError(f"tool {name!r}: has_side_effects must be a bool")
        self.has_side_effects = has_side_effects
        self._context_parameter = _context_parameter(handler)

    @classmethod
    def from_function(
        cls,
        function: Handler,
        *,
        name: str | None = None,
        description: str | None = None,
        required_capabilities: Iterable[str] = (),
        has_side_effects: bool = False,
    ) -> Tool:
        """A tool from a typed function; its docstring gives the descriptions."""
        summary, param_docs = _parse_docstring(inspect.getdoc(function) or "")
        model = _arguments_model(function, param_docs, skip=_context_parameter(function))
        schema = model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        fields = tuple(model.model_fields)  # read once: pydantic's accessor is slow per call

        def validate(arguments: dict[str, Any]) -> dict[str, Any]:
            try:
                parsed = model.model_validate(arguments)
            except ValidationError as exc:
                problems = [
                    f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
                    for err in exc.errors()
                ]
                raise ToolArgumentsError(tool_name, problems) from exc
            return {field: getattr(parsed, field) for field in fields}

        tool_name = name if name is not None else function.__name__
        return cls(
            tool_name,
            description if description is not None else summary,
            schema,
            function,
            validate=validate,
            required_capabilities=required_capabilities,
            has_side_effects=has_side_effects,
        )

    @classmethod
    def coerce(cls, item: Tool | Handler) -> Tool:
        """``item`` as a tool: a `Tool` as it is, a plain function wrapped by `from_function`.

        Plain functions are accepted wherever tools are, as pydantic-ai users expect. Raises
        `TypeError` for anything else, and what `from_function` raises for a function it
        cannot describe (``*args``, a name providers refuse such as ``<lambda>``).
        """
        if isinstance(item, Tool):
            return item
        if not callable(item) or isinstance(item, type):
            raise TypeError(
                f"{type(item).__name__} is not a Tool or a function "
                "(see agentos.tool and Tool.from_schema)"
            )
        return cls.from_function(item)

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        handler: Handler,
        *,
        required_capabilities: Iterable[str] = (),
        has_side_effects: bool = False,
    ) -> Tool:
        """A tool from an explicit JSON schema; the handler receives the arguments as keywords.

        A schema that is not valid JSON schema (draft 2020-12) raises `ValueError` naming the tool.
        """
        try:
            check_json_schema(parameters)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "<root>"
            raise ValueError(
                f"tool {name!r}: parameters is not a valid JSON schema: {exc.message} (at {where})"
            ) from exc
        return cls(
            name,
            description,
            parameters,
            handler,
            required_capabilities=required_capabilities,
            has_side_effects=has_side_effects,
        )

    def definition(self) -> ToolDefinition:
        """The tool as a model sees it."""
        return ToolDefinition(self.name, self.description, self.parameters)

    def validate_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments checked against the schema; raises `ToolArgumentsError`."""
        return self._validate(dict(arguments))

    async def run(
        self, arguments: Mapping[str, Any], context: ToolExecutionContext | None = None
    ) -> Any:
        """Validate ``arguments``, call the handler and return its result as JSON-ready data.

        Sync handlers run in a worker thread so they do not block the event loop.
        """
        return await self.invoke(self.validate_arguments(arguments), context)

    async def invoke(
        self, checked: Mapping[str, Any], context: ToolExecutionContext | None = None
    ) -> Any:
        """Call the handler with arguments `validate_arguments()` returned; JSON-ready result.

        A handler with a `ToolExecutionContext` parameter receives ``context`` (an empty context
        when none is given).
        """
        checked = dict(checked)
        if self._context_parameter is not None:
            checked[self._context_parameter] = context or ToolExecutionContext()
        if inspect.iscoroutinefunction(self._handler):
            result = await self._handler(**checked)
        else:
            result = await asyncio.to_thread(self._handler, **checked)
            if inspect.isawaitable(result):
                result = await result
        return to_jsonable_python(result)

    def _validate_with_schema(self, arguments: dict[str, Any]) -> dict[str, Any]:
        validator = jsonschema.Draft202012Validator(
            self.parameters, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
        problems = [
            f"{'.'.join(str(p) for p in err.absolute_path) or '<root>'}: {err.message}"
            for err in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        ]
        if problems:
            raise ToolArgumentsError(self.name, problems)
        return arguments

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"


@overload
def tool(function: Handler, /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    required_capabilities: Iterable[str] = (),
    has_side_effects: bool = False,
) -> Callable[[Handler], Tool]: ...
def tool(
    function: Handler | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    required_capabilities: Iterable[str] = (),
    has_side_effects: bool = False,
) -> Tool | Callable[[Handler], Tool]:
    """Decorator: turn a typed function into a `Tool` (``@tool`` or ``@tool(name=...)``)."""
    if function is not None:
        return Tool.from_function(function)

    def decorate(fn: Handler) -> Tool:
        return Tool.from_function(
            fn,
            name=name,
            description=description,
            required_capabilities=required_capabilities,
            has_side_effects=has_side_effects,
        )

    return decorate


def _capabilities(name: str, capabilities: Iterable[str]) -> tuple[str, ...]:
    if isinstance(capabilities, str):
        raise TypeError(f"tool {name!r}: required_capabilities must be a list of names, not a str")
    result = tuple(capabilities)
    for capability in result:
        if not isinstance(capability, str) or not capability:
            raise TypeError(
                f"tool {name!r}: required_capabilities holds {capability!r}, not a capability name"
            )
    return result


def _context_parameter(handler: Handler) -> str | None:
    """The handler's parameter annotated with `ToolExecutionContext` (or ``... | None``)."""
    try:
        hints = get_type_hints(handler)
        parameters = inspect.signature(handler).parameters
    except (TypeError, ValueError, NameError, AttributeError):
        return None
    for name in parameters:
        hint = hints.get(name)
        if hint is ToolExecutionContext or (
            get_origin(hint) in (Union, UnionType) and ToolExecutionContext in get_args(hint)
        ):
            return name
    return None


def _arguments_model(
    function: Handler, param_docs: dict[str, str], *, skip: str | None = None
) -> type[BaseModel]:
    signature = inspect.signature(function)
    hints = get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if param.name == skip:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {function.__name__!r}: *args and **kwargs cannot be described")
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(
                f"tool {function.__name__!r}: positional-only parameters are not supported"
            )
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        doc = param_docs.get(param.name)
        # Without a docstring entry, an Annotated Field's own description stays.
        field = Field(default, description=doc) if doc else Field(default)
        fields[param.name] = (annotation, field)
    with warnings.catch_warnings():
        # Parameters may be named like BaseModel attributes (json, schema, copy): they work.
        warnings.filterwarnings("ignore", r"Field name .* shadows an attribute", UserWarning)
        return create_model(
            f"{function.__name__}_arguments",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **fields,
        )


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary (text before the first section) and per-parameter descriptions."""
    summary_lines: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in doc.splitlines():
        if sphinx := _SPHINX_PARAM.match(line):
            current = sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            section = "sphinx"
            continue
        if _SPHINX_FIELD.match(line):
            section, current = "sphinx", None
            continue
        if header := _SECTION.match(line):
            section = header.group(1).lower()
            current = None
            continue
        if section is None:
            summary_lines.append(line)
        elif section in _PARAM_SECTIONS:
            google = _GOOGLE_PARAM.match(line)
            indent = len(line) - len(line.lstrip())
            if google and (current is None or indent <= _param_indent(doc, current)):
                current = google.group(1).lstrip("*")
                params[current] = google.group(3).strip()
            elif current is not None and line.strip():
                params[current] = f"{params[current]} {line.strip()}".strip()
        elif section == "sphinx" and current is not None and line.strip():
            params[current] = f"{params[current]} {line.strip()}".strip()
    return "\n".join(summary_lines).strip(), params


def _param_indent(doc: str, name: str) -> int:
    for line in doc.splitlines():
        match = _GOOGLE_PARAM.match(line)
        if match and match.group(1).lstrip("*") == name:
            return len(line) - len(line.lstrip())
    return 0
