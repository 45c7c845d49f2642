"""`agentos.llm.gateway` (retry): which failures move a call to its next fallback hop.

Spec, "Model calls through a completion gateway" (isRetryableError, content-policy refusals,
a caller's abort never retried); reference §1.26 for the patterns and §5 item 16 for what the
spec adds (529, timeouts).
"""

from __future__ import annotations

import asyncio
import errno
import socket
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.core import GMIError, GMIErrorCode
from agentos.llm.budget import CostCapExceededError, SpendLimitInfo
from agentos.llm.errors import ProviderError, ProviderErrorKind
from agentos.llm.gateway import (
    RETRYABLE_STATUS_CODES,
    http_status_of,
    is_caller_abort,
    is_caller_stop,
    is_content_policy_refusal,
    is_quota_exhaustion,
    is_retryable_error,
)
from agentos.testing import ScriptStep

# --- foreign error shapes ---------------------------------------------------------------------


class StatusError(Exception):
    """An SDK error carrying its HTTP status under some attribute name."""

    def __init__(self, message: str = "", **attributes: Any) -> None:
        super().__init__(message)
        for name, value in attributes.items():
            setattr(self, name, value)


class APIConnectionError(Exception):
    """Named like the openai / anthropic SDKs' connection error."""


class APITimeoutError(APIConnectionError):
    """Named like the SDKs' timeout error."""


class TransportError(Exception):
    """Named like httpx's transport base class."""


class ConnectError(TransportError):
    """Named like httpx.ConnectError: a subclass found through the MRO."""


class AbortError(Exception):
    """A host's abort error, by its class name."""


class _Response:
    def __init__(self, status_code: int) -> None:
        self.status_code = status_code


def provider(
    status: int | None = None,
    message: str = "provider error",
    *,
    kind: ProviderErrorKind | None = None,
    **details: Any,
) -> ProviderError:
    return ProviderError(message, status_code=status, kind=kind, details=details or None)


# --- retryable ----------------------------------------------------------------------------------

RETRYABLE: list[tuple[str, BaseException]] = [
    *[(f"ProviderError {s}", provider(s)) for s in sorted(RETRYABLE_STATUS_CODES)],
    ("529 overloaded (spec adds it)", provider(529, "Overloaded")),
    ("[503] message prefix, no status field", ProviderError("[503] upstream down")),
    ("ScriptStep.fail(429)", ScriptStep.fail(429).error or Exception()),
    ("status word in message", RuntimeError("Error code: 502 - bad gateway")),
    ("HTTP/1.1 line in message", RuntimeError("HTTP/1.1 504 Gateway Timeout")),
    ("401 in message", RuntimeError("401 Unauthorized")),
    ("status_code attribute", StatusError("x", status_code=500)),
    ("status attribute", StatusError("x", status=403)),
    ("statusCode attribute", StatusError("x", statusCode=429)),
    ("http_status attribute", StatusError("x", http_status=502)),
    ("httpStatus attribute", StatusError("x", httpStatus=402)),
    ("httpx HTTPStatusError shape", StatusError("x", response=_Response(503))),
    ("kind timeout", provider(kind="timeout")),
    ("kind network", provider(kind="network")),
    ("kind setup: cannot initialise", provider(kind="setup")),
    ("kind setup wins over a 404 status", provider(404, kind="setup")),
    ("kind timeout wins over a 408 status", provider(408, kind="timeout")),
    ("TimeoutError", TimeoutError()),
    ("asyncio.TimeoutError", asyncio.TimeoutError()),  # noqa: UP041 - the alias callers raise
    ("ConnectionRefusedError", ConnectionRefusedError()),
    ("ConnectionResetError", ConnectionResetError()),
    ("BrokenPipeError", BrokenPipeError()),
    ("socket.gaierror", socket.gaierror(socket.EAI_NONAME, "Name or service not known")),
    ("OSError ENETUNREACH", OSError(errno.ENETUNREACH, "Network is unreachable")),
    ("OSError EHOSTUNREACH", OSError(errno.EHOSTUNREACH, "No route to host")),
    ("SDK APIConnectionError by name", APIConnectionError("Connection error.")),
    ("SDK APITimeoutError by name", APITimeoutError("Request timed out.")),
    ("httpx ConnectError via MRO", ConnectError("")),
    ("fetch failed", RuntimeError("TypeError: fetch failed")),
    ("ECONNREFUSED", RuntimeError("connect ECONNREFUSED 127.0.0.1:443")),
    ("ETIMEDOUT", RuntimeError("read ETIMEDOUT")),
    ("ENOTFOUND", RuntimeError("getaddrinfo ENOTFOUND api.example.com")),
    ("connection reset", RuntimeError("Connection reset by peer")),
    ("socket hang up", RuntimeError("socket hang up")),
    ("timed out", RuntimeError("The read operation timed out")),
    ("requires more credits", RuntimeError("This request requires more credits")),
    ("insufficient credits", RuntimeError("Insufficient credits")),
    ("credit balance", RuntimeError("Your credit balance is too low")),
    ("rate limit", RuntimeError("Rate limit reached for requests")),
    ("quota", RuntimeError("Quota exceeded for metric")),
    ("exceeded your current quota", RuntimeError("You exceeded your current quota")),
    ("overloaded", RuntimeError("Overloaded")),
    ("code ETIMEDOUT", StatusError("x", code="ETIMEDOUT")),
    ("code NETWORK_ERROR", StatusError("x", code="NETWORK_ERROR")),
    ("code server_error", StatusError("x", code="server_error")),
    ("stream error type overloaded_error", provider(kind="stream", error_type="overloaded_error")),
    ("stream error type api_error", provider(kind="stream", error_type="api_error")),
    ("stream error type rate_limit_error", provider(kind="stream", error_type="rate_limit_error")),
    ("quota code on a 429", provider(429, error_code="insufficient_quota")),
    ("empty credit balance as a 400 (Anthropic)", provider(400, "Your credit balance is too low")),
    ("billing_error type on a 400", provider(400, error_type="billing_error")),
    ("wrapped: raised from a ConnectionError", RuntimeError("model call failed")),
]
RETRYABLE[-1][1].__cause__ = ConnectionResetError()


