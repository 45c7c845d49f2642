"""One request to the full runtime, checked before any work (spec: AgentOSInput; issue 13 item 3).

`AgentOS.process_request()` takes an `AgentOSInput` or a mapping of its snake_case keys
(reference §1.28: ``userId``, ``sessionId``, ``textInput``, ``selectedPersonaId``, ...
become ``user_id``, ``session_id``, ``text_input``, ``selected_persona_id``).
`parse_request` turns either into a checked `AgentOSInput` and refuses, before a persona is
loaded, a GMI built or anything stored:

- a missing or blank ``user_id`` or ``session_id``;
- an unknown key, named, with the closest known key suggested (a camelCase key is unknown, and
  its snake_case spelling is the suggestion: ``userId`` -> ``user_id``); nested ``options``
  keys are named with their dotted path (``options.topP``);
- a value of the wrong type or out of its range: ``options.temperature`` 0..2,
  ``options.top_p`` 0..1, ``options.max_tokens`` and ``options.max_tool_call_iterations`` >= 1,
  ids that are blank strings, text with a lone surrogate (what undecodable bytes become).

Each refusal is a `GMIError` with code ``INVALID_ARGUMENT`` and ``details["option"]`` the dotted
name of the field, as `agentos.api.call_checks` does for the other entry points.

``metadata`` is the host's own data, carried with the request; the runtime reads only its
``workflow_id`` (a workflow turn, which has no learner: spec "Learning": Learners). A
``role_id`` needs an ``agency_id``: a seat is an agency's role (reference §1.8).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from agentos.api.call_checks import check_number, check_text, invalid, refuse_unknown_options

__all__ = ["AgentOSInput", "RequestOptions", "parse_request"]


@dataclass(frozen=True, kw_only=True, slots=True)
class RequestOptions:
    """Per-request model options (spec: AgentOSInput.options; reference §1.28).

    ``None`` leaves each one to the persona and the model. ``preferred_model_id`` /
    ``preferred_provider_id`` choose the model for this request; ``max_tool_call_iterations``
    replaces the runtime's limit for this turn; ``structured_reply`` asks for a structured reply
    (issue 13 item 6).
    """

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    response_format: Mapping[str, Any] | None = None
    preferred_model_id: str | None = None
    preferred_provider_id: str | None = None
    max_tool_call_iterations: int | None = None
    structured_reply: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class AgentOSInput:
    """One request to `AgentOS.process_request()` (spec: AgentOSInput, in snake_case).

    ``selected_persona_id`` ``None`` means the configuration's default persona.
    ``agency_id`` with ``role_id`` names a seat, whose GMI carries the role's overlay.
    ``metadata`` is the host's data, carried; only ``metadata["workflow_id"]`` is read.
    """

    user_id: str
    session_id: str
    text_input: str | None = None
    selected_persona_id: str | None = None
    organization_id: str | None = None
    conversation_id: str | None = None
    options: RequestOptions = RequestOptions()
    user_context_override: Mapping[str, Any] | None = None
    task_context_override: Mapping[str, Any] | None = None
    agency_id: str | None = None
    role_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


_INPUT_KEYS = frozenset(f.name for f in fields(AgentOSInput))
_OPTION_KEYS = frozenset(f.name for f in fields(RequestOptions))
_OPTIONAL_IDS = (
    "selected_persona_id",
    "organization_id",
    "conversation_id",
    "agency_id",
    "role_id",
)
_NO_OPTIONS = RequestOptions()


def parse_request(request: AgentOSInput | Mapping[str, Any]) -> AgentOSInput:
    """The request as a checked `AgentOSInput`; every check runs before any work.

    Unknown keys are refused first (a misspelt ``userId`` is reported as the unknown key it is,
    with ``user_id`` suggested, not as a missing ``user_id``), then the required ids, then each
    value's type and range.

    Raises:
        GMIError: ``INVALID_ARGUMENT`` with ``details["option"]`` the dotted field name
            (``"user_id"``, ``"options.temperature"``); for unknown keys the first one
            (alphabetically), the message naming each with the closest known key.
    """
    values: Mapping[str, Any]
    if isinstance(request, AgentOSInput):
        values = {f.name: getattr(request, f.name) for f in fields(AgentOSInput)}
    elif isinstance(request, Mapping):
        # Read in place, never kept: the request's containers are copied into the result.
        if not request.keys() <= _INPUT_KEYS:
            _refuse_unknown_keys(request, _INPUT_KEYS)
        values = request
    else:
        invalid(
            "request",
            f"must be an AgentOSInput or a mapping of its snake_case keys, got "
            f"{type(request).__name__}",
        )
    options = _parse_options(values.get("options"))
    _check_ids(values)
    _check_text("text_input", values.get("text_input"))
    user_context = values.get("user_context_override")
    task_context = values.get("task_context_override")
    metadata = values.get("metadata")
    _check_mapping("user_context_override", user_context)
    _check_mapping("task_context_override", task_context)
    _check_mapping("metadata", metadata)
    return AgentOSInput(
        user_id=values["user_id"],
        session_id=values["session_id"],
        text_input=values.get("text_input"),
        selected_persona_id=values.get("selected_persona_id"),
        organization_id=values.get("organization_id"),
        conversation_id=values.get("conversation_id"),
        options=options,
        user_context_override=_copied(user_context),
        task_context_override=_copied(task_context),
        agency_id=values.get("agency_id"),
        role_id=values.get("role_id"),
        metadata=dict(metadata) if metadata else {},
    )


def _refuse_unknown_keys(
    values: Mapping[Any, Any], known: frozenset[str], *, prefix: str = ""
) -> None:
    """Unknown keys, each with the closest known key (`refuse_unknown_options`).

    Its closest-match hint also turns a camelCase key into its snake_case name (``userId`` ->
    ``user_id``, ``topP`` -> ``top_p``). A key that is not a string is named by its ``repr``.
    """
    for key in values:
        if not isinstance(key, str):
            invalid(f"{prefix}{key!r}", "unknown key: keys are snake_case strings")
    refuse_unknown_options(values, known, prefix=prefix)


def _check_ids(values: Mapping[str, Any]) -> None:
    """``user_id`` and ``session_id`` required and not blank; the other ids optional, not blank."""
    for name in ("user_id", "session_id"):
        value = values.get(name)
        if value is None:
            invalid(name, f"is required: every request names its {name.replace('_', ' ')}")
        _check_id(name, value)
    for name in _OPTIONAL_IDS:
        value = values.get(name)
        if value is not None:
            _check_id(name, value)
    if "role_id" in values and values["role_id"] is not None and values.get("agency_id") is None:
        invalid("role_id", "needs an agency_id: a seat is a role of an agency")


def _check_id(name: str, value: object) -> None:
    if not isinstance(value, str):
        invalid(name, f"must be a string, got {type(value).__name__}")
    if not value.strip():
        invalid(name, "must not be blank")
    check_text(name, value, subject="")


def _check_text(name: str, value: object) -> None:
    """``None`` or text that can be encoded (no lone surrogate)."""
    if value is None:
        return
    if not isinstance(value, str):
        invalid(name, f"must be a string or None, got {type(value).__name__}")
    check_text(name, value, subject="")


def _check_mapping(name: str, value: object) -> None:
    if value is not None and not isinstance(value, Mapping):
        invalid(name, f"must be a mapping or None, got {type(value).__name__}")
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                invalid(name, f"keys must be strings, got {key!r}")


STRUCTURED_REPLY_KEYS = frozenset({"schema", "name", "instructions"})
"""What ``options.structured_reply`` holds: a JSON ``schema`` of an object (required), its
``name`` and extra ``instructions`` (both optional)."""


def _check_structured_reply(value: object) -> None:
    _check_mapping("options.structured_reply", value)
    if value is None:
        return
    assert isinstance(value, Mapping)
    refuse_unknown_options(value, STRUCTURED_REPLY_KEYS, prefix="options.structured_reply.")
    schema = value.get("schema")
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        invalid("options.structured_reply.schema", "must be a JSON schema of an object")
    for key in ("name", "instructions"):
        if value.get(key) is not None and not isinstance(value[key], str):
            invalid(f"options.structured_reply.{key}", "must be a string")


def _copied(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if value is None else dict(value)


def _parse_options(value: object) -> RequestOptions:
    """``options`` as `RequestOptions`: from an instance or a mapping of its snake_case keys."""
    if value is None:
        return _NO_OPTIONS
    if isinstance(value, RequestOptions):
        values = {f.name: getattr(value, f.name) for f in fields(RequestOptions)}
    elif isinstance(value, Mapping):
        _refuse_unknown_keys(value, _OPTION_KEYS, prefix="options.")
        values = dict(value)
    else:
        invalid("options", f"must be RequestOptions or a mapping, got {type(value).__name__}")
    check_number("options.temperature", values.get("temperature"), 0.0, 2.0)
    check_number("options.top_p", values.get("top_p"), 0.0, 1.0)
    for name in ("max_tokens", "max_tool_call_iterations"):
        _check_count(f"options.{name}", values.get(name))
    for name in ("preferred_model_id", "preferred_provider_id"):
        if values.get(name) is not None:
            _check_id(f"options.{name}", values[name])
    _check_mapping("options.response_format", values.get("response_format"))
    _check_structured_reply(values.get("structured_reply"))
    if values.get("preferred_provider_id") is not None and values.get("preferred_model_id") is None:
        invalid(
            "options.preferred_provider_id",
            "names the provider of options.preferred_model_id: give the model too",
        )
    return RequestOptions(
        temperature=values.get("temperature"),
        top_p=values.get("top_p"),
        max_tokens=values.get("max_tokens"),
        response_format=_copied(values.get("response_format")),
        preferred_model_id=values.get("preferred_model_id"),
        preferred_provider_id=values.get("preferred_provider_id"),
        max_tool_call_iterations=values.get("max_tool_call_iterations"),
        structured_reply=_copied(values.get("structured_reply")),
    )


def _check_count(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        invalid(name, f"must be an integer >= 1, got {value!r}")
