"""`check_agency_options`: agency() options checked and turned into an `AgencyPlan`.

Spec: "Multi-agent work" (agency() builds each roster member with agent(), a member is a GMI only
when its config sets runtime: 'gmi' or it is an agent built that way); issue 14 item 1 lists the
refusals: an unknown strategy or option, a strategy that needs an agency model or provider
without one, an empty roster, duplicate member names or names that cannot become
``delegate_to_<name>`` tool names, ``max_rounds`` below 1, a review loop with fewer than two
members, a graph with a cycle or an unknown dependency. Each is an `AgencyConfigError` whose
``details["option"]`` names the field, raised before any member is built.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentos.core.errors import GMIError
from agentos.llm.budget import SpendBudget
from agentos.llm.resolve import split_model_string

from ..agent import agent
from ..agent_types import Agent
from ..option_checks import spend_budget_from_option
from .controls import AgencyConfigError, Controls, check_controls, refuse, refuse_unknown

__all__ = [
    "AGENCY_OPTIONS",
    "MODEL_STRATEGIES",
    "STRATEGIES",
    "AgencyConfigError",
    "AgencyPlan",
    "Approvers",
    "Member",
    "check_agency_options",
    "check_controls",
    "refuse",
    "refuse_unknown",
]

STRATEGIES: tuple[str, ...] = tuple(
    ["sequential", "parallel", "debate", "review-loop", "hierarchical", "graph"]
)
"""The strategies agency() runs (spec: "Its strategies are ...")."""

MODEL_STRATEGIES: frozenset[str] = frozenset({"parallel", "debate", "hierarchical"})
"""Strategies whose synthesizer, judge or manager needs the agency's own model or provider."""

AGENCY_OPTIONS: frozenset[str] = frozenset(
    {
        *("agents", "strategy", "model", "provider", "instructions", "max_rounds", "quorum"),
        *("controls", "emergent", "hitl", "adaptive", "budget", "guardrails"),
        *("cognitive_mechanisms", "store", "name"),
    }
)
"""Every option agency() takes; another is refused, named."""

_MEMBER_ONLY = ("depends_on",)
_QUORUM_KEYS = frozenset({"min_agents", "min_providers", "on_shortfall"})
_HITL_KEYS = frozenset({"approvals"})
_APPROVAL_KEYS = frozenset({"before_tool", "before_agent", "before_emergent_spawn"})
# A member's name becomes the tool name delegate_to_<name>: providers take [a-zA-Z0-9_-]{1,64}.
_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_-]*$")
_TOOL_NAME_MAX = 64
_DELEGATE_PREFIX = "delegate_to_"
HELPER_NAMES = frozenset({"manager", "synthesizer", "judge", "specialist_judge"})
"""The names the agency's own plain agents carry in ``agent_calls``; no member may take one."""


@dataclass(frozen=True, slots=True)
class Member:
    """One roster member: its name, its agent, what it waits for (graph), how it is described.

    ``description`` is the member's ``instructions`` (or ``"General purpose"``), shown to a
    manager beside its ``delegate_to_<name>`` tool; ``provider`` is the provider its model
    names, when known (the parallel quorum counts them); ``owned`` is true when the agency
    built the agent from options (its ``close()`` closes it), false for an agent passed in.
    """

    name: str
    agent: Agent
    depends_on: tuple[str, ...] = ()
    description: str = "General purpose"
    provider: str | None = None
    owned: bool = False


Approver = Callable[[Any], Any]
"""An approval handler (`agentos.api.approvals.Approver`), kept untyped here to avoid a cycle."""


@dataclass(frozen=True, slots=True)
class Approvers:
    """``hitl.approvals``: the handlers asked before a tool call, a member call, a spawn."""

    before_tool: Approver | None = None
    before_agent: Approver | None = None
    before_emergent_spawn: Approver | None = None


@dataclass(frozen=True, slots=True)
class AgencyPlan:
    """An agency's checked options: what every strategy reads."""

    strategy: str
    members: list[Member]
    model: Any = None
    provider: str | None = None
    instructions: str | None = None
    max_rounds: int | None = None
    quorum: Mapping[str, Any] = field(default_factory=dict)
    controls: Controls = field(default_factory=Controls)
    emergent: Mapping[str, Any] = field(default_factory=dict)
    hitl: Approvers = field(default_factory=Approvers)
    adaptive: bool = False
    budget: SpendBudget | None = None
    guardrails: tuple[str, ...] = ()
    name: str | None = None

    def member(self, name: str) -> Member:
        """The member called ``name`` (`KeyError` when none is)."""
        for member in self.members:
            if member.name == name:
                return member
        raise KeyError(name)


