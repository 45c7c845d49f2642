"""Memory context for a prompt, within a token budget (reference §1.21).

The budget (tokens, estimated as characters / 4) is split: working memory 15 %, semantic recall
40 %, recent episodic 25 %, prospective reminders 5 %, graph associations 5 %, observation notes
5 %, persistent memory 5 %. A share a section does not use, and what working memory leaves,
goes to semantic recall. Sections, each under its own heading and only when it has something:
persistent memory, active context (working memory), relevant memories (every recalled trace
that is not episodic), recent experiences (episodic traces), reminders (prospective), related
context (graph associations), observations, and "Something This Reminds Me Of" (an involuntary
recall). A short preamble says how to use them when the budget has room for it.

The style follows the strongest of three traits: conscientiousness gives structured lines
(``- [semantic] content (5m ago | high confidence | relevance: 0.66 | tags: a, b)``), openness
narrative ones, emotionality lines that name the feeling a memory carries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from agentos.core.tokens import estimate_tokens
from agentos.memory.trace import DAY, HOUR, MINUTE, MemoryTrace, MemoryType

__all__ = [
    "BUDGET_SHARES",
    "AssembledMemoryContext",
    "MemorySections",
    "Recalled",
    "assemble_memory_context",
    "memory_style",
]

BUDGET_SHARES: Mapping[str, float] = {
    "working_memory": 0.15,
    "semantic_recall": 0.40,
    "recent_episodic": 0.25,
    "prospective_alerts": 0.05,
    "graph_associations": 0.05,
    "observation_notes": 0.05,
    "persistent_memory": 0.05,
}

PREAMBLE = (
    "## How To Use Your Memories\n"
    "These are things you remember about this user and your past conversations. Use them when "
    "they help; do not recite them, and trust what the user says now over an older memory."
)
_CONTENT_CHARS = 300
Style = Literal["structured", "narrative", "emotional"]


@dataclass(frozen=True, slots=True)
class Recalled:
    """A trace recalled for the prompt, with its retrieval score."""

    trace: MemoryTrace
    score: float


@dataclass(slots=True)
class MemorySections:
    """What a prompt's memory context is made of (each list already ranked)."""

    recalled: Sequence[Recalled] = ()
    working_memory: Sequence[str] = ()
    persistent_memory: str | None = None
    prospective_alerts: Sequence[str] = ()
    graph_associations: Sequence[str] = ()
    observation_notes: Sequence[str] = ()
    involuntary: MemoryTrace | None = None


@dataclass(frozen=True, slots=True)
class AssembledMemoryContext:
    """The text, the tokens it uses, each section's budget and the memories it includes."""

    context_text: str
    tokens_used: int
    allocation: Mapping[str, int] = field(default_factory=dict)
    included_memory_ids: tuple[str, ...] = ()


def memory_style(traits: Mapping[str, float] | None) -> Style:
    """The style of the strongest of conscientiousness, openness and emotionality."""
    traits = traits or {}
    ranked: list[tuple[float, Style]] = [
        (traits.get("conscientiousness", 0.5), "structured"),
        (traits.get("openness", 0.5), "narrative"),
        (traits.get("emotionality", 0.5), "emotional"),
    ]
    return max(ranked, key=lambda pair: pair[0])[1]  # ties keep the earlier: structured


def _ago(seconds: float) -> str:
    if seconds < HOUR:
        return f"{max(0, int(seconds // MINUTE))}m ago"
    if seconds < DAY:
        return f"{int(seconds // HOUR)}h ago"
    return f"{int(seconds // DAY)}d ago"


def _confidence(value: float) -> str:
    return "high" if value > 0.8 else "moderate" if value > 0.5 else "low"


def _feeling(valence: float) -> str:
    return "warm" if valence > 0.3 else "uneasy" if valence < -0.3 else "calm"


