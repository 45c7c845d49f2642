"""The system prompt agent() sends, and the persona a `gmi()` agent's GMIs run.

`build_system_prompt()` is shared by the legacy agent and the GMI persona (spec: GMIs from
agent(), Persona; reference §1.27 ``buildSystemPrompt``): the soul's body and its style, the
instructions, the name line, the personality section and the skills, joined by a blank line; or,
when ``system_blocks`` are given, those blocks joined the same way.

`persona_from_agent_options()` builds the `PersonaDefinition` exactly as the spec's Persona
table says (spec: ``personaFromAgentOptions()``).
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from agentos.persona.definition import (
    HEXACO_TRAITS,
    ModelCompletionOptions,
    PersonaDefinition,
    SentimentTrackingConfig,
)
from agentos.persona.metaprompt_presets import merge_metaprompt_presets
from agentos.persona.personality import personality_section
from agentos.tools.tool import Tool

from .cognition import ResolvedCognition

__all__ = [
    "DEFAULT_AGENT_NAME",
    "STYLE_HEADING",
    "build_system_prompt",
    "persona_from_agent_options",
    "persona_id_for",
    "soul_parts",
]

DEFAULT_AGENT_NAME = "Agent"
"""The persona name of an agent built without ``name``."""

STYLE_HEADING = "## Style"
"""The heading before a soul's style in the system prompt."""

PERSONA_VERSION = "1.0.0"
# The spec's table sets no version; a semantic one keeps the persona valid for validate_persona.

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_NOT_SLUG = re.compile(r"[\W_]+")


def soul_parts(soul: str | Mapping[str, Any] | None) -> tuple[str, str]:
    """A soul's (body, style), each stripped (``""`` when absent).

    A soul is a soul file's text, whose YAML front matter (between ``---`` lines at its start)
    is removed and not applied, as the spec says; or a mapping with ``body`` and an optional
    ``style``.
    """
    if soul is None:
        return "", ""
    if isinstance(soul, str):
        return _FRONT_MATTER.sub("", soul, count=1).strip(), ""
    body = soul.get("body")
    style = soul.get("style")
    return (body or "").strip(), (style or "").strip()


def _skill_text(skill: str | Mapping[str, Any]) -> str:
    return (skill if isinstance(skill, str) else str(skill.get("content") or "")).strip()


def build_system_prompt(options: Mapping[str, Any], *, include_personality: bool = True) -> str:
    """The system prompt agent() sends for these options (``""`` when they give none).

    In order: the soul's body, its style (under ``## Style``), ``instructions``, the name line
    ``Assistant name: <name>.``, the personality section of ``personality``
    (`personality_section`; left out when ``include_personality`` is False: a GMI with learning
    on sends it as a system prompt of its own), and the contents of ``skills``; the parts that
    are not blank, joined by a blank line. ``system_blocks``, when given and not empty, replace
    all of that: the prompt is the blocks that are not blank, joined the same way.
    """
    blocks = options.get("system_blocks")
    if blocks:
        return "\n\n".join(block.strip() for block in blocks if block and block.strip())
    body, style = soul_parts(options.get("soul"))
    name = (options.get("name") or "").strip()
    parts = [
        body,
        f"{STYLE_HEADING}\n\n{style}" if style else "",
        (options.get("instructions") or "").strip(),
        f"Assistant name: {name}." if name else "",
        (personality_section(options.get("personality")) or "") if include_personality else "",
        *(_skill_text(skill) for skill in options.get("skills") or ()),
    ]
    return "\n\n".join(part for part in parts if part)


def persona_id_for(name: str | None) -> str | None:
    """The persona id of an agent with this name: a slug of it (``None`` when it gives none).

    Lower case, accents dropped, each run of other characters than letters and digits one
    ``-``: ``"Ada Lovelace"`` is ``ada-lovelace``.
    """
    if not name:
        return None
    folded = unicodedata.normalize("NFKD", name.casefold())
    plain = "".join(char for char in folded if not unicodedata.combining(char))
    return _NOT_SLUG.sub("-", plain).strip("-") or None


def _description(instructions: str | None, name: str) -> str:
    for line in (instructions or "").splitlines():
        if line.strip():
            return line.strip()
    return name


