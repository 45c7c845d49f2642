"""``forge_tool``: an agent builds a new tool, which joins its session once tested and judged.

Issue 15, item 7, and reference §1.31 (``ForgeToolMetaTool`` → ``EmergentCapabilityEngine.forge``):
input ``{name, description, input_schema, output_schema?, implementation, test_cases (>= 1)}``
where ``implementation`` is ``{mode: "compose", steps: [{name, tool, input_mapping}]}`` (allowed by
default) or ``{mode: "sandbox", code, allowlist?}`` (only with ``allow_sandbox_tools``; the code
defines ``execute(input)`` and runs in a `PythonSandbox`). The pipeline: the learning refusals
(spec: "Before they act, forge_tool [...] check [...] the freeze [...], the mode [...] and the
learner"), build, run every test case, ask the judge (no judge: rejected, as the reference), then
register the tool at session tier in a `ForgedToolRegistry` (``max_session_tools`` 10 per session).

Compose steps run in order; an ``input_mapping`` value ``"$input"`` / ``"$input.a.b"`` reads the
forged tool's input, ``"$prev..."`` the previous step's output, ``"$steps.<name>..."`` a named
earlier step's output; any other value is passed as it is (dicts and lists are mapped through).
The forged tool returns the last step's output.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.emergent._checks import Rejection, check_int, invalid
from agentos.emergent.sandbox import PythonSandbox, SandboxLimits
from agentos.emergent.self_improvement.refusals import learning_refusal
from agentos.tools import Tool, ToolExecutionContext

__all__ = [
    "ForgeCandidate",
    "ForgeJudge",
    "ForgeOptions",
    "ForgeRejected",
    "ForgedToolRegistry",
    "forge_tool_tool",
]

FORGE_TOOL = "forge_tool"
_REFERENCE = re.compile(r"^\$(input|prev|steps\.[A-Za-z0-9_-]+)((?:\.[^.]+)*)$")


class ForgeRejected(Rejection):
    """A forge that did not register; details ``{"status": "rejected", "reason": reason}``."""

    def __init__(self, reason: str, why: str) -> None:
        super().__init__(
            f"forge_tool rejected ({reason}): {why}; no tool was registered.",
            GMIErrorCode.VALIDATION_ERROR,
            reason,
            "emergent",
        )


@dataclass(frozen=True, slots=True)
class ForgeCandidate:
    """What the judge sees: the request and each test case's ``{input, output, passed}``."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    implementation: Mapping[str, Any]
    test_results: tuple[Mapping[str, Any], ...]


JudgeVerdict = bool | tuple[bool, str | None]
ForgeJudge = Callable[[ForgeCandidate], JudgeVerdict | Awaitable[JudgeVerdict]]
"""The model's judgement: ``True`` / ``(True, _)`` registers; ``False`` / ``(False, why)``
rejects. Sync or async."""


class ForgedToolRegistry:
    """The forged tools of each session (session tier): the host reads them to offer them.

    Sessions are keyed as the reference keys them: the context's session id, else its
    correlation id, else its GMI id, else ``"global"``.
    """

    def __init__(self, max_session_tools: int = 10) -> None:
        check_int("max_session_tools", max_session_tools, 1)
        self.max_session_tools = max_session_tools
        self._sessions: dict[str, dict[str, Tool]] = {}

    def tools(self, session: str) -> tuple[Tool, ...]:
        """The tools forged in ``session``, in the order they were registered."""
        return tuple(self._sessions.get(session, {}).values())

    def get(self, session: str, name: str) -> Tool | None:
        """The tool ``name`` forged in ``session``, or None."""
        return self._sessions.get(session, {}).get(name)

    def check_room(self, session: str) -> None:
        """Raise `ForgeRejected` (``session_cap``) when ``session`` holds ``max_session_tools``."""
        if len(self._sessions.get(session, {})) >= self.max_session_tools:
            raise ForgeRejected(
                "session_cap",
                f"the session already holds {self.max_session_tools} forged tools "
                "(max_session_tools)",
            )

    def register(self, session: str, tool: Tool) -> None:
        """Add ``tool`` to ``session``; raises `ForgeRejected` past the cap or on a taken name.

        Checked again here: a concurrent forge may have filled the session while this one ran
        its tests and judge.
        """
        if tool.name in self._sessions.get(session, {}):
            raise ForgeRejected("name_taken", f"a tool named '{tool.name}' already exists")
        self.check_room(session)
        self._sessions.setdefault(session, {})[tool.name] = tool

    @staticmethod
    def session_key(context: ToolExecutionContext | None) -> str:
        """The session a call belongs to."""
        if context is None:
            return "global"
        return context.session_id or context.correlation_id or context.gmi_id or "global"


