"""The OpenAI Agents SDK's side of the zero-latency turn benchmarks (``gmi_turn``, ``gmi_session``).

openai-agents ships a public test double, ``agents.testing.ScriptedModel``: a `Model` that plays
queued steps (output items and usage) in order, one per model call. `AgentsTurns` holds an
``Agent(name, instructions=SYSTEM, tools=[lookup], model=ScriptedModel())`` and, outside any
timer, queues the steps a turn needs before it runs: for ``TOOL_PROMPT`` a call of
``lookup(q="a")`` then ``TOOL_REPLY``; for any other prompt ``REPLY``. That is the decision
`bench.turn_models.script` makes from the request on agentos's side, with the same usage per call
(``PROMPT_TOKENS`` / ``COMPLETION_TOKENS``) and one text item per reply. Tracing is off
(``set_tracing_disabled(True)`` and ``RunConfig(tracing_disabled=True)``), as agentos records no
trace for these turns either. Each measured run starts on a fresh `ScriptedModel`, since the SDK's
keeps a copy of every call it served.

openai-agents is installed for benchmarks only (``pip install -e '.[bench]'``) and imported
lazily, so the rest of ``bench`` works without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.turn_models import (
    COMPLETION_TOKENS,
    INSTALL_HINT,
    PROMPT_TOKENS,
    REPLY,
    SYSTEM,
    TOOL_ARGS,
    TOOL_PROMPT,
    TOOL_REPLY,
)

if TYPE_CHECKING:
    from agents import Agent, RunConfig, RunResult
    from agents.testing import ScriptedModel

__all__ = ["AgentsTurns", "require_openai_agents", "tool_outputs"]


def require_openai_agents(benchmark: str) -> str:
    """openai-agents' version, tracing turned off; exits naming the install command without it."""
    try:
        import agents
    except ImportError:
        raise SystemExit(
            f"{benchmark} needs openai-agents (its baseline); install it with: {INSTALL_HINT}"
        ) from None
    agents.set_tracing_disabled(True)
    return str(agents.__version__)


def _lookup(q: str) -> str:
    """Look something up.

    Args:
        q: the query
    """
    return f"found {q}"


class AgentsTurns:
    """An openai-agents `Agent` on its `ScriptedModel`, fed each turn's steps before it runs."""

    def __init__(self) -> None:
        from agents import Agent, RunConfig, function_tool

        self._tool = function_tool(_lookup, name_override="lookup")
        self._agent: Agent[Any] = Agent(name="bench", instructions=SYSTEM, tools=[self._tool])
        self.config: RunConfig = RunConfig(tracing_disabled=True)
        self.model: ScriptedModel = self.fresh_model()

    def fresh_model(self) -> ScriptedModel:
        """Start on a new `ScriptedModel` (the old one's record of calls goes); returns it."""
        from agents.testing import ScriptedModel

        self.model = ScriptedModel()
        self._agent = self._agent.clone(model=self.model)
        return self.model

    @property
    def agent(self) -> Agent[Any]:
        """The agent to pass to ``Runner.run``."""
        return self._agent

    def queue(self, prompt: str) -> None:
        """Queue the model steps of one turn on ``prompt`` (call this outside the timer)."""
        from agents.testing import assistant_message, function_call

        if prompt == TOOL_PROMPT:
            call = function_call("lookup", dict(TOOL_ARGS), call_id="c1")
            self.model.extend(
                [
                    {"output": [call], "usage": _usage()},
                    {"output": [assistant_message(TOOL_REPLY)], "usage": _usage()},
                ]
            )
        else:
            self.model.extend([{"output": [assistant_message(REPLY)], "usage": _usage()}])


def _usage() -> Any:
    from agents.usage import Usage

    total = PROMPT_TOKENS + COMPLETION_TOKENS
    return Usage(
        requests=1, input_tokens=PROMPT_TOKENS, output_tokens=COMPLETION_TOKENS, total_tokens=total
    )


def tool_outputs(result: RunResult) -> list[object]:
    """The outputs of every tool call in an openai-agents run."""
    from agents.items import ToolCallOutputItem

    return [item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)]