@pytest.mark.parametrize(("case", "error"), RETRYABLE, ids=[case for case, _ in RETRYABLE])
def test_retryable(case: str, error: BaseException) -> None:
    assert is_retryable_error(error), case


# --- content-policy refusals, retried whatever the status ---------------------------------

REFUSALS: list[tuple[str, BaseException]] = [
    ("kind refusal", provider(kind="refusal")),
    ("kind refusal on a 400", provider(400, kind="refusal")),
    (
        "code content_policy_violation on a 400",
        provider(400, error_code="content_policy_violation"),
    ),
    ("type content_filter on a 400", provider(400, error_type="content_filter")),
    ("code safety_violations", provider(400, error_code="safety_violations")),
    ("upper-case code", provider(400, error_code="CONTENT_POLICY_VIOLATION")),
    (
        "nested details.error.code",
        provider(400, error={"code": "content_policy_violation", "message": "no"}),
    ),
    ("nested details.error.type", provider(400, error={"type": "content_filter"})),
    ("code attribute", StatusError("x", status=400, code="content_filter")),
    ("type attribute", StatusError("x", status=400, type="content_policy_violation")),
    (
        "SDK body envelope",
        StatusError("x", status_code=400, body={"error": {"code": "content_policy_violation"}}),
    ),
    ("message: content policy", provider(400, "Your request was rejected by our content policy")),
    ("message: content_policy", provider(400, "error: content_policy")),
    ("message: content filter", provider(400, "The response was blocked by the content filter")),
    ("message: safety guidelines", provider(400, "This violates safety guidelines")),
    ("message: safety policy", provider(422, "blocked by safety policy")),
    ("message: usage policies", provider(400, "blocked by Anthropic's usage policies")),
    ("message: safety_violations", provider(400, "safety_violations: sexual")),
]


@pytest.mark.parametrize(("case", "error"), REFUSALS, ids=[case for case, _ in REFUSALS])
def test_content_policy_refusals_are_retryable_even_on_a_400(
    case: str, error: BaseException
) -> None:
    assert is_content_policy_refusal(error), case
    assert is_retryable_error(error), case


# --- not retryable ------------------------------------------------------------------------------

