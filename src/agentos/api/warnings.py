"""The warning classes agentos's API issues (a `warnings.warn` category a test or host can filter).

`AgentOSWarning` is the base of every warning the API raises through `warnings.warn`;
`UnappliedOptionsWarning` is the capability contract's one warning per agent: the options an
`agent()` or `gmi()` accepts without applying (spec: "GMIs from agent()", Construction; the first
table's "Guardrails, RAG, HITL, channels, emergent tools" row).
"""

from __future__ import annotations

__all__ = ["AgentOSWarning", "UnappliedOptionsWarning"]


class AgentOSWarning(UserWarning):
    """Base class of the warnings agentos issues; filter it to silence them all."""


class UnappliedOptionsWarning(AgentOSWarning):
    """Options an agent accepted without applying them (the capability contract).

    ``options`` holds their names (snake_case, in the order the message lists them) and
    ``runtime`` the agent's runtime (``"legacy"`` or ``"gmi"``).
    """

    def __init__(self, message: str, options: tuple[str, ...] = (), runtime: str = "") -> None:
        super().__init__(message)
        self.options = options
        self.runtime = runtime
