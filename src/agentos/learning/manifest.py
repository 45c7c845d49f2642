"""The learning layer's manifest (spec "Learning": The manifest).

"manifest() [...] says which loops the deployment runs and, for each one that is off, why":
surface, profile, mode and mode_set_by; the host's loops and the layer's own, each
``{live, detail?}``; guardrails ``{complete: false}`` with its detail; the turns the layer
prepared, how many had a learner, and the others by reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentos.core.errors import GMIError, GMIErrorCode

from .settings import LearningMode, LearningSettings
from .switches import ModeSetBy

__all__ = [
    "GUARDRAILS_DETAIL",
    "HOST_LOOPS",
    "LAYER_LOOPS",
    "LoopManifest",
    "LoopState",
    "TurnTally",
    "check_host_loops",
    "layer_loops",
]

HOST_LOOPS: tuple[str, ...] = (
    "memory",
    "memory_mechanisms",
    "memory_observer_reflector",
    "memory_store",
    "sentiment",
    "metaprompts",
    "emergent_tools",
    "self_improvement_tools",
    "forged_code_executor",
    "hitl",
    "tool_policy",
    "rag",
)
"""The host's loops, in the spec's order."""
LAYER_LOOPS: tuple[str, ...] = (
    "personality_rendering",
    "outcomes",
    "trait_changes",
    "lessons",
    "skills",
    "ledger",
)
"""The layer's own loops; ``personality_rendering`` is the one live among them."""
GUARDRAILS_DETAIL = (
    "no self-change kind runs: the layer records no outcome, lesson, trait change or ledger "
    "entry, so no guardrail over self-change is in place"
)
_UNREPORTED = "not reported by the host"
_KEEPS_NOTHING = "the layer keeps nothing beyond the process"


@dataclass(frozen=True, slots=True)
class LoopState:
    """One loop: ``live`` (``'varies'`` when a persona or a factory the host passes decides)."""

    live: bool | Literal["varies"]
    detail: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """``{"live": ...}`` plus ``"detail"`` when there is one."""
        out: dict[str, Any] = {"live": self.live}
        if self.detail is not None:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True, slots=True)
class LoopManifest:
    """What the deployment runs (``LoopManifest``); `as_dict` is its JSON form."""

    surface: str
    profile: str
    mode: LearningMode
    mode_set_by: ModeSetBy
    loops: dict[str, LoopState]
    guardrails: dict[str, Any]
    turns: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """The manifest as plain JSON values (loops as ``{live, detail?}`` dictionaries)."""
        return {
            "surface": self.surface,
            "profile": self.profile,
            "mode": self.mode,
            "mode_set_by": self.mode_set_by,
            "loops": {name: state.as_dict() for name, state in self.loops.items()},
            "guardrails": dict(self.guardrails),
            "turns": {**self.turns, "none": dict(self.turns["none"])},
        }


@dataclass
class TurnTally:
    """The turns a layer prepared: how many, how many had a learner, the others by reason."""

    prepared: int = 0
    bound: int = 0
    none: Counter[str] = field(default_factory=Counter)

    def record(self, reason: str | None) -> None:
        """Count one prepared turn: bound when ``reason`` is ``None``, else none for ``reason``."""
        self.prepared += 1
        if reason is None:
            self.bound += 1
        else:
            self.none[reason] += 1

    def as_dict(self) -> dict[str, Any]:
        """``{"prepared": n, "bound": n, "none": {reason: n}}`` (reasons in first-seen order)."""
        return {"prepared": self.prepared, "bound": self.bound, "none": dict(self.none)}


def check_host_loops(loops: Mapping[str, LoopState]) -> dict[str, LoopState]:
    """The host's loops, checked: each name one of `HOST_LOOPS`, each value a `LoopState`."""
    checked: dict[str, LoopState] = {}
    for name, state in loops.items():
        if name not in HOST_LOOPS:
            raise GMIError(
                f"host_loops.{name}: unknown loop; expected one of {', '.join(HOST_LOOPS)}",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": f"host_loops.{name}"},
            )
        if not isinstance(state, LoopState):
            raise GMIError(
                f"host_loops.{name}: must be a LoopState",
                GMIErrorCode.INVALID_ARGUMENT,
                {"option": f"host_loops.{name}"},
            )
        checked[name] = state
    return checked


def layer_loops(host: Mapping[str, LoopState], settings: LearningSettings) -> dict[str, LoopState]:
    """Every loop in the spec's order: the host's (unreported ones say so) and the layer's own."""
    loops = {name: host.get(name, LoopState(False, _UNREPORTED)) for name in HOST_LOOPS}
    loops["personality_rendering"] = LoopState(True)
    loops["outcomes"] = LoopState(False, f"{_KEEPS_NOTHING}: it records no outcome")
    for name, asked in (
        ("trait_changes", settings.traits),
        ("lessons", settings.lessons),
        ("skills", settings.skills),
    ):
        loops[name] = LoopState(False, _asked_detail(name, asked))
    loops["ledger"] = LoopState(False, f"{_KEEPS_NOTHING}: it writes no ledger entry")
    return loops


def _asked_detail(name: str, asked: bool) -> str:
    field_name = "traits" if name == "trait_changes" else name
    said = "asked for" if asked else "not asked for"
    return f"{said} (learning.{field_name}); {_KEEPS_NOTHING}, so it does not run"
