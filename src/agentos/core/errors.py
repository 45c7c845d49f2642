"""Errors and their codes (spec: every refusal the GMI layer names).

`GMIErrorCode` members carry the spec's names; their values are the strings the TypeScript
runtime puts on the wire (DESIGN.md §5.11), so `GMIErrorCode.PERSONA_NOT_FOUND.value` is
``"GMI_PERSONA_NOT_FOUND"``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

__all__ = ["ContextWindowExceededError", "GMIError", "GMIErrorCode"]


class GMIErrorCode(StrEnum):
    """Every error code the spec and the reference runtime use."""

    INTERNAL_SERVER_ERROR = "SYS_INTERNAL_SERVER_ERROR"
    INTERNAL_ERROR = "SYS_INTERNAL_ERROR"
    SERVICE_UNAVAILABLE = "SYS_SERVICE_UNAVAILABLE"
    NOT_INITIALIZED = "SYS_NOT_INITIALIZED"
    INITIALIZATION_FAILED = "SYS_INITIALIZATION_FAILED"
    CONFIGURATION_ERROR = "SYS_CONFIGURATION_ERROR"
    CONFIG_ERROR = "SYS_CONFIG_ERROR"
    VALIDATION_ERROR = "SYS_VALIDATION_ERROR"
    INVALID_ARGUMENT = "SYS_INVALID_ARGUMENT"
    INVALID_STATE = "SYS_INVALID_STATE"
    PARSING_ERROR = "SYS_PARSING_ERROR"
    DEPENDENCY_ERROR = "SYS_DEPENDENCY_ERROR"
    MISSING_DEPENDENCY = "SYS_MISSING_DEPENDENCY"
    MISSING_DATA = "SYS_MISSING_DATA"
    NOT_IMPLEMENTED = "SYS_NOT_IMPLEMENTED"
    NOT_SUPPORTED = "SYS_NOT_SUPPORTED"
    METHOD_NOT_SUPPORTED = "SYS_METHOD_NOT_SUPPORTED"
    PROCESSING_ERROR = "SYS_PROCESSING_ERROR"
    STREAM_ERROR = "SYS_STREAM_ERROR"
    DATABASE_ERROR = "SYS_DATABASE_ERROR"
    RATE_LIMIT_EXCEEDED = "SYS_RATE_LIMIT_EXCEEDED"
    TIMEOUT = "SYS_TIMEOUT"
    NOT_FOUND = "SYS_NOT_FOUND"
    RESOURCE_NOT_FOUND = "SYS_RESOURCE_NOT_FOUND"
    RESOURCE_ALREADY_EXISTS = "SYS_RESOURCE_ALREADY_EXISTS"
    ALREADY_EXISTS = "SYS_ALREADY_EXISTS"
    ABORTED = "SYS_ABORTED"

    AUTHENTICATION_REQUIRED = "AUTH_AUTHENTICATION_REQUIRED"
    PERMISSION_DENIED = "AUTH_PERMISSION_DENIED"
    ACCESS_DENIED = "AUTH_ACCESS_DENIED"
    SUBSCRIPTION_ERROR = "AUTH_SUBSCRIPTION_ERROR"

    PERSONA_NOT_FOUND = "GMI_PERSONA_NOT_FOUND"
    PERSONA_LOAD_ERROR = "GMI_PERSONA_LOAD_ERROR"
    GMI_INITIALIZATION_ERROR = "GMI_INITIALIZATION_ERROR"
    GMI_PROCESSING_ERROR = "GMI_PROCESSING_ERROR"
    GMI_CONTEXT_ERROR = "GMI_CONTEXT_ERROR"
    GMI_FEEDBACK_ERROR = "GMI_FEEDBACK_ERROR"
    GMI_SHUTDOWN_ERROR = "GMI_SHUTDOWN_ERROR"
    SESSION_BUSY = "GMI_SESSION_BUSY"
    """Ours (DESIGN.md §5.21): another process's turn held a durable session past the wait."""

    TOOL_ERROR = "TOOL_ERROR"
    TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
    TOOL_EXECUTION_FAILED = "TOOL_EXECUTION_FAILED"
    EXTERNAL_TOOL_NOT_RUN = "EXTERNAL_TOOL_NOT_RUN"

    LLM_PROVIDER_ERROR = "LLM_PROVIDER_ERROR"
    LLM_PROVIDER_UNAVAILABLE = "LLM_PROVIDER_UNAVAILABLE"
    PROVIDER_ERROR = "PROVIDER_ERROR"
    PROVIDER_NOT_FOUND = "PROVIDER_NOT_FOUND"

    RAG_INGESTION_FAILED = "RAG_INGESTION_FAILED"

    GUARDRAIL_BLOCKED = "GUARDRAIL_BLOCKED"
    """Ours (DESIGN.md §5.15): a runtime guardrail blocked the input or the output."""


