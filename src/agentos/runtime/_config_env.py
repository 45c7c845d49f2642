"""The environment variables `create_agentos_config()` reads (table: `agentos.runtime.config`).

Each variable maps to one `AgentOSConfig` field through a parser that refuses a bad value with
``CONFIGURATION_ERROR`` naming the variable (``details["option"]``) and the field
(``details["field"]``). A variable that is unset or blank (only whitespace) is left out, so the
field keeps its default: an empty ``MAX_TOOL_CALL_ITERATIONS=`` in a ``.env`` file means "not
set", not "invalid".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.storage import AGENTOS_HOME_ENV, DATABASE_FILENAME

__all__ = ["ENVIRONMENT_VARIABLES", "EnvironmentVariable", "read_environment"]


@dataclass(frozen=True, slots=True)
class EnvironmentVariable:
    """One variable: its name, the config field it sets, and how its text becomes the value."""

    name: str
    field: str
    parse: Callable[[str, str, str], Any]  # (variable name, field, stripped text) -> value


def _refuse(name: str, field: str, raw: str, expected: str) -> NoReturn:
    raise GMIError(
        f"{name}={raw!r}: {field} must be {expected}",
        GMIErrorCode.CONFIGURATION_ERROR,
        {"option": name, "field": field},
        component="runtime",
    )


def _text(name: str, field: str, raw: str) -> str:
    return raw


def _path(name: str, field: str, raw: str) -> Path:
    return Path(raw).expanduser()


def _positive(name: str, field: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        _refuse(name, field, raw, "a whole number >= 1")
    if value < 1:
        _refuse(name, field, raw, "a whole number >= 1")
    return value


def _minutes(name: str, field: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        _refuse(name, field, raw, "a number of minutes >= 0")
    if math.isnan(value) or value < 0:
        _refuse(name, field, raw, "a number of minutes >= 0")
    return value


def _choice(*choices: str) -> Callable[[str, str, str], str]:
    def parse(name: str, field: str, raw: str) -> str:
        value = raw.lower()
        if value not in choices:
            _refuse(name, field, raw, " or ".join(repr(choice) for choice in choices))
        return value

    return parse


ENVIRONMENT_VARIABLES: tuple[EnvironmentVariable, ...] = (
    EnvironmentVariable("DEFAULT_PERSONA_ID", "default_persona_id", _text),
    EnvironmentVariable("AGENTOS_PERSONA_DIR", "persona_directory", _path),
    EnvironmentVariable("MAX_TOOL_CALL_ITERATIONS", "max_tool_call_iterations", _positive),
    EnvironmentVariable("AGENTOS_DEFAULT_ORGANIZATION_ID", "default_organization_id", _text),
    EnvironmentVariable(
        "AGENTOS_REASONING_TRACE_MAX_ENTRIES", "default_reasoning_trace_max_entries", _positive
    ),
    EnvironmentVariable("AGENTOS_UTILITY_AI", "utility_ai", _choice("llm", "statistical")),
    EnvironmentVariable(
        "AGENTOS_CONVERSATION_STORE", "conversation_store", _choice("memory", "sqlite")
    ),
    EnvironmentVariable("AGENTOS_DATABASE", "database_path", _path),
    EnvironmentVariable("AGENTOS_HISTORY_WINDOW", "history_window", _positive),
    EnvironmentVariable("AGENTOS_GMI_CLEANUP_MINUTES", "gmi_inactivity_cleanup_minutes", _minutes),
    EnvironmentVariable("AGENTOS_SHUTDOWN_TIMEOUT_MS", "shutdown_timeout_ms", _positive),
    EnvironmentVariable("AGENTOS_PROVIDER", "provider", _text),
    EnvironmentVariable("AGENTOS_MODEL", "model", _text),
)
"""Every variable read, in the order of the table in `agentos.runtime.config`."""


def read_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """The config fields ``environ`` sets, parsed; unset and blank variables are left out.

    ``AGENTOS_HOME`` (when ``AGENTOS_DATABASE`` is not set) puts the database at
    ``$AGENTOS_HOME/agentos.db``, as `agentos.storage.default_database_path` does for the
    process environment.

    Raises:
        GMIError: ``CONFIGURATION_ERROR`` naming the variable whose value is invalid.
    """
    values: dict[str, Any] = {}
    for variable in ENVIRONMENT_VARIABLES:
        raw = environ.get(variable.name, "").strip()
        if raw:
            values[variable.field] = variable.parse(variable.name, variable.field, raw)
    home = environ.get(AGENTOS_HOME_ENV, "").strip()
    if home and "database_path" not in values:
        values["database_path"] = Path(home).expanduser() / DATABASE_FILENAME
    return values
