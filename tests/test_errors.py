"""`GMIError` and `GMIErrorCode`; `agentos.llm.ProviderError`."""

from __future__ import annotations

import pickle

import pytest

from agentos.core import GMIError, GMIErrorCode, ModelUsage
from agentos.llm import ProviderError

# --- codes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("member", "wire"),
    [
        (GMIErrorCode.PERSONA_NOT_FOUND, "GMI_PERSONA_NOT_FOUND"),
        (GMIErrorCode.NOT_INITIALIZED, "SYS_NOT_INITIALIZED"),
        (GMIErrorCode.CONFIGURATION_ERROR, "SYS_CONFIGURATION_ERROR"),
        (GMIErrorCode.LLM_PROVIDER_ERROR, "LLM_PROVIDER_ERROR"),
        (GMIErrorCode.LLM_PROVIDER_UNAVAILABLE, "LLM_PROVIDER_UNAVAILABLE"),
        (GMIErrorCode.TOOL_ERROR, "TOOL_ERROR"),
        (GMIErrorCode.TOOL_NOT_FOUND, "TOOL_NOT_FOUND"),
        (GMIErrorCode.VALIDATION_ERROR, "SYS_VALIDATION_ERROR"),
        (GMIErrorCode.PARSING_ERROR, "SYS_PARSING_ERROR"),
        (GMIErrorCode.EXTERNAL_TOOL_NOT_RUN, "EXTERNAL_TOOL_NOT_RUN"),
        (GMIErrorCode.GMI_INITIALIZATION_ERROR, "GMI_INITIALIZATION_ERROR"),
        (GMIErrorCode.GMI_PROCESSING_ERROR, "GMI_PROCESSING_ERROR"),
        (GMIErrorCode.PERMISSION_DENIED, "AUTH_PERMISSION_DENIED"),
        (GMIErrorCode.RATE_LIMIT_EXCEEDED, "SYS_RATE_LIMIT_EXCEEDED"),
        (GMIErrorCode.INTERNAL_ERROR, "SYS_INTERNAL_ERROR"),
    ],
)
def test_members_carry_spec_names_and_typescript_wire_values(
    member: GMIErrorCode, wire: str
) -> None:
    assert member.value == wire
    assert str(member) == wire
    assert member == wire
    assert GMIErrorCode(wire) is member


def test_every_value_is_distinct_so_no_member_is_an_alias() -> None:
    assert len(GMIErrorCode.__members__) == len(list(GMIErrorCode))
    assert len({code.value for code in GMIErrorCode}) == len(list(GMIErrorCode))


def test_every_value_is_its_name_or_its_name_behind_a_known_prefix() -> None:
    # GMI_* members already carry their prefix in the name.
    for code in GMIErrorCode:
        assert code.value in {code.name, *(f"{p}_{code.name}" for p in ("SYS", "AUTH", "GMI"))}


def test_an_unknown_wire_value_is_not_a_code() -> None:
    with pytest.raises(ValueError, match="PERSONA_NOT_FOUND"):
        GMIErrorCode("PERSONA_NOT_FOUND")


# --- GMIError --------------------------------------------------------------------------------


def test_defaults() -> None:
    error = GMIError("something broke")
    assert error.message == "something broke"
    assert str(error) == "something broke"
    assert error.args == ("something broke",)
    assert error.code is GMIErrorCode.INTERNAL_ERROR
    assert error.details == {}
    assert error.component is None
    assert error.http_status == 500


def test_is_an_exception_that_can_be_raised_and_caught() -> None:
    with pytest.raises(GMIError) as caught:
        raise GMIError("no such persona", GMIErrorCode.PERSONA_NOT_FOUND, {"persona_id": "x"})
    assert caught.value.code is GMIErrorCode.PERSONA_NOT_FOUND
    assert caught.value.details == {"persona_id": "x"}


def test_details_are_copied() -> None:
    details = {"option": "max_tokens"}
    error = GMIError("bad option", GMIErrorCode.VALIDATION_ERROR, details)
    details["option"] = "changed"
    assert error.details == {"option": "max_tokens"}


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (GMIErrorCode.SERVICE_UNAVAILABLE, 503),
        (GMIErrorCode.VALIDATION_ERROR, 400),
        (GMIErrorCode.INVALID_ARGUMENT, 400),
        (GMIErrorCode.INVALID_STATE, 409),
        (GMIErrorCode.PARSING_ERROR, 400),
        (GMIErrorCode.MISSING_DATA, 400),
        (GMIErrorCode.NOT_IMPLEMENTED, 501),
        (GMIErrorCode.NOT_SUPPORTED, 501),
        (GMIErrorCode.METHOD_NOT_SUPPORTED, 405),
        (GMIErrorCode.RATE_LIMIT_EXCEEDED, 429),
        (GMIErrorCode.TIMEOUT, 504),
        (GMIErrorCode.NOT_FOUND, 404),
        (GMIErrorCode.RESOURCE_NOT_FOUND, 404),
        (GMIErrorCode.PERSONA_NOT_FOUND, 404),
        (GMIErrorCode.TOOL_NOT_FOUND, 404),
        (GMIErrorCode.PROVIDER_NOT_FOUND, 404),
        (GMIErrorCode.RESOURCE_ALREADY_EXISTS, 409),
        (GMIErrorCode.ALREADY_EXISTS, 409),
        (GMIErrorCode.AUTHENTICATION_REQUIRED, 401),
        (GMIErrorCode.PERMISSION_DENIED, 403),
        (GMIErrorCode.ACCESS_DENIED, 403),
        (GMIErrorCode.SUBSCRIPTION_ERROR, 402),
        (GMIErrorCode.LLM_PROVIDER_UNAVAILABLE, 503),
        (GMIErrorCode.NOT_INITIALIZED, 500),
        (GMIErrorCode.CONFIGURATION_ERROR, 500),
        (GMIErrorCode.LLM_PROVIDER_ERROR, 500),
        (GMIErrorCode.TOOL_ERROR, 500),
        (GMIErrorCode.EXTERNAL_TOOL_NOT_RUN, 500),
        (GMIErrorCode.INTERNAL_ERROR, 500),
    ],
)
def test_http_status_follows_the_code(code: GMIErrorCode, status: int) -> None:
    assert GMIError("x", code).http_status == status


