"""Which failed model calls may move to the next fallback hop.

Spec, "Model calls through a completion gateway": a failure before output moves to the next hop
when it is retryable, that is when ``generateText()`` would fail over on it (``isRetryableError()``:
HTTP 401, 402, 403, 429, 500, 502, 503, 504 and 529, network failures, timeouts and a provider
that cannot initialise, among others) or when it is a content-policy refusal; a caller's abort
is never retried. The patterns come from the reference (typescript-implementation.md §1.26) with
the spec's additions the reference lacks (§5 item 16: 529 and generic timeouts).

`is_retryable_error()` decides, in this order:

1. only an `Exception` can be retried: `asyncio.CancelledError`, `KeyboardInterrupt` and the
   other base exceptions end the call;
2. the caller's own stop (`is_caller_stop()`: its abort, or its spend budget's refusal) is never
   retried;
3. a content-policy refusal (`is_content_policy_refusal()`) is retried whatever its status;
4. a `ProviderError` whose ``kind`` is ``timeout``, ``network`` or ``setup`` is retried: the
   adapter saw where the call failed, so its kind wins over any status it carries;
5. an HTTP status (`http_status_of()`) decides next: one of `RETRYABLE_STATUS_CODES` is retried;
   any other 4xx is not, unless the body says the account's quota or credit ran out
   (`is_quota_exhaustion()`: Anthropic reports an empty credit balance as a 400);
6. otherwise, timeouts and network failures by exception type, error code or message; a
   retryable status written in the message of an error that carries none; the reference's
   quota, rate-limit and overload phrases;
7. an error that says nothing itself is judged by the exception it was raised from
   (``raise ProviderError(...) from exc``).
"""

from __future__ import annotations

import asyncio
import errno
import re
import socket
from collections.abc import Iterator, Mapping
from typing import Any, Final

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.llm.budget import SpendLimitError
from agentos.llm.errors import ProviderError

__all__ = [
    "RETRYABLE_STATUS_CODES",
    "http_status_of",
    "is_caller_abort",
    "is_caller_stop",
    "is_content_policy_refusal",
    "is_quota_exhaustion",
    "is_retryable_error",
]

RETRYABLE_STATUS_CODES: Final = frozenset({401, 402, 403, 429, 500, 502, 503, 504, 529})
"""HTTP statuses another provider may not share (spec: 529 added to the reference's list)."""

# Attribute names SDKs put an HTTP status under: openai/anthropic ``status_code``, the Anthropic
# TypeScript shape ``status``, the reference's ``statusCode`` / ``httpStatus``.
_STATUS_ATTRIBUTES: Final = ("status_code", "statusCode", "status", "http_status", "httpStatus")
_STATUS_PREFIX: Final = re.compile(r"^\s*\[(\d{3})\]")

# A retryable status written in the text of an error that carries none. Stricter than the
# reference's ``\b...\b``: a sum of money (``$500.00``), a decimal or a dotted number is not a
# status (the reference itself notes a budget cap of ``$500.00`` read as an HTTP 500).
_STATUS_IN_TEXT: Final = re.compile(
    r"(?<![\w$€£.,])(?:401|402|403|429|500|502|503|504|529)(?![\w]|[.,]\d)"
)

# Content-policy markers. A code or type naming one of these, at the top level or in a nested
# ``error`` envelope (OpenAI ``content_policy_violation``, Anthropic and Azure ``content_filter``,
# the structured-output path's ``safety_violations``), or a message in the providers' words.
_REFUSAL_MARKER: Final = re.compile(r"content_policy|content_filter|safety_violation", re.I)
_REFUSAL_TEXT: Final = re.compile(
    r"content[_ ]policy|content[_ ]filter|safety[_ ]guidelines|safety[_ ]policy"
    r"|safety_violations|usage policies",
    re.I,
)

# Quota or credit exhausted: the account, not the request, is the problem, so another provider
# can serve it (and the circuit breaker applies its 402 policy whatever the status).
_QUOTA_MARKERS: Final = frozenset({"insufficient_quota", "billing_error"})
_QUOTA_TEXT: Final = re.compile(
    r"insufficient[_ ]quota|billing[_ ]error|exceeded your current quota|requires more credits"
    r"|insufficient credits|credit balance",
    re.I,
)
# The reference's wider phrase list, read only when no status says otherwise: rate limits and
# overload (Anthropic's ``overloaded_error``, the spec's 529) are worth another provider.
_TRANSIENT_TEXT: Final = re.compile(r"rate[ _-]?limit|quota|overloaded", re.I)

_NETWORK_TEXT: Final = re.compile(
    r"fetch failed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|socket hang up"
    r"|connection (?:reset|refused|aborted|error)|network error|timed out",
    re.I,
)