def check_agency_options(options: Mapping[str, Any]) -> AgencyPlan:
    """Check agency() ``options`` and build the roster; raise `AgencyConfigError` naming a field.

    Everything that needs no member is checked first, then the roster's names and dependencies,
    and only then are the members built with `agent()` (an options mapping without ``model`` or
    ``provider`` gets the agency's).
    """
    refuse_unknown(options, AGENCY_OPTIONS)
    strategy = options.get("strategy") or "sequential"
    if strategy not in STRATEGIES:
        refuse("strategy", f"unknown strategy {strategy!r} (one of {', '.join(STRATEGIES)})")
    model, provider = options.get("model"), options.get("provider")
    adaptive = bool(options.get("adaptive"))
    if (strategy in MODEL_STRATEGIES or adaptive) and model is None and provider is None:
        needs = "adaptive=True" if adaptive else f"the {strategy} strategy"
        refuse("model", f"{needs} needs the agency's own model or provider; give model=")
    max_rounds = options.get("max_rounds")
    if max_rounds is not None and (
        not isinstance(max_rounds, int) or isinstance(max_rounds, bool) or max_rounds < 1
    ):
        refuse("max_rounds", f"must be an integer >= 1, got {max_rounds!r}")
    entries = _roster_entries(options.get("agents"))
    if strategy == "review-loop" and len(entries) < 2:
        refuse("agents", "the review-loop strategy needs two members (a producer and a reviewer)")
    if strategy == "graph":
        check_graph({name: deps for name, _, deps in entries})
    else:
        for name, _, deps in entries:
            if deps:
                refuse(f"agents.{name}.depends_on", "only the graph strategy reads depends_on")
    return AgencyPlan(
        strategy=strategy,
        members=[_build_member(name, spec, deps, model, provider) for name, spec, deps in entries],
        model=model,
        provider=provider,
        instructions=_optional_text(options, "instructions"),
        max_rounds=max_rounds,
        quorum=_check_quorum(options.get("quorum")),
        controls=check_controls(options.get("controls")),
        emergent=_mapping(options, "emergent"),
        hitl=_check_hitl(options.get("hitl")),
        adaptive=adaptive,
        budget=_budget(options.get("budget")),
        guardrails=guardrail_ids(options.get("guardrails")),
        name=_optional_text(options, "name"),
    )


# -- the roster -------------------------------------------------------------------------------

_Entry = tuple[str, Any, tuple[str, ...]]


def _roster_entries(agents: object) -> list[_Entry]:
    """``(name, agent or options, depends_on)`` per member, names checked, in roster order."""
    if agents is None or (isinstance(agents, Mapping | Sequence) and not agents):
        refuse("agents", "the roster is empty; give at least one member")
    if isinstance(agents, Mapping):
        pairs = [(name, spec) for name, spec in agents.items()]
    elif isinstance(agents, Sequence) and not isinstance(agents, str | bytes):
        pairs = [(_entry_name(position, spec), spec) for position, spec in enumerate(agents)]
    else:
        refuse("agents", f"must be a mapping of name to member or a list, got {agents!r}")
    seen: set[str] = set()
    entries: list[_Entry] = []
    for name, spec in pairs:
        _check_name(name)
        if name in seen:
            refuse("agents", f"duplicate member name {name!r}", agent=name)
        seen.add(name)
        entries.append((name, spec, _depends_on(name, spec)))
    return entries


def _entry_name(position: int, spec: object) -> str:
    options = spec if isinstance(spec, Mapping) else getattr(spec, "options", None)
    name = options.get("name") if isinstance(options, Mapping) else None
    if not isinstance(name, str):
        refuse(f"agents[{position}].name", "a member in a list needs a name")
    return name


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        refuse(
            "agents",
            f"member name {name!r} cannot become a tool name delegate_to_<name> "
            "(a letter, then letters, digits, '_' or '-')",
            agent=name,
        )
    if len(_DELEGATE_PREFIX + name) > _TOOL_NAME_MAX:
        refuse("agents", f"member name {name!r} is too long for a tool name", agent=name)
    if name in HELPER_NAMES:
        refuse(
            "agents",
            f"member name {name!r} is the name of one of the agency's own agents "
            f"({', '.join(sorted(HELPER_NAMES))}), which agent_calls must tell apart",
            agent=name,
        )


def _depends_on(name: str, spec: object) -> tuple[str, ...]:
    if not isinstance(spec, Mapping) or spec.get("depends_on") is None:
        return ()
    deps = spec["depends_on"]
    if isinstance(deps, str) or not isinstance(deps, Sequence):
        refuse(f"agents.{name}.depends_on", f"must be a list of member names, got {deps!r}")
    return tuple(str(dep) for dep in deps)


