"""`generate_text()` and `stream_text()`: the spec's lightweight helpers (no GMI, no history).

The caller passes earlier turns in ``messages``; ``system`` and ``prompt`` add a leading system
message and a closing user message (a blank one adds none; a blank prompt without messages is
refused). The tools given (`Tool` objects, or plain functions, wrapped as `Tool.from_function` does,
or a `ToolBox` read again before each step) run for up to ``max_steps`` (5) model steps. The
prompt and options are checked before any model call (`agentos.api.call_checks`), and a bad one
raises `GMIError` naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict, Unpack, cast

from agentos.core.messages import ContentPart, Message, Role
from agentos.llm.budget import JointBudget, SpendBudget
from agentos.llm.gateway import (
    CompletionGateway,
    FallbackLeg,
    GatewayDefaults,
    Router,
)
from agentos.llm.metering import MeteringContext
from agentos.llm.model import ChatModel, CompletionOptions, ToolChoice, thinking_budget_tokens
from agentos.loop import LoopHooks
from agentos.storage.ledger import UsageLedger
from agentos.tools.orchestrator import ToolGate
from agentos.tools.tool import Tool
from agentos.tools.toolbox import ToolBox

from .agent_hooks import (
    AfterGenerationContext,
    BeforeGenerationContext,
    BeforeToolExecutionContext,
    wrap_after_generation,
    wrap_before_generation,
    wrap_before_tool,
)
from .approvals import ToolApprovalGate, check_approve_tool, tool_gate
from .call_checks import (
    cache_diagnostics_request,
    check_call_options,
    check_prompt,
    check_tool_choice,
    invalid,
    refuse_unknown_options,
    tools_option,
)
from .gateway_factory import build_gateway, coerce_legs
from .results import ErrorPart, GenerateTextResult
from .stream_result import StreamTextResult
from .structured import ResponseSchema, structured_spec
from .text_run import TextRun

__all__ = [
    "DEFAULT_COT_INSTRUCTION",
    "DEFAULT_MAX_STEPS",
    "TextOptions",
    "generate_text",
    "stream_text",
    "tool_set",
]

DEFAULT_MAX_STEPS = 5
"""The spec's default limit of model steps per call."""