@dataclass(frozen=True)
class ForgeOptions:
    """What the host gives ``forge_tool`` (reference config defaults).

    ``tools`` are the existing tools compose steps may call; ``judge`` is the model's verdict
    (None: every forge is rejected); ``allow_sandbox_tools`` (False) permits Python code, run by
    ``sandbox`` (a `PythonSandbox` with ``sandbox_memory_mb`` 128 and ``sandbox_timeout_ms`` 5000
    when None); ``registry`` keeps the session tier (``max_session_tools`` 10): the host reads
    it to offer a session its forged tools.
    """

    tools: Mapping[str, Tool] = field(default_factory=dict)
    judge: ForgeJudge | None = None
    allow_sandbox_tools: bool = False
    sandbox_memory_mb: int = 128
    sandbox_timeout_ms: int = 5000
    sandbox: PythonSandbox | None = None
    registry: ForgedToolRegistry = field(default_factory=ForgedToolRegistry)

    def __post_init__(self) -> None:
        if not isinstance(self.tools, Mapping) or not all(
            isinstance(t, Tool) for t in self.tools.values()
        ):
            raise invalid("tools", "must map names to Tool objects")
        if self.judge is not None and not callable(self.judge):
            raise invalid("judge", "must be a callable judge(candidate) -> bool | (bool, why)")
        if not isinstance(self.allow_sandbox_tools, bool):
            raise invalid("allow_sandbox_tools", "must be a bool")
        for option in ("sandbox_memory_mb", "sandbox_timeout_ms"):
            check_int(option, getattr(self, option), 1)
        if self.sandbox is not None and not isinstance(self.sandbox, PythonSandbox):
            raise invalid("sandbox", "must be a PythonSandbox")
        if not isinstance(self.registry, ForgedToolRegistry):
            raise invalid("registry", "must be a ForgedToolRegistry")


_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The new tool's name."},
        "description": {"type": "string", "description": "What the tool does."},
        "input_schema": {"type": "object", "description": "JSON schema of its input."},
        "output_schema": {"type": "object"},
        "implementation": {
            "type": "object",
            "description": '{"mode": "compose", "steps": [{"name", "tool", "input_mapping"}]} '
            'or {"mode": "sandbox", "code": "def execute(input): ..."}',
            "properties": {"mode": {"enum": ["compose", "sandbox"]}},
            "required": ["mode"],
        },
        "test_cases": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {"input": {"type": "object"}, "expected_output": {}},
                "required": ["input"],
            },
        },
    },
    "required": ["name", "description", "input_schema", "implementation", "test_cases"],
    "additionalProperties": False,
}