def test_explicit_http_status_wins_over_the_code() -> None:
    assert GMIError("x", GMIErrorCode.PERSONA_NOT_FOUND, http_status=410).http_status == 410


def test_a_host_invented_string_code_is_kept_and_answers_500() -> None:
    error = GMIError("custom", "MY_APP_QUOTA")
    assert error.code == "MY_APP_QUOTA"
    assert error.http_status == 500
    assert error.to_dict()["code"] == "MY_APP_QUOTA"


def test_to_dict_is_the_wire_form() -> None:
    error = GMIError(
        "Persona 'x' not found",
        GMIErrorCode.PERSONA_NOT_FOUND,
        {"persona_id": "x"},
        component="GMIManager",
    )
    assert error.to_dict() == {
        "name": "GMIError",
        "code": "GMI_PERSONA_NOT_FOUND",
        "message": "Persona 'x' not found",
        "details": {"persona_id": "x"},
        "component": "GMIManager",
        "http_status": 404,
    }


def test_to_dict_names_the_subclass() -> None:
    class ToolRefusal(GMIError):
        pass

    assert ToolRefusal("no", GMIErrorCode.TOOL_ERROR).to_dict()["name"] == "ToolRefusal"


def test_repr_shows_the_class_code_value_and_message() -> None:
    error = GMIError("not yet", GMIErrorCode.NOT_INITIALIZED)
    assert repr(error) == "GMIError(code='SYS_NOT_INITIALIZED', message='not yet')"


# --- ProviderError ---------------------------------------------------------------------------


def test_provider_error_is_a_gmi_error_with_the_provider_code() -> None:
    error = ProviderError("[429] rate limited", status_code=429)
    assert isinstance(error, GMIError)
    assert error.code is GMIErrorCode.LLM_PROVIDER_ERROR
    assert error.component == "llm"
    assert str(error) == "[429] rate limited"


def test_provider_error_keeps_status_usage_and_after_output() -> None:
    usage = ModelUsage(prompt_tokens=12, completion_tokens=3, cost_usd=0.001)
    error = ProviderError(
        "cut off",
        status_code=502,
        provider_id="openai",
        model_id="gpt-4o-mini",
        usage=usage,
        after_output=True,
    )
    assert error.status_code == 502
    assert error.usage == usage
    assert error.after_output is True
    assert (error.provider_id, error.model_id) == ("openai", "gpt-4o-mini")
    assert error.http_status == 502
    assert error.details == {"status_code": 502, "provider_id": "openai", "model_id": "gpt-4o-mini"}


def test_provider_error_defaults() -> None:
    error = ProviderError("network down")
    assert error.status_code is None
    assert error.usage is None
    assert error.after_output is False
    assert error.details == {}
    assert error.http_status == 500


def test_provider_error_merges_given_details_with_its_own() -> None:
    error = ProviderError("x", status_code=400, details={"body": "bad request"})
    assert error.details == {"body": "bad request", "status_code": 400}


def test_provider_error_code_can_be_overridden() -> None:
    error = ProviderError("nobody home", code=GMIErrorCode.LLM_PROVIDER_UNAVAILABLE)
    assert error.code is GMIErrorCode.LLM_PROVIDER_UNAVAILABLE
    assert error.http_status == 503


def test_provider_error_to_dict() -> None:
    assert ProviderError("[503] overloaded", status_code=503).to_dict() == {
        "name": "ProviderError",
        "code": "LLM_PROVIDER_ERROR",
        "message": "[503] overloaded",
        "details": {"status_code": 503},
        "component": "llm",
        "http_status": 503,
    }


def test_errors_survive_pickling_with_code_and_fields() -> None:
    error = ProviderError("[429] slow down", status_code=429, after_output=True)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is ProviderError
    assert (copy.message, copy.code, copy.status_code, copy.after_output, copy.http_status) == (
        "[429] slow down",
        GMIErrorCode.LLM_PROVIDER_ERROR,
        429,
        True,
        429,
    )