def check_graph(graph: Mapping[str, tuple[str, ...]]) -> list[list[str]]:
    """The graph's tiers (each member after all it depends on), or refuse, naming the agents.

    An unknown dependency names the member and the dependency; a cycle names its members.
    """
    for name, deps in graph.items():
        for dep in deps:
            if dep not in graph:
                refuse(
                    f"agents.{name}.depends_on",
                    f"{name!r} depends on unknown agent {dep!r}",
                    agent=name,
                    dependency=dep,
                )
    tiers: list[list[str]] = []
    done: set[str] = set()
    while len(done) < len(graph):
        tier = [n for n, deps in graph.items() if n not in done and all(d in done for d in deps)]
        if not tier:
            cycle = sorted(n for n in graph if n not in done)
            refuse(
                "agents.depends_on",
                f"the dependencies form a cycle among {', '.join(cycle)}",
                agents=cycle,
            )
        tiers.append(tier)
        done.update(tier)
    return tiers


def _build_member(
    name: str, spec: object, deps: tuple[str, ...], model: Any, provider: str | None
) -> Member:
    if isinstance(spec, Mapping):
        options = {key: value for key, value in spec.items() if key not in _MEMBER_ONLY}
        options.setdefault("name", name)
        if options.get("model") is None and options.get("provider") is None:
            options.update({k: v for k, v in (("model", model), ("provider", provider)) if v})
        built: Agent = agent(**options)
    elif hasattr(spec, "generate") and hasattr(spec, "options"):
        built = spec  # type: ignore[assignment]  # an agent built by agent() or gmi()
    else:
        refuse(f"agents.{name}", f"must be an agent or a mapping of agent() options, got {spec!r}")
    opts = built.options
    description = opts.get("instructions") or "General purpose"
    owned = isinstance(spec, Mapping)
    return Member(name, built, deps, str(description), _provider_of(opts), owned)


def _provider_of(options: Mapping[str, Any]) -> str | None:
    model = options.get("model")
    if model is not None and not isinstance(model, str):
        return getattr(model, "provider_id", None)
    named = options.get("provider")
    return named or split_model_string(None, model)[0] if model else named


# -- the other options ------------------------------------------------------------------------


def _check_quorum(quorum: object) -> Mapping[str, Any]:
    if quorum is None:
        return {}
    if not isinstance(quorum, Mapping):
        refuse("quorum", f"must be a mapping, got {quorum!r}")
    refuse_unknown(quorum, _QUORUM_KEYS, "quorum.")
    for key in ("min_agents", "min_providers"):
        value = quorum.get(key)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 1
        ):
            refuse(f"quorum.{key}", f"must be an integer >= 1, got {value!r}")
    if quorum.get("on_shortfall", "error") not in ("error", "proceed"):
        refuse("quorum.on_shortfall", "must be 'error' or 'proceed'")
    return dict(quorum)


def _check_hitl(hitl: object) -> Approvers:
    if hitl is None:
        return Approvers()
    if not isinstance(hitl, Mapping):
        refuse("hitl", f"must be a mapping, got {hitl!r}")
    refuse_unknown(hitl, _HITL_KEYS, "hitl.")
    approvals = hitl.get("approvals") or {}
    if not isinstance(approvals, Mapping):
        refuse("hitl.approvals", f"must be a mapping, got {approvals!r}")
    refuse_unknown(approvals, _APPROVAL_KEYS, "hitl.approvals.")
    for key, value in approvals.items():
        if value is not None and not callable(value):
            refuse(f"hitl.approvals.{key}", "must be a function taking an ApprovalRequest")
    return Approvers(**{key: value for key, value in approvals.items() if value is not None})


def _budget(budget: object) -> SpendBudget | None:
    try:
        return spend_budget_from_option(budget)
    except GMIError as error:
        refuse(str(error.details.get("option", "budget")), str(error))


def guardrail_ids(guardrails: object) -> tuple[str, ...]:
    """The ids of ``guardrails``: strings as they are, objects by their ``id`` attribute."""
    if guardrails is None:
        return ()
    if isinstance(guardrails, str) or not isinstance(guardrails, Sequence):
        refuse("guardrails", f"must be a list of guardrail ids, got {guardrails!r}")
    ids = [item if isinstance(item, str) else getattr(item, "id", None) for item in guardrails]
    for item in ids:
        if not isinstance(item, str):
            refuse("guardrails", "each guardrail must be an id or have an id attribute")
    return tuple(str(item) for item in ids)


def _mapping(options: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    if (value := options.get(key)) is None:
        return {}
    if not isinstance(value, Mapping):
        refuse(key, f"must be a mapping, got {value!r}")
    return dict(value)


def _optional_text(options: Mapping[str, Any], key: str) -> str | None:
    value = options.get(key)
    if value is not None and not isinstance(value, str):
        refuse(key, f"must be text, got {value!r}")
    return value