def forge_tool_tool(options: ForgeOptions) -> Tool:
    """The ``forge_tool`` tool over ``options``; forged tools go to ``options.registry``.

    A call is refused first by `learning_refusal`, then builds, tests, judges and registers;
    each failure is a failed tool result (`ForgeRejected`) and registers nothing. Success
    returns ``{"status": "registered", "tool", "tier": "session", "tests_passed"}``.
    """
    if not isinstance(options, ForgeOptions):
        raise invalid("options", "must be a ForgeOptions")
    registry = options.registry
    sandbox = options.sandbox or PythonSandbox(
        SandboxLimits(
            cpu_seconds=max(1, options.sandbox_timeout_ms // 1000),
            memory_mb=options.sandbox_memory_mb,
            timeout_s=options.sandbox_timeout_ms / 1000,
        )
    )

    async def forge_tool(
        name: str,
        description: str,
        input_schema: dict[str, Any],
        implementation: dict[str, Any],
        test_cases: list[dict[str, Any]],
        context: ToolExecutionContext | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        if (refused := learning_refusal(FORGE_TOOL, context)) is not None:
            raise refused
        session = registry.session_key(context)
        if registry.get(session, name) is not None or name in options.tools:
            raise ForgeRejected("name_taken", f"a tool named '{name}' already exists")
        registry.check_room(session)
        forged = _build(name, description, input_schema, implementation, options, sandbox)
        results = await _run_tests(forged, test_cases, context, output_schema)
        candidate = ForgeCandidate(name, description, input_schema, implementation, results)
        await _judge(options.judge, candidate)
        registry.register(session, forged)
        return {
            "status": "registered",
            "tool": name,
            "tier": "session",
            "tests_passed": len(results),
        }

    return Tool.from_schema(
        FORGE_TOOL,
        "Create a new tool from existing tools (or, where allowed, Python code). It is tested, "
        "judged, then callable in this session.",
        _PARAMETERS,
        forge_tool,
    )


def _build(
    name: str,
    description: str,
    schema: Mapping[str, Any],
    implementation: Mapping[str, Any],
    options: ForgeOptions,
    sandbox: PythonSandbox,
) -> Tool:
    mode = implementation.get("mode")
    if mode == "compose":
        handler = _compose(implementation.get("steps"), options.tools)
    elif mode == "sandbox":
        if not options.allow_sandbox_tools:
            raise ForgeRejected(
                "sandbox_not_allowed",
                "this host does not allow sandbox tools (allow_sandbox_tools)",
            )
        handler = _sandboxed(implementation, sandbox)
    else:
        raise ForgeRejected("invalid", f"implementation.mode must be compose or sandbox: {mode!r}")
    try:
        return Tool.from_schema(name, description, schema, handler)
    except ValueError as exc:
        raise ForgeRejected("invalid", str(exc)) from exc


Handler = Callable[..., Awaitable[Any]]


def _compose(steps: Any, tools: Mapping[str, Tool]) -> Handler:
    if not isinstance(steps, list) or not steps:
        raise ForgeRejected("invalid", "implementation.steps must be a non-empty list")
    checked: list[tuple[str, Tool, Any]] = []
    for index, step in enumerate(steps):
        if not isinstance(step, Mapping) or not isinstance(step.get("tool"), str):
            raise ForgeRejected("invalid", f"implementation.steps[{index}] needs a tool name")
        if step["tool"] == FORGE_TOOL or step["tool"] not in tools:
            raise ForgeRejected(
                "unknown_tool", f"steps[{index}] calls '{step['tool']}', which is not available"
            )
        checked.append((str(step.get("name") or f"step{index}"), tools[step["tool"]], step))

    async def run(forge_context: ToolExecutionContext | None = None, **input: Any) -> Any:
        outputs: dict[str, Any] = {}
        previous: Any = None
        for step_name, tool, step in checked:
            scope = {"input": input, "prev": previous, "steps": outputs}
            arguments = _map(step.get("input_mapping", {}), scope)
            arguments = arguments if isinstance(arguments, dict) else {}
            previous = await tool.run(arguments, forge_context)
            outputs[step_name] = previous
        return previous

    return run


def _map(value: Any, scope: Mapping[str, Any]) -> Any:
    """An input mapping with every ``$input`` / ``$prev`` / ``$steps.<name>`` reference read."""
    if isinstance(value, Mapping):
        return {key: _map(item, scope) for key, item in value.items()}
    if isinstance(value, list):
        return [_map(item, scope) for item in value]
    if not isinstance(value, str) or not (match := _REFERENCE.fullmatch(value)):
        return value
    root, path = match.group(1), match.group(2)
    current: Any = scope["steps"].get(root[6:]) if root.startswith("steps.") else scope[root]
    for key in filter(None, path.split(".")):
        current = current.get(key) if isinstance(current, Mapping) else None
    return current


def _sandboxed(implementation: Mapping[str, Any], sandbox: PythonSandbox) -> Handler:
    code = implementation.get("code")
    if not isinstance(code, str) or not code.strip():
        raise ForgeRejected("invalid", "implementation.code must be Python source")
    allowlist = implementation.get("allowlist", [])
    if not isinstance(allowlist, list) or set(allowlist) - {"crypto"}:
        raise ForgeRejected(
            "invalid",
            "implementation.allowlist may hold only 'crypto': the sandbox has no network and no "
            "files outside its working directory",
        )

    async def run(**input: Any) -> Any:
        return await sandbox.run(code, input)

    return run


async def _run_tests(
    tool: Tool,
    cases: list[dict[str, Any]],
    context: ToolExecutionContext | None,
    output_schema: Mapping[str, Any] | None,
) -> tuple[Mapping[str, Any], ...]:
    """Each case's result, or `ForgeRejected` at the first case that fails.

    A case fails on an error, an output other than its ``expected_output``, or an output outside
    ``output_schema``.
    """
    results: list[Mapping[str, Any]] = []
    for index, case in enumerate(cases):
        try:
            output = await tool.run(case["input"], context)
        except GMIError as exc:
            raise ForgeRejected("test_failed", f"test case {index} failed: {exc.message}") from exc
        except Exception as exc:  # a composed tool's own failure fails the test, not the forge
            raise ForgeRejected("test_failed", f"test case {index} failed: {exc!r}") from exc
        if "expected_output" in case and output != case["expected_output"]:
            raise ForgeRejected(
                "test_failed",
                f"test case {index} returned {output!r}, expected {case['expected_output']!r}",
            )
        if output_schema is not None:
            try:
                jsonschema.validate(output, dict(output_schema))
            except (jsonschema.ValidationError, jsonschema.SchemaError) as exc:
                raise ForgeRejected(
                    "test_failed",
                    f"test case {index} output does not fit output_schema: {exc.message}",
                ) from exc
        results.append({"input": case["input"], "output": output, "passed": True})
    return tuple(results)


async def _judge(judge: ForgeJudge | None, candidate: ForgeCandidate) -> None:
    if judge is None:
        raise ForgeRejected("no_judge", "no model is available to judge the tool")
    try:
        verdict = judge(candidate)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception as exc:
        raise ForgeRejected("judge_rejected", f"the judge raised {exc!r}") from exc
    approved, why = verdict if isinstance(verdict, tuple) else (verdict, None)
    if approved is not True:
        raise ForgeRejected("judge_rejected", f"the judge rejected it: {why or 'no reason given'}")