class TextOptions(TypedDict, total=False):
    """The keyword options of `generate_text()` and `stream_text()` (all optional).

    - ``provider`` / ``model``: who serves the call: a provider id, a ``"provider:model"``
      string, or a `ChatModel` instance as ``model``. Neither: the first provider whose key is
      set, else the embedded local model.
    - ``system``, ``messages``: a leading system prompt and the earlier turns.
    - ``tools`` (`Tool` objects or plain functions, or a `ToolBox`), ``max_steps`` (5),
      ``tool_choice``: the tool loop. A `ToolBox` is read again before each step: a tool
      added to it while the call runs (by one of its tools) is offered from the next step.
      ``tool_choice`` is ``auto`` when tools are offered and unset, and goes with
      every step (as a GMI turn sends it on each call), so ``"required"`` keeps calling tools
      until ``max_steps``.
    - ``chain_of_thought``: ``True`` (or an instruction of your own) puts a reasoning
      instruction first in the system prompt of each call that offers tools.
    - ``temperature``, ``max_tokens``, ``top_p``, ``frequency_penalty``, ``presence_penalty``,
      ``stop``, ``seed``, ``user_id``, ``request_timeout``, ``custom_model_params``: completion
      options, sent only when set.
    - ``api_key``, ``base_url``: credentials and endpoint for the primary provider; they serve
      every fallback hop on that provider, never one on another (DESIGN §5.20). A leg may
      carry its own ``api_key`` / ``base_url``.
    - ``fallback_providers``, ``on_fallback``, ``router``, ``policy_tier``: the completion
      gateway's hops (unset fallback: the policy-aware chain from the provider keys in the
      environment; ``[]``: none). A retryable failure before output moves to the next hop.
    - ``budget``: a `SpendBudget` every model call is checked against before it is sent; the
      call's worst case stays reserved until it settles (DESIGN §5.18). A `JointBudget` holds
      each model call to several budgets: refused when any refuses, charged to each (an
      ancestor they share once).
    - ``approve_tool``: a gate asked about each tool call after ``on_before_tool_execution``,
      with the arguments the hook left: ``approve_tool(call)`` returns ``True`` / ``False`` or
      an `ApprovalDecision` (or an awaitable of one). A call it does not approve is skipped and
      the model gets the error result ``"Tool call '<name>' was not approved: <reason>"``; a
      gate that raises does not approve, the exception as the reason.
    - ``usage_ledger``: a ledger that gets one row per finished step, billed failure or step
      left early (estimated, DESIGN §5.19); the process-wide observer gets an event either way.
    - ``response_schema`` (a pydantic model or a JSON schema) and ``schema_name``: ask for a
      structured answer; ``result.object`` holds it, validated, or `ObjectGenerationError`.
    - ``cache_diagnostics``: ``True``, or the id of an earlier response to compare with, asks
      for prompt-cache diagnostics (Anthropic) on every step, each later step compared with the
      previous step's response; each `StepResult` carries ``cache_diagnostics``.
    - ``thinking`` (a reasoning token budget, or ``{"budget_tokens": n}``), ``effort``
      (``"low"``, ``"medium"``, ``"high"``, ...) and ``cache`` (``True``, ``False``, ``"5m"``
      or ``"1h"``: prompt caching), sent in each provider's form.
    - ``on_before_generation``, ``on_after_generation``, ``on_before_tool_execution``: the
      hooks `agentos.api.agent_hooks` describes, with the semantics they have on a GMI.
    """

    provider: str | None
    model: str | ChatModel | None
    system: str | None
    messages: Sequence[Message] | None
    tools: Sequence[Tool | Callable[..., Any]] | ToolBox | None
    max_steps: int
    tool_choice: ToolChoice | None
    chain_of_thought: bool | str
    temperature: float | None
    max_tokens: int | None
    top_p: float | None
    frequency_penalty: float | None
    presence_penalty: float | None
    stop: Sequence[str] | None
    seed: int | None
    user_id: str | None
    request_timeout: float | None
    custom_model_params: dict[str, Any] | None
    api_key: str | None
    base_url: str | None
    fallback_providers: Sequence[FallbackLeg | Mapping[str, Any]] | None
    on_fallback: Callable[[BaseException, str], None] | None
    router: Router | None
    policy_tier: str | None
    budget: SpendBudget | JointBudget | None
    approve_tool: ToolApprovalGate | None
    usage_ledger: UsageLedger | None
    response_schema: ResponseSchema | None
    schema_name: str | None
    cache_diagnostics: bool | str | None
    thinking: bool | int | Mapping[str, Any] | None
    effort: str | None
    cache: bool | Literal["5m", "1h"] | None
    on_before_generation: Callable[[BeforeGenerationContext], Any] | None
    on_after_generation: Callable[[AfterGenerationContext], Any] | None
    on_before_tool_execution: Callable[[BeforeToolExecutionContext], Any] | None


_OPTION_NAMES = frozenset(TextOptions.__annotations__)

DEFAULT_COT_INSTRUCTION = (
    "Before you act, think briefly about the request: what you already know, what you still "
    "need, and whether one of your tools would get it. Then call the tool that fits, or answer "
    "directly if none is needed."
)
"""The reasoning instruction ``chain_of_thought=True`` puts first in a tool call's system prompt."""


async def generate_text(
    prompt: str | list[ContentPart] | None = None, **options: Unpack[TextOptions]
) -> GenerateTextResult:
    """Run the model (and its tool rounds) to the end and return the result.

    Raises `GMIError` naming the option for a bad option, before any model call, and
    `agentos.llm.ProviderError` (code ``LLM_PROVIDER_ERROR``, HTTP status kept) when the
    provider fails. See `TextOptions` for the options.
    """
    run = _prepare(prompt, options)
    async for part in run.parts():
        if isinstance(part, ErrorPart):  # pragma: no cover - parts() raises instead
            raise part.error
    return run.result()


def stream_text(
    prompt: str | list[ContentPart] | None = None, **options: Unpack[TextOptions]
) -> StreamTextResult:
    """Start a generation and return a `StreamTextResult` to read it as it streams.

    Options are checked (and the model resolved) at once; the model is first called when the
    stream is read or one of the result's awaitables is awaited. A failure ends
    ``full_stream`` with an `ErrorPart` and a ``FinishPart("error")``. See `TextOptions`.
    """
    return StreamTextResult(_prepare(prompt, options), options.get("response_schema"))