NOT_RETRYABLE: list[tuple[str, BaseException]] = [
    ("400", provider(400, "max_tokens is too large")),
    ("400 mentioning 500 in its text", provider(400, "max_tokens: 500 exceeds the limit")),
    ("400 mentioning a rate limit", provider(400, "rate limit field is invalid")),
    ("404 model not found", provider(404, "model not found")),
    ("408 from the server", provider(408, "request timeout")),
    ("409", provider(409)),
    ("413", provider(413, "request too large")),
    ("422", provider(422, "unprocessable")),
    ("[400] prefix, no status field", ProviderError("[400] bad request")),
    ("status attribute 404", StatusError("429 in text but status says 404", status=404)),
    ("501 not implemented", provider(501, "Not Implemented")),
    ("kind stream with no marker", provider(kind="stream")),
    ("kind other with no marker", provider(kind="other")),
    ("plain ValueError", ValueError("bad argument")),
    ("KeyError", KeyError("x")),
    ("FileNotFoundError is an OSError but not a network failure", FileNotFoundError("x.txt")),
    ("PermissionError", PermissionError(errno.EACCES, "denied")),
    ("money is not a status", RuntimeError("spend cap of $500.00 reached")),
    ("a decimal is not a status", RuntimeError("temperature 429.5 out of range")),
    ("a longer number is not a status", RuntimeError("token 15003 invalid")),
    ("GMIError default http_status 500 is not the provider's", GMIError("boom")),
    ("GMIError INVALID_ARGUMENT", GMIError("bad", GMIErrorCode.INVALID_ARGUMENT)),
    ("ScriptStep.fail(None)", ScriptStep.fail(None).error or Exception()),
    ("wrapped: raised from a ValueError", RuntimeError("model call failed")),
]
NOT_RETRYABLE[-1][1].__cause__ = ValueError("bad")


@pytest.mark.parametrize(("case", "error"), NOT_RETRYABLE, ids=[case for case, _ in NOT_RETRYABLE])
def test_not_retryable(case: str, error: BaseException) -> None:
    assert not is_retryable_error(error), case


# --- the caller's abort, never retried ------------------------------------------------------

ABORTS: list[tuple[str, BaseException]] = [
    ("asyncio.CancelledError", asyncio.CancelledError()),
    ("GMIError ABORTED", GMIError("stopped", GMIErrorCode.ABORTED)),
    ("GMIError ABORTED by its wire string", GMIError("stopped", "SYS_ABORTED")),
    (
        "ProviderError ABORTED with a 503",
        ProviderError("[503] aborted", status_code=503, code=GMIErrorCode.ABORTED),
    ),
    ("details error_type aborted", provider(503, error_type="aborted")),
    ("kind attribute aborted", StatusError("x", kind="aborted", status=503)),
    ("type attribute abort", StatusError("ETIMEDOUT", type="abort")),
    ("name AbortError", StatusError("fetch failed", name="AbortError")),
    ("class AbortError", AbortError("This operation was aborted: 429")),
    ("abort that mentions a refusal", GMIError("content policy", GMIErrorCode.ABORTED)),
]


@pytest.mark.parametrize(("case", "error"), ABORTS, ids=[case for case, _ in ABORTS])
def test_a_callers_abort_is_never_retried(case: str, error: BaseException) -> None:
    assert is_caller_abort(error), case
    assert not is_retryable_error(error), case


def budget_refusal() -> CostCapExceededError:
    info = SpendLimitInfo("max_total_tokens", 1000, 900, 700, "gmi.step", "openai", "gpt-5.6-sol")
    # Its text holds numbers a status scan would read as a 500 and a 429.
    return CostCapExceededError(
        "budget refused gmi.step: its worst case of 700 tokens (200 prompt + 500 output) "
        "on top of 429 spent",
        info,
    )


def test_a_budgets_refusal_is_the_callers_stop_and_never_retried() -> None:
    error = budget_refusal()
    assert error.http_status == 402
    assert is_caller_stop(error)
    assert not is_caller_abort(error)
    assert not is_retryable_error(error)


def test_an_abort_is_a_callers_stop() -> None:
    assert is_caller_stop(asyncio.CancelledError())
    assert not is_caller_stop(provider(503))


def test_base_exceptions_are_never_retried() -> None:
    assert not is_retryable_error(KeyboardInterrupt())
    assert not is_retryable_error(SystemExit(1))
    assert not is_retryable_error(GeneratorExit())


def test_a_timeout_raised_from_a_cancellation_is_still_a_retryable_timeout() -> None:
    # asyncio.timeout() raises TimeoutError from the CancelledError it caused.
    error = TimeoutError()
    error.__cause__ = asyncio.CancelledError()
    assert not is_caller_abort(error)
    assert is_retryable_error(error)