def _capabilities(tools: Sequence[Tool] | None) -> list[str]:
    found: dict[str, None] = {}
    for item in tools or ():
        found.update(dict.fromkeys(item.required_capabilities))
    return list(found)


def _completion_options(options: Mapping[str, Any]) -> ModelCompletionOptions:
    controls: Mapping[str, Any] = options.get("controls") or {}
    max_tokens = options.get("max_tokens")
    if max_tokens is None:
        max_tokens = controls.get("max_total_tokens")
    duration_ms = controls.get("max_duration_ms")
    custom = options.get("custom_model_params")
    # Nothing else: the provider's default temperature applies (spec: Completion options).
    return ModelCompletionOptions(
        max_tokens=max_tokens,
        # The spec's requestTimeout is in milliseconds; agentos's request_timeout is in seconds.
        request_timeout=None if duration_ms is None else duration_ms / 1000.0,
        thinking=options.get("thinking"),
        effort=options.get("effort"),
        custom_model_params=dict(custom) if custom is not None else None,
        cache=options.get("cache"),
    )


def persona_from_agent_options(
    options: Mapping[str, Any],
    *,
    provider_id: str | None,
    model_id: str | None,
    cognition: ResolvedCognition,
    persona_id: str | None = None,
) -> PersonaDefinition:
    """The persona a `gmi()` agent's GMIs run, from its options (the spec's Persona table).

    - ``id``: a slug of ``name`` (`persona_id_for`); an agent with no name gets an id of its
      own: ``persona_id`` when given (the agent passes its own, so every GMI of the agent shares
      one id), else a new ``agent-<hex>``. ``name``: ``name``, or ``"Agent"``. ``description``:
      the first line of ``instructions``, or the name.
    - ``base_system_prompt``: `build_system_prompt`, without the personality section when
      learning is on (``cognition.learning_on``): the GMI then sends it as a prompt of its own.
    - ``personality_traits``: the HEXACO entries of ``personality``.
    - ``default_provider_id`` / ``default_model_id``: ``provider_id`` and ``model_id``, which
      the caller resolves as `generate_text()` resolves them.
    - ``default_model_completion_options``: ``max_tokens`` (or ``controls.max_total_tokens``),
      ``controls.max_duration_ms`` as ``request_timeout`` (converted to seconds, the unit of
      agentos's ``request_timeout``), ``thinking``, ``effort``, ``custom_model_params`` and
      ``cache``; nothing else (no temperature).
    - ``allowed_capabilities``: the ``required_capabilities`` of the agent's tools.
    - ``sentiment_tracking`` (``enabled`` and ``presets``) and ``meta_prompts`` (the chosen
      sentiment presets' metaprompts, and no other) from the profile.

    The persona carries nothing else (no hard limits; a soul's front matter is not applied).
    """
    raw_name = options.get("name")
    name = raw_name.strip() if isinstance(raw_name, str) and raw_name.strip() else None
    display = name or DEFAULT_AGENT_NAME
    identifier = persona_id_for(name) or persona_id or f"agent-{uuid.uuid4().hex[:12]}"
    personality: Mapping[str, Any] = options.get("personality") or {}
    traits = {
        key: float(value)
        for key in HEXACO_TRAITS
        if isinstance(value := personality.get(key), int | float) and not isinstance(value, bool)
    }
    presets = list(cognition.metaprompt_presets) if cognition.sentiment_on else []
    return PersonaDefinition(
        id=identifier,
        name=display,
        description=_description(options.get("instructions"), display),
        version=PERSONA_VERSION,
        base_system_prompt=build_system_prompt(
            options, include_personality=not cognition.learning_on
        ),
        personality_traits=dict(traits) if options.get("personality") is not None else None,
        default_provider_id=provider_id,
        default_model_id=model_id,
        default_model_completion_options=_completion_options(options),
        allowed_capabilities=_capabilities(options.get("tools")),
        sentiment_tracking=SentimentTrackingConfig(enabled=cognition.sentiment_on, presets=presets),
        meta_prompts=merge_metaprompt_presets(None, presets),
    )
