"""The reflector's prompts and its contradiction rule (reference §1.19; spec: Cognitive memory).

The system prompt, written for agentos, asks for an optional ``<thinking>`` block and then one
JSON object per line (`agentos.memory.reflection_reply` reads them). The contradiction rule
depends on the traits and is stated in the prompt (and enforced on the reply): honesty above
0.6, the newer information wins (the old memory is superseded); else agreeableness above 0.6,
both are kept (no supersession); else the higher confidence wins.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from agentos.memory.observer import TRAIT_EMPHASIS_THRESHOLD, ObservationNote
from agentos.memory.trace import MemoryTrace
from agentos.memory.traits import TraitMap, trait_level

__all__ = [
    "REFLECTOR_PROMPT_HASH",
    "ConflictRule",
    "conflict_rule",
    "reflector_system_prompt",
    "reflector_user_prompt",
]


@dataclass(frozen=True, slots=True)
class ConflictRule:
    """How a contradiction between a new memory and an existing one is resolved."""

    name: str
    instruction: str


_NEWER_WINS = ConflictRule(
    "newer_wins",
    "The newer information wins: list the ids of the existing memories it contradicts in "
    '"supersedes".',
)
_KEEP_BOTH = ConflictRule(
    "keep_both",
    'Keep both versions: leave "supersedes" empty and say in the new memory\'s content that it '
    "differs from what was known before.",
)
_HIGHER_CONFIDENCE = ConflictRule(
    "higher_confidence",
    'The more confident version wins: list an existing memory in "supersedes" only when your '
    "confidence in the new memory is higher than that memory's; otherwise leave the new one out.",
)


def conflict_rule(traits: TraitMap | None) -> ConflictRule:
    """The contradiction rule for ``traits``: honesty > 0.6 first, then agreeableness > 0.6."""
    if trait_level(traits, "honesty") > TRAIT_EMPHASIS_THRESHOLD:
        return _NEWER_WINS
    if trait_level(traits, "agreeableness") > TRAIT_EMPHASIS_THRESHOLD:
        return _KEEP_BOTH
    return _HIGHER_CONFIDENCE


_REFLECTOR_EMPHASES: tuple[tuple[str, str], ...] = (
    ("emotionality", "Keep the emotional weight of what happened, not only the facts."),
    ("extraversion", "Keep who the user spends time with and how those relationships change."),
    ("agreeableness", "Keep what builds or strains trust between the user and the assistant."),
    ("conscientiousness", "Organise memories cleanly: one topic per memory, precise tags."),
    ("openness", "Keep the links between ideas: name related entities and use rich tags."),
)

_REFLECTOR_PROMPT = """\
You turn observation notes about a conversation into the long-term memories an AI assistant keeps \
about its user. Many notes should become few memories: merge notes that say the same thing.

First think inside <thinking>...</thinking>: which notes state facts, which describe events, \
which show how the user wants to be helped, which announce future plans, which touch the \
relationship, and whether any note contradicts an existing memory.

Then write each memory as one JSON object on its own line, with the fields:
{{"reasoning": "<why this is worth remembering>", \
"type": "semantic | episodic | procedural | prospective | relational", \
"scope": "user | thread | persona | organization", "scope_id": "<id, or null>", \
"content": "<the memory, one or two sentences>", "entities": ["..."], "tags": ["..."], \
"confidence": <0.0 to 1.0>, "source_type": "observation | reflection", \
"supersedes": ["<ids of existing memories this replaces>"], \
"consumed_notes": ["<ids of the notes this memory was made from>"]}}

Types: semantic for a lasting fact (including anything the user asked you to remember); \
episodic for something that happened at a particular time; procedural for how the user wants \
things done; prospective for an intention or reminder; relational for trust, closeness or \
conflict between the user and the assistant.
Scopes: user for what concerns the user, thread for this conversation only, persona for the \
assistant itself, organization for what everyone shares.
Source: observation when the memory restates what was said, reflection when you inferred it.

Contradictions: {conflict}
{style}

Rules:
- Copy names, dates, amounts, addresses and other specific values exactly.
- Every note you used goes into "consumed_notes" of the memory made from it. For notes not \
worth keeping, write a line holding only {{"consumed_notes": ["<their ids>"]}}.
- "supersedes" may name only ids listed under existing memories.
- After the thinking block, output only the JSON lines: no code fences, no commentary."""


def reflector_system_prompt(traits: TraitMap | None = None) -> str:
    """The reflector's system prompt: the conflict rule and the emphases of traits above 0.6."""
    emphases = [
        text
        for name, text in _REFLECTOR_EMPHASES
        if trait_level(traits, name) > TRAIT_EMPHASIS_THRESHOLD
    ]
    style = "Keep memories concise and factual."
    if emphases:
        style += "\nAlso:\n" + "\n".join(f"- {text}" for text in emphases)
    return _REFLECTOR_PROMPT.format(conflict=conflict_rule(traits).instruction, style=style)


REFLECTOR_PROMPT_HASH: str = hashlib.sha256(
    reflector_system_prompt(None).encode("utf-8")
).hexdigest()
"""sha256 (hex) of the system prompt with every trait neutral, to key caches and results."""


def reflector_user_prompt(
    notes: Sequence[ObservationNote], existing: Sequence[MemoryTrace] = ()
) -> str:
    """The user prompt of a reflection: the notes, and the existing memories with their ids."""
    note_lines = "\n".join(
        f"[{note.id}] ({note.type.value}, importance {note.importance:.2f}) {note.content}"
        for note in notes
    )
    if not existing:
        return f"Observation notes:\n{note_lines}"
    memory_lines = "\n".join(
        f"[{trace.id}] ({trace.type.value}, confidence "
        f"{trace.provenance.confidence:.2f}) {trace.content}"
        for trace in existing
    )
    return f"Existing memories:\n{memory_lines}\n\nNew observation notes:\n{note_lines}"
