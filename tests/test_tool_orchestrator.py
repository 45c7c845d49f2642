"""`ToolOrchestrator`: listing a turn's tools, capability checks, and every call outcome."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolCall, ToolResult
from agentos.llm import ToolDefinition
from agentos.tools import (
    Tool,
    ToolArgumentsError,
    ToolExecutionContext,
    ToolOrchestrator,
    tool,
    tool_error_result,
)


def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


async def shout(text: str) -> str:
    """Upper-case a text."""
    await asyncio.sleep(0)
    return text.upper()


def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


def remember(key: str, value: str, ctx: ToolExecutionContext) -> dict[str, Any]:
    """Store a value in the session."""
    ctx.session_data[key] = value
    return {
        "gmi": ctx.gmi_id,
        "persona": ctx.persona_id,
        "user": ctx.user_id,
        "session": ctx.session_id,
        "correlation": ctx.correlation_id,
        "tier": ctx.user_context.get("tier"),
        "keys": sorted(ctx.session_data),
    }


async def whoami(ctx: ToolExecutionContext | None = None) -> str | None:
    """The user the call runs for."""
    return None if ctx is None else ctx.user_id


ADD = Tool.from_function(add)
SHOUT = Tool.from_function(shout)
EXPLODE = Tool.from_function(explode)
SEARCH = Tool.from_function(add, name="web_search", required_capabilities=["web", "net"])
DELETE = Tool.from_function(add, name="delete_files", required_capabilities=["fs.write"])


def error(call_id: str, name: str, code: str, message: str, **details: Any) -> ToolResult:
    error_details: dict[str, Any] = {"code": code, "message": message}
    if details:
        error_details["details"] = details
    return ToolResult(call_id, name, output=message, is_error=True, error_details=error_details)


# --- Tool additions ----------------------------------------------------------------------------


def test_required_capabilities_default_to_none_and_are_kept() -> None:
    assert ADD.required_capabilities == ()
    assert SEARCH.required_capabilities == ("web", "net")
    schema_tool = Tool.from_schema(
        "ping", "Ping.", {"type": "object"}, lambda: "pong", required_capabilities=["net"]
    )
    assert schema_tool.required_capabilities == ("net",)

    @tool(required_capabilities=("clock",))
    def now() -> str:
        """The time."""
        return "noon"

    assert now.required_capabilities == ("clock",)


def test_required_capabilities_reject_a_bare_string_and_blanks() -> None:
    with pytest.raises(TypeError, match="must be a list of names, not a str"):
        Tool.from_function(add, required_capabilities="web")
    with pytest.raises(TypeError, match="holds '', not a capability name"):
        Tool.from_function(add, required_capabilities=["web", ""])


def test_the_context_parameter_is_not_in_the_schema() -> None:
    assert Tool.from_function(remember).parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
        "required": ["key", "value"],
    }
    assert Tool.from_function(whoami).parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {},
    }


async def test_run_without_a_context_gives_an_empty_one() -> None:
    assert await Tool.from_function(remember).run({"key": "k", "value": "v"}) == {
        "gmi": None,
        "persona": None,
        "user": None,
        "session": None,
        "correlation": None,
        "tier": None,
        "keys": ["k"],
    }
    assert await Tool.from_function(add).run({"a": 1, "b": 2}) == 3


async def test_a_schema_tool_handler_receives_the_context() -> None:
    def greet(name: str, context: ToolExecutionContext) -> str:
        return f"hi {name} from {context.persona_id}"

    greeter = Tool.from_schema(
        "greet",
        "Greet.",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        greet,
    )
    orchestrator = ToolOrchestrator([greeter])
    result = await orchestrator.process_tool_call(
        ToolCall("c1", "greet", {"name": "Ada"}), ToolExecutionContext(persona_id="atlas")
    )
    assert result == ToolResult("c1", "greet", "hi Ada from atlas")


# --- construction and listing ------------------------------------------------------------------


def test_duplicate_names_and_non_tools_are_refused() -> None:
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        ToolOrchestrator([ADD, Tool.from_function(add)])
    with pytest.raises(TypeError, match="int is not a Tool or a function"):
        ToolOrchestrator([ADD, 42])  # type: ignore[list-item]
    # A plain function is wrapped as Tool.from_function does (issue 11).
    assert [d.name for d in ToolOrchestrator([add]).list_tools()] == ["add"]
    with pytest.raises(TypeError, match="not a str"):
        ToolOrchestrator([ADD], allowed_capabilities="web")


def test_list_tools_leaves_out_disabled_and_denied_tools() -> None:
    orchestrator = ToolOrchestrator(
        [ADD, SHOUT, SEARCH, DELETE], allowed_capabilities=["web", "net"], disabled=["shout"]
    )
    assert orchestrator.list_tools(ToolExecutionContext()) == [
        ADD.definition(),
        SEARCH.definition(),
    ]
    assert [d.name for d in orchestrator.list_tools()] == ["add", "web_search"]
    assert list(orchestrator.tools) == ["add", "shout", "web_search", "delete_files"]


def test_list_tools_needs_every_required_capability() -> None:
    partial = ToolOrchestrator([ADD, SEARCH], allowed_capabilities=["web"])
    assert partial.list_tools() == [ADD.definition()]
    assert partial.missing_capabilities(SEARCH) == ["net"]
    none_allowed = ToolOrchestrator([ADD, SEARCH, DELETE])
    assert none_allowed.list_tools() == [ADD.definition()]


def test_list_tools_with_checks_off_offers_all_but_disabled() -> None:
    orchestrator = ToolOrchestrator(
        [ADD, SEARCH, DELETE], check_capabilities=False, disabled=["delete_files"]
    )
    assert orchestrator.list_tools() == [
        ToolDefinition("add", ADD.description, ADD.parameters),
        SEARCH.definition(),
    ]
    assert orchestrator.missing_capabilities(DELETE) == []


def test_no_tools_lists_nothing() -> None:
    assert ToolOrchestrator().list_tools() == []


# --- outcomes ----------------------------------------------------------------------------------


async def test_a_sync_handler_succeeds() -> None:
    result = await ToolOrchestrator([ADD]).process_tool_call(
        ToolCall("c1", "add", {"a": 2, "b": 3})
    )
    assert result == ToolResult("c1", "add", 5)


async def test_an_async_handler_succeeds() -> None:
    result = await ToolOrchestrator([SHOUT]).process_tool_call(
        ToolCall("c2", "shout", {"text": "hey"})
    )
    assert result == ToolResult("c2", "shout", "HEY")


async def test_the_context_reaches_the_handler() -> None:
    session: dict[str, Any] = {"learning": {"mode": "tutor"}}
    context = ToolExecutionContext(
        gmi_id="gmi-1",
        persona_id="v_researcher",
        user_id="u-7",
        user_context={"tier": "pro"},
        session_id="s-3",
        correlation_id="turn-9",
        session_data=session,
    )
    orchestrator = ToolOrchestrator([Tool.from_function(remember), Tool.from_function(whoami)])
    result = await orchestrator.process_tool_call(
        ToolCall("c3", "remember", {"key": "color", "value": "blue"}), context
    )
    assert result == ToolResult(
        "c3",
        "remember",
        {
            "gmi": "gmi-1",
            "persona": "v_researcher",
            "user": "u-7",
            "session": "s-3",
            "correlation": "turn-9",
            "tier": "pro",
            "keys": ["color", "learning"],
        },
    )
    assert session == {"learning": {"mode": "tutor"}, "color": "blue"}
    assert await orchestrator.process_tool_call(ToolCall("c4", "whoami"), context) == ToolResult(
        "c4", "whoami", "u-7"
    )
    assert await orchestrator.process_tool_call(ToolCall("c5", "whoami")) == ToolResult(
        "c5", "whoami", None
    )


async def test_an_unknown_tool_is_tool_not_found_naming_the_offered_tools() -> None:
    orchestrator = ToolOrchestrator([ADD, SHOUT, DELETE])
    result = await orchestrator.process_tool_call(ToolCall("c1", "mul", {"a": 1}))
    assert result == error(
        "c1",
        "mul",
        "TOOL_NOT_FOUND",
        "Tool 'mul' is not available. Available tools: add, shout.",
    )
    empty = await ToolOrchestrator().process_tool_call(ToolCall("c2", "mul"))
    assert empty == error(
        "c2", "mul", "TOOL_NOT_FOUND", "Tool 'mul' is not available. Available tools: none."
    )


async def test_a_disabled_tool_is_permission_denied() -> None:
    orchestrator = ToolOrchestrator([ADD], disabled=["add", "ghost"])
    assert await orchestrator.process_tool_call(ToolCall("c1", "add", {"a": 1, "b": 2})) == error(
        "c1", "add", "AUTH_PERMISSION_DENIED", "Tool 'add' is disabled."
    )
    # Disabled is checked before the lookup, as in the reference.
    assert await orchestrator.process_tool_call(ToolCall("c2", "ghost")) == error(
        "c2", "ghost", "AUTH_PERMISSION_DENIED", "Tool 'ghost' is disabled."
    )


async def test_a_capability_denied_tool_is_permission_denied_and_not_run() -> None:
    calls: list[str] = []

    def wipe(path: str) -> str:
        calls.append(path)
        return "gone"

    wiper = Tool.from_function(wipe, required_capabilities=["fs.read", "fs.write"])
    orchestrator = ToolOrchestrator([wiper], allowed_capabilities=["fs.read"])
    result = await orchestrator.process_tool_call(ToolCall("c1", "wipe", {"path": "/"}))
    assert result == error(
        "c1",
        "wipe",
        "AUTH_PERMISSION_DENIED",
        "Tool 'wipe' requires capabilities that are not allowed: fs.write.",
        missing_capabilities=["fs.write"],
    )
    assert calls == []
    unchecked = ToolOrchestrator([wiper], check_capabilities=False)
    assert await unchecked.process_tool_call(ToolCall("c2", "wipe", {"path": "/"})) == ToolResult(
        "c2", "wipe", "gone"
    )
    assert calls == ["/"]


async def test_string_arguments_are_parsed() -> None:
    orchestrator = ToolOrchestrator([ADD, Tool.from_function(whoami)])
    json_call = ToolCall("c1", "add", '{"a": 4, "b": 5}')  # type: ignore[arg-type]
    assert await orchestrator.process_tool_call(json_call) == ToolResult("c1", "add", 9)
    blank = ToolCall("c2", "whoami", "  ")  # type: ignore[arg-type]
    assert await orchestrator.process_tool_call(blank) == ToolResult("c2", "whoami", None)
    missing = ToolCall("c3", "whoami", None)  # type: ignore[arg-type]
    assert await orchestrator.process_tool_call(missing) == ToolResult("c3", "whoami", None)


async def test_unparseable_arguments_are_a_validation_error() -> None:
    call = ToolCall("c1", "add", '{"a": 1, "b":')  # type: ignore[arg-type]
    problem = "<root>: arguments are not valid JSON (Expecting value at 13)"
    assert await ToolOrchestrator([ADD]).process_tool_call(call) == error(
        "c1",
        "add",
        "SYS_VALIDATION_ERROR",
        f"Failed to parse arguments for tool 'add': {problem}",
        tool_name="add",
        problems=[problem],
    )


async def test_arguments_that_are_not_an_object_are_a_validation_error() -> None:
    call = ToolCall("c1", "add", "[1, 2]")  # type: ignore[arg-type]
    problem = "<root>: arguments must be a JSON object, not list"
    assert await ToolOrchestrator([ADD]).process_tool_call(call) == error(
        "c1",
        "add",
        "SYS_VALIDATION_ERROR",
        f"Invalid arguments for tool 'add': {problem}",
        tool_name="add",
        problems=[problem],
    )


async def test_invalid_arguments_name_the_tool_and_the_fields() -> None:
    result = await ToolOrchestrator([ADD]).process_tool_call(
        ToolCall("c1", "add", {"a": "one", "c": 3})
    )
    problems = [
        "a: Input should be a valid integer, unable to parse string as an integer",
        "b: Field required",
        "c: Extra inputs are not permitted",
    ]
    assert result == error(
        "c1",
        "add",
        "SYS_VALIDATION_ERROR",
        "Invalid arguments for tool 'add': " + "; ".join(problems),
        tool_name="add",
        problems=problems,
    )


async def test_invalid_arguments_of_a_schema_tool() -> None:
    calls: list[int] = []
    counter = Tool.from_schema(
        "count",
        "Count.",
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        calls.append,
    )
    result = await ToolOrchestrator([counter]).process_tool_call(
        ToolCall("c1", "count", '{"n": "x"}')  # type: ignore[arg-type]
    )
    assert result == error(
        "c1",
        "count",
        "SYS_VALIDATION_ERROR",
        "Invalid arguments for tool 'count': n: 'x' is not of type 'integer'",
        tool_name="count",
        problems=["n: 'x' is not of type 'integer'"],
    )
    assert calls == []


async def test_a_raising_sync_handler_is_tool_execution_failed() -> None:
    result = await ToolOrchestrator([EXPLODE]).process_tool_call(
        ToolCall("c1", "explode", {"reason": "disk full"})
    )
    assert result == error(
        "c1",
        "explode",
        "TOOL_EXECUTION_FAILED",
        "Tool 'explode' failed: RuntimeError: disk full",
        exception_type="RuntimeError",
    )


async def test_a_raising_async_handler_is_tool_execution_failed() -> None:
    async def fetch(url: str) -> str:
        raise ConnectionError(f"cannot reach {url}")

    result = await ToolOrchestrator([Tool.from_function(fetch)]).process_tool_call(
        ToolCall("c1", "fetch", {"url": "x.test"})
    )
    assert result == error(
        "c1",
        "fetch",
        "TOOL_EXECUTION_FAILED",
        "Tool 'fetch' failed: ConnectionError: cannot reach x.test",
        exception_type="ConnectionError",
    )


async def test_output_that_is_not_json_ready_is_tool_execution_failed() -> None:
    def opaque() -> object:
        return object()

    result = await ToolOrchestrator([Tool.from_function(opaque)]).process_tool_call(
        ToolCall("c1", "opaque")
    )
    assert result.is_error
    assert result.error_details is not None
    assert result.error_details["code"] == "TOOL_EXECUTION_FAILED"
    assert result.error_details["details"] == {"exception_type": "PydanticSerializationError"}


async def test_a_gmi_error_from_a_handler_keeps_its_code() -> None:
    def guarded() -> str:
        raise GMIError("quota used up", GMIErrorCode.RATE_LIMIT_EXCEEDED, {"retry_after": 60})

    def validating(n: int) -> int:
        raise ToolArgumentsError("validating", ["n: must be even"])

    orchestrator = ToolOrchestrator([Tool.from_function(guarded), Tool.from_function(validating)])
    assert await orchestrator.process_tool_call(ToolCall("c1", "guarded")) == error(
        "c1", "guarded", "SYS_RATE_LIMIT_EXCEEDED", "quota used up", retry_after=60
    )
    assert await orchestrator.process_tool_call(ToolCall("c2", "validating", {"n": 3})) == error(
        "c2",
        "validating",
        "SYS_VALIDATION_ERROR",
        "Invalid arguments for tool 'validating': n: must be even",
        tool_name="validating",
        problems=["n: must be even"],
    )


async def test_cancellation_is_not_swallowed() -> None:
    started = asyncio.Event()

    async def hang() -> None:
        started.set()
        await asyncio.Event().wait()

    orchestrator = ToolOrchestrator([Tool.from_function(hang)])
    task = asyncio.create_task(orchestrator.process_tool_call(ToolCall("c1", "hang")))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_calls_run_concurrently() -> None:
    gate = asyncio.Event()
    arrived: list[str] = []

    async def wait_for_peer(name: str) -> str:
        arrived.append(name)
        if len(arrived) == 2:
            gate.set()
        await gate.wait()
        return name

    orchestrator = ToolOrchestrator([Tool.from_function(wait_for_peer)])
    results = await asyncio.wait_for(
        asyncio.gather(
            orchestrator.process_tool_call(ToolCall("c1", "wait_for_peer", {"name": "a"})),
            orchestrator.process_tool_call(ToolCall("c2", "wait_for_peer", {"name": "b"})),
        ),
        timeout=5,
    )
    assert list(results) == [
        ToolResult("c1", "wait_for_peer", "a"),
        ToolResult("c2", "wait_for_peer", "b"),
    ]


def test_tool_error_result_matches_the_text_run_shape() -> None:
    call = ToolCall("c1", "x")
    assert tool_error_result(call, GMIErrorCode.TOOL_NOT_FOUND, "nope") == ToolResult(
        "c1",
        "x",
        output="nope",
        is_error=True,
        error_details={"code": "TOOL_NOT_FOUND", "message": "nope"},
    )
    assert tool_error_result(call, "CUSTOM", "m", {"k": 1}).error_details == {
        "code": "CUSTOM",
        "message": "m",
        "details": {"k": 1},
    }


# --- side effects and human-in-the-loop approval -----------------------------------------------


def _sender(sent: list[str]) -> Tool:
    def send_email(to: str) -> str:
        """Send an email."""
        sent.append(to)
        return f"sent to {to}"

    return Tool.from_function(send_email, has_side_effects=True)


def test_has_side_effects_defaults_to_false_and_is_kept() -> None:
    assert ADD.has_side_effects is False
    assert Tool.from_function(add, has_side_effects=True).has_side_effects is True
    schema_tool = Tool.from_schema(
        "ping", "Ping.", {"type": "object"}, lambda: "pong", has_side_effects=True
    )
    assert schema_tool.has_side_effects is True

    @tool(has_side_effects=True)
    def wipe() -> str:
        """Wipe."""
        return "gone"

    assert wipe.has_side_effects is True
    with pytest.raises(TypeError, match="has_side_effects must be a bool"):
        Tool.from_function(add, has_side_effects="yes")  # type: ignore[arg-type]


def test_hitl_is_on_exactly_when_an_approver_is_given_unless_set() -> None:
    sent: list[str] = []
    assert ToolOrchestrator([_sender(sent)]).hitl is False
    assert ToolOrchestrator(approve=lambda call, tool, ctx: True).hitl is True
    assert ToolOrchestrator(hitl=True).hitl is True
    with pytest.raises(ValueError, match="needs hitl on"):
        ToolOrchestrator(approve=lambda call, tool, ctx: True, hitl=False)


async def test_hitl_off_runs_side_effect_tools_without_asking() -> None:
    sent: list[str] = []
    orchestrator = ToolOrchestrator([_sender(sent)])
    result = await orchestrator.process_tool_call(ToolCall("c1", "send_email", {"to": "a@x"}))
    assert result == ToolResult("c1", "send_email", "sent to a@x")
    assert sent == ["a@x"]


async def test_an_approved_call_runs_and_the_approver_sees_call_tool_and_context() -> None:
    sent: list[str] = []
    asked: list[tuple[str, str, str | None]] = []
    sender = _sender(sent)

    async def approve(call: ToolCall, tool: Tool, ctx: ToolExecutionContext | None) -> bool:
        asked.append((call.id, tool.name, ctx.user_id if ctx else None))
        return True

    orchestrator = ToolOrchestrator([sender, ADD], approve=approve)
    context = ToolExecutionContext(user_id="u-1")
    result = await orchestrator.process_tool_call(
        ToolCall("c1", "send_email", {"to": "a@x"}), context
    )
    assert result == ToolResult("c1", "send_email", "sent to a@x")
    # A tool without side effects is never put to the approver.
    assert await orchestrator.process_tool_call(
        ToolCall("c2", "add", {"a": 1, "b": 1})
    ) == ToolResult("c2", "add", 2)
    assert asked == [("c1", "send_email", "u-1")]
    assert sent == ["a@x"]


async def test_a_rejected_call_is_permission_denied_and_not_run() -> None:
    sent: list[str] = []
    orchestrator = ToolOrchestrator([_sender(sent)], approve=lambda call, tool, ctx: False)
    result = await orchestrator.process_tool_call(ToolCall("c1", "send_email", {"to": "a@x"}))
    assert result == error(
        "c1",
        "send_email",
        "AUTH_PERMISSION_DENIED",
        "Tool 'send_email' was not run: HITL rejected (the approver refused the call).",
        reason="HITL rejected",
        has_side_effects=True,
    )
    assert sent == []


async def test_only_true_approves() -> None:
    sent: list[str] = []
    for answer in (None, 1, "yes"):

        def approve(
            call: ToolCall, tool: Tool, ctx: ToolExecutionContext | None, a: object = answer
        ) -> Any:
            return a

        orchestrator = ToolOrchestrator([_sender(sent)], approve=approve)
        result = await orchestrator.process_tool_call(ToolCall("c1", "send_email", {"to": "x"}))
        assert result.is_error
    assert sent == []


async def test_a_sync_approver_may_return_an_awaitable() -> None:
    sent: list[str] = []

    async def later() -> bool:
        return True

    orchestrator = ToolOrchestrator([_sender(sent)], approve=lambda call, tool, ctx: later())
    result = await orchestrator.process_tool_call(ToolCall("c1", "send_email", {"to": "b@x"}))
    assert result == ToolResult("c1", "send_email", "sent to b@x")


async def test_an_approver_that_raises_is_permission_denied() -> None:
    sent: list[str] = []

    def approve(call: ToolCall, tool: Tool, ctx: ToolExecutionContext | None) -> bool:
        raise TimeoutError("nobody answered")

    orchestrator = ToolOrchestrator([_sender(sent)], approve=approve)
    result = await orchestrator.process_tool_call(ToolCall("c1", "send_email", {"to": "a@x"}))
    assert result == error(
        "c1",
        "send_email",
        "AUTH_PERMISSION_DENIED",
        "Approval request for tool 'send_email' failed: TimeoutError: nobody answered",
        reason="HITL error",
        exception_type="TimeoutError",
    )
    assert sent == []


async def test_hitl_without_an_approver_refuses_unless_auto_approved() -> None:
    sent: list[str] = []
    refusing = ToolOrchestrator([_sender(sent)], hitl=True)
    assert await refusing.process_tool_call(ToolCall("c1", "send_email", {"to": "a@x"})) == error(
        "c1",
        "send_email",
        "AUTH_PERMISSION_DENIED",
        "Tool 'send_email' has side effects and requires approval, but no HITL approver is "
        "configured.",
        reason="HITL approver missing",
        has_side_effects=True,
    )
    assert sent == []
    auto = ToolOrchestrator([_sender(sent)], hitl=True, auto_approve_without_approver=True)
    assert await auto.process_tool_call(ToolCall("c2", "send_email", {"to": "a@x"})) == ToolResult(
        "c2", "send_email", "sent to a@x"
    )
    assert sent == ["a@x"]


async def test_require_approval_for_side_effects_off_skips_the_approver() -> None:
    sent: list[str] = []
    orchestrator = ToolOrchestrator(
        [_sender(sent)],
        approve=lambda call, tool, ctx: False,
        require_approval_for_side_effects=False,
    )
    assert not orchestrator.needs_approval(orchestrator.tools["send_email"])
    result = await orchestrator.process_tool_call(ToolCall("c1", "send_email", {"to": "a@x"}))
    assert result == ToolResult("c1", "send_email", "sent to a@x")


async def test_the_approver_only_sees_calls_that_pass_every_other_check() -> None:
    sent: list[str] = []
    asked: list[str] = []

    def approve(call: ToolCall, tool: Tool, ctx: ToolExecutionContext | None) -> bool:
        asked.append(call.id)
        return True

    orchestrator = ToolOrchestrator([_sender(sent)], approve=approve)
    bad_json = ToolCall("c1", "send_email", '{"to":')  # type: ignore[arg-type]
    missing = ToolCall("c2", "send_email", {})
    for call in (bad_json, missing):
        result = await orchestrator.process_tool_call(call)
        assert result.error_details is not None
        assert result.error_details["code"] == "SYS_VALIDATION_ERROR"
    assert asked == []
    # Side-effect tools are still offered to the model.
    assert [d.name for d in orchestrator.list_tools()] == ["send_email"]