# Error codes and types a provider's body or stream event uses for a failure another provider
# may not share (reference: RETRYABLE_PROVIDER_ERROR_CODES / _TYPES). Mid-stream codes such as
# STREAM_INCOMPLETE are left out on purpose: a stream that delivered text is not restarted.
_RETRYABLE_MARKERS: Final = frozenset(
    {
        "network_error",
        "request_timeout",
        "request_hard_timeout",
        "timeout",
        "max_retries_reached",
        "server_error",
        "api_error",
        "overloaded_error",
        "rate_limit_error",
        "rate_limit_exceeded",
        "econnrefused",
        "econnreset",
        "etimedout",
        "enotfound",
        "eai_again",
    }
)

_NETWORK_ERRNOS: Final = frozenset(
    {
        errno.ECONNREFUSED,
        errno.ECONNRESET,
        errno.ECONNABORTED,
        errno.ETIMEDOUT,
        errno.EHOSTUNREACH,
        errno.EHOSTDOWN,
        errno.ENETUNREACH,
        errno.ENETDOWN,
        errno.ENETRESET,
        errno.EPIPE,
    }
)

# Transport exceptions of the HTTP stacks the adapters sit on (httpx, the openai and anthropic
# SDKs, aiohttp), named rather than imported: agentos installs none of them by default.
_TRANSPORT_CLASS_NAMES: Final = frozenset(
    {
        "APIConnectionError",
        "APITimeoutError",
        "TransportError",
        "TimeoutException",
        "ClientConnectionError",
        "ServerTimeoutError",
    }
)

_ABORT_NAMES: Final = frozenset({"abort", "aborted", "aborterror", "abortederror"})

# How far `is_retryable_error()` follows ``__cause__``; chains are short, this bounds a cycle.
_MAX_CAUSE_DEPTH: Final = 8


def is_retryable_error(error: BaseException) -> bool:
    """Whether a model call that failed with ``error`` before any output may try the next hop.

    The order of the checks is the module docstring's. Never true for the caller's own stop, nor
    for an HTTP 400, 404, 422 or other 4xx outside 401/402/403/429 unless the failure is a
    content-policy refusal or an exhausted quota.
    """
    return _retryable(error, 0)


def _retryable(error: BaseException, depth: int) -> bool:
    if not isinstance(error, Exception) or is_caller_stop(error):
        return False
    if is_content_policy_refusal(error):
        return True
    if _kind(error) in {"timeout", "network", "setup"}:
        return True
    status = http_status_of(error)
    if status is not None:
        if status in RETRYABLE_STATUS_CODES:
            return True
        if 400 <= status < 500:
            return is_quota_exhaustion(error)
    if _is_transport_failure(error):
        return True
    if any(marker in _RETRYABLE_MARKERS for marker in _markers(error)):
        return True
    text = _text(error)
    if status is None and _STATUS_IN_TEXT.search(text):
        return True
    if _NETWORK_TEXT.search(text) or _TRANSIENT_TEXT.search(text) or is_quota_exhaustion(error):
        return True
    cause = error.__cause__
    if cause is not None and cause is not error and depth < _MAX_CAUSE_DEPTH:
        return _retryable(cause, depth + 1)
    return False


def is_content_policy_refusal(error: BaseException) -> bool:
    """Whether ``error`` is a provider declining the content (reference ``isContentPolicyRefusal``).

    True for a `ProviderError` of kind ``refusal``; for a code or type (the error's own, its
    ``details`` ``error_code`` / ``error_type``, or a nested ``error`` envelope in ``details``
    or an SDK's ``body``) naming ``content_policy_violation``, ``content_filter`` or
    ``safety_violations``; and for a message in the providers' words ("content policy",
    "content filter", "safety guidelines", "safety policy", "usage policies"). The status does
    not matter: OpenAI and Anthropic answer a refusal with HTTP 400.
    """
    if not isinstance(error, Exception):
        return False
    if _kind(error) == "refusal":
        return True
    if any(_REFUSAL_MARKER.search(marker) for marker in _markers(error)):
        return True
    return bool(_REFUSAL_TEXT.search(_text(error)))


def is_quota_exhaustion(error: BaseException) -> bool:
    """Whether ``error`` says the account's quota or credit ran out.

    A code or type ``insufficient_quota`` / ``billing_error``, or the providers' messages
    ("exceeded your current quota", "requires more credits", "insufficient credits",
    "credit balance"). The reference's circuit breaker treats these as a 402 whatever their
    status (OpenAI sends ``insufficient_quota`` with a 429, Anthropic an empty balance with a
    400).
    """
    if not isinstance(error, Exception):
        return False
    if any(marker in _QUOTA_MARKERS for marker in _markers(error)):
        return True
    return bool(_QUOTA_TEXT.search(_text(error)))