def _prepare(prompt: str | list[ContentPart] | None, options: TextOptions) -> TextRun:
    refuse_unknown_options(options, _OPTION_NAMES)
    messages = options.get("messages")
    check_prompt(prompt, messages_given=bool(messages))
    check_call_options(options)
    tool_list = tool_set(options.get("tools"))
    approve = options.get("approve_tool")
    check_approve_tool(approve)
    tool_choice = options.get("tool_choice")
    check_tool_choice(tool_choice, list(tool_list))
    max_steps = options.get("max_steps", DEFAULT_MAX_STEPS)
    stop = options.get("stop")
    chain_of_thought = options.get("chain_of_thought", False)
    hooks = _hooks(options)
    history: list[Message] = []
    system = _system_prompt(options.get("system"), chain_of_thought if tool_list else False)
    if system:
        history.append(Message.system(system))
    for message in messages or []:
        if message.role not in (Role.ERROR, Role.THOUGHT):
            history.append(message)
    if prompt is not None and not (isinstance(prompt, str) and not prompt.strip()):
        history.append(Message.user(prompt))  # a blank prompt beside messages adds nothing
    response_schema = options.get("response_schema")
    spec = None
    if response_schema is not None:
        spec = structured_spec(response_schema, options.get("schema_name"))
    completion = CompletionOptions(
        temperature=options.get("temperature"),
        max_tokens=options.get("max_tokens"),
        top_p=options.get("top_p"),
        frequency_penalty=options.get("frequency_penalty"),
        presence_penalty=options.get("presence_penalty"),
        stop_sequences=tuple(stop) if stop is not None else None,
        seed=options.get("seed"),
        tool_choice=tool_choice,
        user_id=options.get("user_id"),
        request_timeout=options.get("request_timeout"),
        custom_model_params=dict(options.get("custom_model_params") or {}),
        response_schema=spec.json_schema if spec else None,
        schema_name=spec.name if spec else None,
        cache_diagnostics=cache_diagnostics_request(options.get("cache_diagnostics")),
        thinking_budget_tokens=thinking_budget_tokens(options.get("thinking")),
        effort=options.get("effort"),
        cache=options.get("cache"),
    )
    turn = _gateway(options).begin_turn(task_hint=_task_hint(history))
    primary = turn.resolve()
    check_options = getattr(primary.model, "check_options", None) if primary else None
    if callable(check_options):
        check_options(completion)
    gate: ToolGate | None = tool_gate(approve) if approve is not None else None
    return TextRun(turn, history, tool_list, completion, max_steps, spec, hooks, gate)


def tool_set(value: object, option: str = "tools") -> ToolBox | list[Tool]:
    """The ``tools`` option: a `ToolBox` as it is (read live), else `tools_option`'s list.

    Raises `GMIError` naming ``option`` as `tools_option` does.
    """
    if isinstance(value, ToolBox):
        return value
    return tools_option(value, option)


def _hooks(options: TextOptions) -> LoopHooks:
    """The call's hooks, each wrapped as a GMI's (checked by `check_call_options`)."""
    before = options.get("on_before_generation")
    after = options.get("on_after_generation")
    vet = options.get("on_before_tool_execution")
    return LoopHooks(
        system=options.get("system") or "",
        before_model_call=wrap_before_generation(before) if before is not None else None,
        after_model_step=wrap_after_generation(after) if after is not None else None,
        before_tool_call=wrap_before_tool(vet) if vet is not None else None,
    )


def _gateway(options: TextOptions) -> CompletionGateway:
    """The call's gateway: its hops are metered and, with a budget, held to it."""
    chosen = options.get("model")
    instance = chosen if chosen is not None and not isinstance(chosen, str) else None
    if instance is not None and options.get("provider") is not None:
        invalid("provider", "pass either a model instance or a provider, not both")
    budget = options.get("budget")
    if budget is not None and not isinstance(budget, SpendBudget | JointBudget):
        invalid("budget", f"must be a SpendBudget or a JointBudget, got {type(budget).__name__}")
    return build_gateway(
        GatewayDefaults(
            provider=options.get("provider"),
            model=None if instance is not None else cast("str | None", chosen),
            api_key=options.get("api_key"),
            base_url=options.get("base_url"),
            fallback_providers=coerce_legs(options.get("fallback_providers")),
            router=options.get("router"),
            policy_tier=options.get("policy_tier"),
            on_fallback=options.get("on_fallback"),
        ),
        instance=instance,
        budget=budget,
        ledger=options.get("usage_ledger"),
        call="generate_text",
        context=MeteringContext(source="generate_text"),
    )


def _task_hint(history: Sequence[Message]) -> str:
    """The router's task hint: the text of the last user message."""
    return next((m.text for m in reversed(history) if m.role is Role.USER), "")


def _system_prompt(system: str | None, chain_of_thought: bool | str) -> str:
    """The system prompt, with the reasoning instruction first when it applies."""
    instruction = (
        chain_of_thought
        if isinstance(chain_of_thought, str)
        else (DEFAULT_COT_INSTRUCTION if chain_of_thought else "")
    )
    return "\n\n".join(part for part in (instruction.strip(), system or "") if part)