async def test_asyncio_timeout_is_retryable() -> None:
    with pytest.raises(TimeoutError) as caught:
        async with asyncio.timeout(0):
            await asyncio.sleep(1)
    assert is_retryable_error(caught.value)


def test_a_connection_aborted_by_the_peer_is_not_a_callers_abort() -> None:
    assert not is_caller_abort(ConnectionAbortedError())
    assert is_retryable_error(ConnectionAbortedError())


def test_a_cause_chain_that_loops_ends() -> None:
    first, second = RuntimeError("a"), RuntimeError("b")
    first.__cause__, second.__cause__ = second, first
    assert not is_retryable_error(first)


def test_a_broken_str_does_not_break_classification() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert not is_retryable_error(Unprintable())
    assert is_retryable_error(type("Broken", (Unprintable, TimeoutError), {})())


# --- quota exhaustion and status extraction --------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        provider(429, error_code="insufficient_quota"),
        provider(error_type="billing_error"),
        StatusError("x", code="insufficient_quota"),
        StatusError("x", body={"error": {"type": "billing_error"}}),
        RuntimeError("You exceeded your current quota, please check your plan"),
        RuntimeError("This request requires more credits, or fewer max_tokens"),
        RuntimeError("Insufficient credits"),
        RuntimeError("Your credit balance is too low to access the Anthropic API"),
    ],
)
def test_quota_exhaustion(error: BaseException) -> None:
    assert is_quota_exhaustion(error)


@pytest.mark.parametrize(
    "error",
    [provider(429, "Rate limit reached"), provider(500), RuntimeError("x"), KeyboardInterrupt()],
)
def test_not_quota_exhaustion(error: BaseException) -> None:
    assert not is_quota_exhaustion(error)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (provider(418), 418),
        (ProviderError("[502] x"), 502),
        (ProviderError("  [429] x"), 429),
        (ProviderError("[400] x", status_code=503), 503),  # the typed field beats the text
        (StatusError("[500] x", status_code=404), 404),
        (StatusError("x", status=True), None),  # a bool is no status
        (StatusError("x", status="RESOURCE_EXHAUSTED"), None),
        (StatusError("x", status=99), None),
        (StatusError("x", status=600), None),
        (StatusError("x", response=_Response(429)), 429),
        (GMIError("x", details={"status_code": 503}), 503),
        (GMIError("x", http_status=404), None),  # a server's answer, not a provider's
        (RuntimeError("status 503 somewhere inside"), None),  # text scan is not a status
        (RuntimeError("[999] x"), None),
        (RuntimeError(), None),
    ],
)
def test_http_status_of(error: BaseException, status: int | None) -> None:
    assert http_status_of(error) == status


# --- properties -------------------------------------------------------------------------------

# An alphabet that cannot spell any marker word (refusal, quota, credit, network, abort,
# overload, timeout): the letters a-j, digits and punctuation. Digits let retryable numbers
# such as "503" appear in the text, which must not override the status.
_PLAIN_TEXT = st.text(alphabet="abcdefghij0123456789 :[]-_.$", max_size=40)
_OTHER_4XX = st.integers(400, 499).filter(lambda s: s not in {401, 402, 403, 429})


@given(status=_OTHER_4XX, message=_PLAIN_TEXT, kind=st.sampled_from(["http", "other", "stream"]))
def test_property_other_4xx_without_refusal_markers_is_not_retryable(
    status: int, message: str, kind: ProviderErrorKind
) -> None:
    assert not is_retryable_error(ProviderError(message, status_code=status, kind=kind))
    assert not is_retryable_error(ProviderError(f"[{status}] {message}"))
    assert not is_retryable_error(StatusError(message, status=status))


@given(
    status=st.sampled_from(sorted(RETRYABLE_STATUS_CODES)),
    message=_PLAIN_TEXT,
    kind=st.sampled_from(["http", "other", "stream"]),
)
def test_property_a_retryable_status_is_retryable_unless_aborted(
    status: int, message: str, kind: ProviderErrorKind
) -> None:
    assert is_retryable_error(ProviderError(message, status_code=status, kind=kind))
    aborted = ProviderError(message, status_code=status, kind=kind, code=GMIErrorCode.ABORTED)
    assert not is_retryable_error(aborted)


@given(status=st.integers(100, 599), message=st.text(max_size=60))
def test_property_a_refusal_marker_makes_any_status_retryable(status: int, message: str) -> None:
    error = ProviderError(message, status_code=status, details={"error_code": "content_filter"})
    assert is_retryable_error(error)