def is_caller_stop(error: BaseException) -> bool:
    """Whether the caller, not the provider, ended the call (reference ``isCallerStop``).

    The caller's abort (`is_caller_abort()`) or its spend budget's refusal (a
    `agentos.llm.budget.SpendLimitError`, whose call was never sent: spec, a refused step is
    not tried on a fallback hop). Neither is retried, and neither says anything about the
    provider's health.
    """
    return isinstance(error, SpendLimitError) or is_caller_abort(error)


def is_caller_abort(error: BaseException) -> bool:
    """Whether ``error`` is the caller stopping the call, which is never retried (spec).

    `asyncio.CancelledError`; a `GMIError` with the code ``ABORTED``; an error whose ``kind``,
    ``type``, ``name``, ``details`` ``error_type`` or class name says ``abort`` / ``aborted`` /
    ``AbortError``. Only the error itself is read, not what it was raised from:
    `asyncio.timeout()` raises its `TimeoutError` from a `CancelledError`, and that timeout
    is retryable.
    """
    if isinstance(error, asyncio.CancelledError):
        return True
    if isinstance(error, GMIError) and str(error.code) == GMIErrorCode.ABORTED.value:
        return True
    names: list[object] = [type(error).__name__]
    names.extend(getattr(error, attribute, None) for attribute in ("kind", "type", "name"))
    details = getattr(error, "details", None)
    if isinstance(details, Mapping):
        names.extend(details.get(key) for key in ("error_type", "kind"))
    return any(
        isinstance(name, str) and re.sub(r"[^a-z]", "", name.lower()) in _ABORT_NAMES
        for name in names
    )


def http_status_of(error: BaseException) -> int | None:
    """The HTTP status ``error`` carries, or ``None``.

    Read in this order, typed fields before text: `ProviderError.status_code`; an integer
    attribute ``status_code``, ``statusCode``, ``status``, ``http_status`` or ``httpStatus``;
    ``details["status_code"]``; ``response.status_code`` (httpx's `HTTPStatusError`); a
    ``[NNN]`` prefix on the message (the shape the reference's providers and
    `agentos.testing.ScriptStep.fail` write). Only values from 100 to 599 count. A `GMIError`'s
    ``http_status`` property is not read: it is the status a server would answer that error
    with (500 by default), not one a provider sent.
    """
    candidates: list[object] = []
    if isinstance(error, ProviderError):
        candidates.append(error.status_code)
    for attribute in _STATUS_ATTRIBUTES:
        if attribute == "http_status" and isinstance(error, GMIError):
            continue
        candidates.append(getattr(error, attribute, None))
    details = getattr(error, "details", None)
    if isinstance(details, Mapping):
        candidates.append(details.get("status_code"))
    candidates.append(getattr(getattr(error, "response", None), "status_code", None))
    for candidate in candidates:
        status = _as_status(candidate)
        if status is not None:
            return status
    match = _STATUS_PREFIX.match(_text(error))
    return _as_status(int(match.group(1))) if match is not None else None


def _as_status(value: object) -> int | None:
    # bool is an int subclass, and True is no status.
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
        return value
    return None


def _kind(error: BaseException) -> str | None:
    kind = getattr(error, "kind", None)
    return kind if isinstance(kind, str) else None


def _text(error: BaseException) -> str:
    # A broken __str__ must not turn the classification itself into a failure.
    try:
        return str(error)
    except Exception:
        return ""


def _is_transport_failure(error: BaseException) -> bool:
    if isinstance(error, TimeoutError | ConnectionError | socket.gaierror | socket.herror):
        return True
    if isinstance(error, OSError) and error.errno in _NETWORK_ERRNOS:
        return True
    return any(cls.__name__ in _TRANSPORT_CLASS_NAMES for cls in type(error).__mro__)


def _markers(error: BaseException) -> Iterator[str]:
    """The error's codes and types, lower-cased, wherever providers and SDKs put them."""
    yield from _codes_of(error, ("code", "type", "error_code", "error_type"))
    details = getattr(error, "details", None)
    if isinstance(details, Mapping):
        yield from _codes_of(details, ("error_code", "error_type", "code", "type"))
        yield from _envelope_codes(details)
    body = getattr(error, "body", None)
    if isinstance(body, Mapping):
        yield from _codes_of(body, ("code", "type"))
        yield from _envelope_codes(body)


def _envelope_codes(holder: Mapping[Any, Any]) -> Iterator[str]:
    # OpenAI's and Anthropic's bodies nest the real code: {"error": {"code": ..., "type": ...}}.
    inner = holder.get("error")
    if isinstance(inner, Mapping):
        yield from _codes_of(inner, ("code", "type"))


def _codes_of(source: object, keys: tuple[str, ...]) -> Iterator[str]:
    for key in keys:
        value = source.get(key) if isinstance(source, Mapping) else getattr(source, key, None)
        if isinstance(value, str) and value:
            yield value.lower()