_HTTP_STATUS: dict[GMIErrorCode, int] = {
    GMIErrorCode.SERVICE_UNAVAILABLE: 503,
    GMIErrorCode.VALIDATION_ERROR: 400,
    GMIErrorCode.INVALID_ARGUMENT: 400,
    GMIErrorCode.INVALID_STATE: 409,
    GMIErrorCode.SESSION_BUSY: 409,
    GMIErrorCode.PARSING_ERROR: 400,
    GMIErrorCode.MISSING_DATA: 400,
    GMIErrorCode.NOT_IMPLEMENTED: 501,
    GMIErrorCode.NOT_SUPPORTED: 501,
    GMIErrorCode.METHOD_NOT_SUPPORTED: 405,
    GMIErrorCode.RATE_LIMIT_EXCEEDED: 429,
    GMIErrorCode.TIMEOUT: 504,
    GMIErrorCode.NOT_FOUND: 404,
    GMIErrorCode.RESOURCE_NOT_FOUND: 404,
    GMIErrorCode.PERSONA_NOT_FOUND: 404,
    GMIErrorCode.TOOL_NOT_FOUND: 404,
    GMIErrorCode.PROVIDER_NOT_FOUND: 404,
    GMIErrorCode.RESOURCE_ALREADY_EXISTS: 409,
    GMIErrorCode.ALREADY_EXISTS: 409,
    GMIErrorCode.AUTHENTICATION_REQUIRED: 401,
    GMIErrorCode.PERMISSION_DENIED: 403,
    GMIErrorCode.ACCESS_DENIED: 403,
    GMIErrorCode.SUBSCRIPTION_ERROR: 402,
    GMIErrorCode.LLM_PROVIDER_UNAVAILABLE: 503,
}


class GMIError(Exception):
    """An error with a spec code, a message and structured details.

    ``code`` is a `GMIErrorCode` (or, for codes a host invents, a plain string); ``details``
    holds whatever helps a caller act on the error (the option that was wrong, an HTTP status).
    """

    def __init__(
        self,
        message: str,
        code: GMIErrorCode | str = GMIErrorCode.INTERNAL_ERROR,
        details: dict[str, Any] | None = None,
        *,
        component: str | None = None,
        http_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details: dict[str, Any] = dict(details or {})
        self.component = component
        self._http_status = http_status

    @property
    def http_status(self) -> int:
        """The HTTP status a server answers this error with (500 unless the code implies one)."""
        if self._http_status is not None:
            return self._http_status
        if isinstance(self.code, GMIErrorCode):
            return _HTTP_STATUS.get(self.code, 500)
        return 500

    def to_dict(self) -> dict[str, Any]:
        """The error as it travels on the wire: name, code value, message, details, status."""
        return {
            "name": type(self).__name__,
            "code": str(self.code),
            "message": self.message,
            "details": self.details,
            "component": self.component,
            "http_status": self.http_status,
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={str(self.code)!r}, message={self.message!r})"


class ContextWindowExceededError(GMIError):
    """A request cannot fit the context window of a model the catalog knows.

    Raised before the request is sent. ``details`` holds ``provider``, ``model``,
    ``context_window`` and ``required_tokens`` (the estimate with no earlier message).
    """

    def __init__(
        self,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        component: str | None = "PromptEngine",
    ) -> None:
        super().__init__(message, GMIErrorCode.GMI_CONTEXT_ERROR, details, component=component)