def _line(item: Recalled, style: Style, now: float) -> str:
    trace = item.trace
    content = trace.content[:_CONTENT_CHARS]
    ago = _ago(now - trace.created_at)
    if style == "narrative":
        return f"- {content} ({ago})"
    if style == "emotional":
        return f"- {content} (felt {_feeling(trace.emotional_context.valence)}, {ago})"
    details = [ago, f"{_confidence(trace.provenance.confidence)} confidence"]
    details.append(f"relevance: {item.score:.2f}")
    if trace.tags:
        details.append("tags: " + ", ".join(trace.tags[:3]))
    return f"- [{trace.type.value}] {content} ({' | '.join(details)})"


def _fill(heading: str, lines: Sequence[str], budget: int) -> tuple[str, int, int]:
    """The section with as many lines as fit ``budget``: (text, tokens, lines kept)."""
    if not lines or budget <= 0:
        return "", 0, 0
    text = heading
    kept = 0
    for line in lines:
        candidate = f"{text}\n{line}"
        if estimate_tokens(candidate) > budget:
            break
        text, kept = candidate, kept + 1
    if kept == 0:
        return "", 0, 0
    return text, estimate_tokens(text), kept


_SEMANTIC_HEADING = "## Relevant Memories (facts and knowledge)"
_EPISODIC_HEADING = "## Recent Experiences (what happened)"
# The plain-list sections, in prompt order: (heading, MemorySections field = allocation key).
_LIST_SECTIONS = (
    ("## Reminders (things to bring up)", "prospective_alerts"),
    ("## Related Context", "graph_associations"),
    ("## Observations", "observation_notes"),
)


def assemble_memory_context(
    sections: MemorySections,
    budget_tokens: int,
    *,
    now: float,
    traits: Mapping[str, float] | None = None,
) -> AssembledMemoryContext:
    """The memory context text for a prompt, within ``budget_tokens`` (see the module doc)."""
    style = memory_style(traits)
    allocation = {name: int(budget_tokens * share) for name, share in BUDGET_SHARES.items()}
    parts: list[str] = []
    used = 0
    if budget_tokens >= estimate_tokens(PREAMBLE) + 100:
        parts.append(PREAMBLE)
        used += estimate_tokens(PREAMBLE)
    included: list[str] = []

    def add(heading: str, lines: Sequence[str], budget: int) -> int:
        nonlocal used
        text, tokens, kept = _fill(heading, lines, budget)
        if text:
            parts.append(text)
            used += tokens
        return kept

    if sections.persistent_memory:
        add("## Persistent Memory", [sections.persistent_memory], allocation["persistent_memory"])
    wm_budget = allocation["working_memory"]
    kept = add("## Active Context (what you are attending to)", sections.working_memory, wm_budget)
    spare = wm_budget - (estimate_tokens("\n".join(sections.working_memory[:kept])) if kept else 0)
    for name in ("prospective_alerts", "graph_associations", "observation_notes"):
        if not getattr(sections, name):
            spare += allocation[name]

    semantic = [r for r in sections.recalled if r.trace.type is not MemoryType.EPISODIC]
    episodic = [r for r in sections.recalled if r.trace.type is MemoryType.EPISODIC]
    recall_sections = (
        (_SEMANTIC_HEADING, semantic, allocation["semantic_recall"] + max(0, spare)),
        (_EPISODIC_HEADING, episodic, allocation["recent_episodic"]),
    )
    for heading, recalled, budget in recall_sections:
        kept = add(heading, [_line(r, style, now) for r in recalled], budget)
        included += [r.trace.id for r in recalled[:kept]]
    for heading, name in _LIST_SECTIONS:
        add(heading, [f"- {item}" for item in getattr(sections, name)], allocation[name])
    if sections.involuntary is not None:
        recall = Recalled(sections.involuntary, 0.0)
        left = budget_tokens - used
        if add("## Something This Reminds Me Of", [_line(recall, "narrative", now)], left):
            included.append(sections.involuntary.id)
    has_memory = any(part is not PREAMBLE for part in parts)
    text = "\n\n".join(parts) if has_memory else ""
    return AssembledMemoryContext(
        context_text=text,
        tokens_used=estimate_tokens(text),
        allocation=allocation,
        included_memory_ids=tuple(included),
    )
