"""The personality section a learner session sends (spec "Learning": The personality section).

"The words are the ones agent() writes": `agentos.persona.personality.personality_section`, as a
system prompt of its own at priority 2. "The section renders the persona's authored traits in
every mode." "A workflow seat's role overlay renders for that seat's session only and never sets
honesty-humility or emotionality: an overlay value for either is not rendered, and a warning
names the persona and the trait."
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from agentos.persona.personality import personality_section
from agentos.substrate.learning_seam import PERSONALITY_PRIORITY
from agentos.substrate.prompt_engine import SystemPrompt

__all__ = ["OPERATOR_ONLY_TRAITS", "PERSONALITY_SOURCE", "render_section"]

OPERATOR_ONLY_TRAITS: tuple[str, ...] = ("honesty", "emotionality")
"""Traits only the persona definition sets: an overlay never renders them."""
PERSONALITY_SOURCE = "personality"
"""The `SystemPrompt.source` of the section."""

_log = logging.getLogger("agentos.learning")


def render_section(
    authored: Mapping[str, object] | None,
    overlay: Mapping[str, object] | None = None,
    *,
    persona_id: str = "",
) -> SystemPrompt | None:
    """The personality section at priority 2, or ``None`` when no trait is outside 0.35-0.65.

    ``overlay`` (a workflow seat's role overlay) replaces the authored value of each trait it
    sets, except honesty and emotionality: those keep the authored value, and a WARNING on the
    ``agentos.learning`` logger names ``persona_id`` and the trait.
    """
    traits: dict[str, object] = dict(authored or {})
    for trait, value in (overlay or {}).items():
        if trait in OPERATOR_ONLY_TRAITS:
            _log.warning(
                "persona %r: the role overlay's %s is not rendered; only the persona "
                "definition sets it",
                persona_id,
                trait,
            )
            continue
        traits[trait] = value
    text = personality_section(traits)
    if text is None:
        return None
    return SystemPrompt(text, PERSONALITY_PRIORITY, PERSONALITY_SOURCE)
