"""The capability contract: the options each runtime accepts without applying them.

Spec: the first table's "Guardrails, RAG, HITL, channels, emergent tools" row, and the gmi
column that GMIs from agent() describe. Each agent issues one warning naming the ones set
(`warn_unapplied`); on the gmi runtime ``voice``, ``avatar`` and ``channels`` raise instead
(`GMI_REFUSED`, checked in `option_checks`).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from typing import Any

from .agent_options import AgentRuntime
from .warnings import UnappliedOptionsWarning

__all__ = [
    "GMI_REFUSED",
    "GMI_UNAPPLIED",
    "LEGACY_UNAPPLIED",
    "is_set",
    "unapplied_options",
    "warn_unapplied",
]

_CONTRACT: tuple[str, ...] = (
    "guardrails",
    "rag",
    "hitl",
    "channels",
    "voice",
    "avatar",
    "emergent",
    "discovery",
    "security",
    "permissions",
    "output",
    "provenance",
)

LEGACY_UNAPPLIED: tuple[str, ...] = (
    *_CONTRACT,
    # The legacy path runs no GMI: no cognitive memory, mechanisms, profile or learning layer
    # (spec: "agent() without runtime: 'gmi' ... warns when given cognitiveMechanisms").
    "memory",
    "cognitive_mechanisms",
    "cognition",
    "learning",
    # The completion gateway has no router parameters or host policy yet (see GMI_UNAPPLIED).
    "router_params",
    "host_policy",
)
"""The options agent() without ``runtime="gmi"`` accepts without applying, in warning order."""

GMI_UNAPPLIED: tuple[str, ...] = (
    "rag",
    "discovery",
    "guardrails",
    "security",
    "permissions",
    "hitl",
    "emergent",
    "output",
    "provenance",
    # agentos's completion gateway takes a router and a policy tier but no router parameters or
    # host policy yet: accepted, named in the warning rather than dropped silently.
    "router_params",
    "host_policy",
)
"""The options gmi() accepts without applying (spec: the gmi column of the contract, and the
two gateway inputs agentos does not have yet)."""

GMI_REFUSED: tuple[str, ...] = ("voice", "avatar", "channels")
"""What gmi() refuses at construction: the GMI path does not run them."""


def is_set(value: object) -> bool:
    """Whether an option counts as set: not ``None`` or ``False``.

    A config that sets nothing but ``enabled: False`` counts as unset (spec: Construction); an
    empty config (``{}``, ``[]``) is set, as ``cognitive_mechanisms={}`` asks for all eight.
    """
    if value is None or value is False:
        return False
    return not (isinstance(value, Mapping) and dict(value) == {"enabled": False})


def unapplied_options(options: Mapping[str, Any], *, runtime: AgentRuntime) -> list[str]:
    """The options that are set and that this runtime accepts without applying.

    Legacy: `LEGACY_UNAPPLIED` (the capability contract, and the GMI-only memory, mechanisms,
    cognition and learning); gmi: `GMI_UNAPPLIED` (voice, avatar and channels raise instead, in
    `check_agent_options`). Each is listed once, in that tuple's order.
    """
    names = GMI_UNAPPLIED if runtime == "gmi" else LEGACY_UNAPPLIED
    return [name for name in names if is_set(options.get(name))]


def warn_unapplied(
    options: Mapping[str, Any],
    *,
    runtime: AgentRuntime,
    logger: logging.Logger | None = None,
    stacklevel: int = 3,
) -> list[str]:
    """Issue the one warning naming the options accepted without being applied; return them.

    Nothing is issued when none is set. The warning is an `UnappliedOptionsWarning` issued with
    `warnings.warn` (``stacklevel`` 3 points at the caller of the agent constructor that calls
    this), or, when ``logger`` is given, logged at WARNING on it instead.
    """
    names = unapplied_options(options, runtime=runtime)
    if not names:
        return names
    entry = "gmi()" if runtime == "gmi" else "agent()"
    message = (
        f"{entry} accepts these options without applying them: {', '.join(names)} "
        "(capability contract)"
    )
    if logger is not None:
        logger.warning(message)
    else:
        warnings.warn(
            UnappliedOptionsWarning(message, tuple(names), runtime), stacklevel=stacklevel
        )
    return names
