"""Temporal gist: old memories that keep being recalled are reduced to their gist.

Spec: "The eight mechanisms": traces older than 60 days that were retrieved at least twice are
reduced to a gist that keeps entities and emotional context (DESIGN.md §5.2; the reference's code
gists the traces retrieved *fewer* than twice, §5 trap 10). Runs at consolidation (§1.20 step 6).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from agentos.memory.invoker import ModelInvoker
from agentos.memory.mechanisms._common import FLASHBULB_STRENGTH
from agentos.memory.mechanisms.config import TemporalGistConfig
from agentos.memory.trace import DAY, EmotionalContext, MemoryTrace, MemoryType

__all__ = [
    "GIST_STRENGTH_FACTOR",
    "GIST_SYSTEM_PROMPT",
    "MAX_GISTS_PER_CYCLE",
    "apply_temporal_gist",
    "gist_prompt",
    "is_gist_candidate",
    "truncate_to_gist",
]

MAX_GISTS_PER_CYCLE = 20
"""Gists written per consolidation cycle at most, so one cycle never rewrites a whole memory."""

GIST_STRENGTH_FACTOR = 0.8
"""A gist loses verbatim detail, so its encoding strength is multiplied by this."""

GIST_WORDS = 30
GIST_SYSTEM_PROMPT = "You reduce a memory to its gist. Reply with the gist only."


def is_gist_candidate(trace: MemoryTrace, config: TemporalGistConfig, now: float) -> bool:
    """Whether ``trace`` is due for a gist.

    It is when it is an active episodic or semantic trace at least ``age_threshold_days`` old,
    retrieved at least ``min_retrieval_count`` times, below flashbulb strength (0.9) and not
    gisted yet.
    """
    return (
        trace.type in (MemoryType.EPISODIC, MemoryType.SEMANTIC)
        and trace.is_active
        and trace.age_at(now) >= config.age_threshold_days * DAY
        and trace.retrieval_count >= config.min_retrieval_count
        and trace.encoding_strength < FLASHBULB_STRENGTH
        and not trace.metadata.get("gisted")
    )


def truncate_to_gist(content: str) -> str:
    """The first 30 words of ``content``, with ``...`` when words were left out."""
    words = content.split()
    head = " ".join(words[:GIST_WORDS])
    return f"{head}..." if len(words) > GIST_WORDS else head


def gist_prompt(trace: MemoryTrace, config: TemporalGistConfig) -> str:
    """The user prompt asking a model for ``trace``'s gist."""
    lines = ["Extract 2-3 core assertions from this memory. Keep it under 50 words."]
    if config.preserve_entities and trace.entities:
        lines.append(f"Entities: {', '.join(trace.entities)}.")
        lines.append("Preserve entity names.")
    lines.append(f'Memory: "{trace.content}"')
    return "\n".join(lines)


async def _gist_text(
    trace: MemoryTrace, config: TemporalGistConfig, invoker: ModelInvoker | None
) -> str:
    if invoker is not None:
        try:
            reply = (await invoker(GIST_SYSTEM_PROMPT, gist_prompt(trace, config))).strip()
        except Exception:
            # A failed model call must not stop consolidation: the words-based gist stands in.
            reply = ""
        if reply:
            return reply
    return truncate_to_gist(trace.content)


async def apply_temporal_gist(
    traces: Iterable[MemoryTrace],
    config: TemporalGistConfig,
    now: float,
    invoker: ModelInvoker | None = None,
) -> list[MemoryTrace]:
    """Reduce the due traces (oldest first, at most 20) to a gist; return the gisted traces.

    The gist is the model's answer when ``invoker`` is given (its failure or empty answer falls
    back), else `truncate_to_gist`. With ``preserve_emotional_context`` and a ``gmi_mood`` the
    gist ends with `` [<gmi_mood>]`` and the emotional context is kept; without it the context is
    reset to neutral. Without ``preserve_entities`` the entities are cleared. Encoding strength
    * 0.8; ``metadata`` records ``gisted``, ``original_content_sha256`` and ``gisted_at``.
    """
    if not config.enabled:
        return []
    due = sorted(
        (t for t in traces if is_gist_candidate(t, config, now)), key=lambda t: t.created_at
    )
    gisted: list[MemoryTrace] = []
    for trace in due[:MAX_GISTS_PER_CYCLE]:
        original = trace.content
        gist = await _gist_text(trace, config, invoker)
        mood = trace.emotional_context.gmi_mood
        if config.preserve_emotional_context:
            if mood:
                gist = f"{gist} [{mood}]"
        else:
            trace.emotional_context = EmotionalContext()
        if not config.preserve_entities:
            trace.entities = []
        trace.content = gist
        trace.encoding_strength *= GIST_STRENGTH_FACTOR
        trace.updated_at = now
        trace.metadata["gisted"] = True
        trace.metadata["original_content_sha256"] = hashlib.sha256(original.encode()).hexdigest()
        trace.metadata["gisted_at"] = now
        gisted.append(trace)
    return gisted
