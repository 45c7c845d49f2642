"""The schema message: a JSON schema carried in the prompt (spec: Completion options).

A request with a ``response_schema`` whose payload cannot carry the schema (OpenAI's JSON mode,
the local model, a test double, Anthropic's ``prompt`` route) gets it as one system message
after the prompt's leading system messages (`with_schema_prompt`; `place_schema_prompt` puts it
there for a caller that runs hooks on the messages, `SchemaPrompting` is the model's side).
`schema_instruction` is that message's text: a lead sentence, then the schema as compact JSON.
Its words name no provider; `NEUTRAL_WORDING` is what every adapter sends unless it has sent
other words since before they were shared (Anthropic's, `SchemaWording`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from agentos.core.messages import Message, Role
from agentos.llm.model import ChatModel, CompletionOptions

__all__ = [
    "NEUTRAL_WORDING",
    "SchemaPrompting",
    "SchemaWording",
    "place_schema_prompt",
    "schema_instruction",
    "schema_prompt_for",
    "with_schema_prompt",
]


@dataclass(frozen=True, slots=True)
class SchemaWording:
    """How a schema message is worded.

    ``lead`` is the sentence before the schema, with ``{label}`` where the schema's name goes
    (`` (name)``, or nothing without a name); ``sort_keys`` sorts the schema's keys, so the text
    is stable across runs however the schema was built (a prompt cache keeps it).
    """

    lead: str
    sort_keys: bool = True


NEUTRAL_WORDING = SchemaWording(
    "Respond with a single JSON object that matches this JSON schema{label}, and with nothing else"
)
"""The words every adapter that sends a schema in the prompt uses by default."""


def schema_instruction(
    schema: Mapping[str, Any], name: str | None = None, *, wording: SchemaWording = NEUTRAL_WORDING
) -> str:
    """The system message that carries a schema the payload cannot enforce.

    It asks for JSON matching ``schema`` and nothing else (``wording``'s lead, naming ``name``
    when given), followed by a colon, a new line and the schema as compact JSON.
    """
    label = f" ({name})" if name else ""
    text = json.dumps(schema, ensure_ascii=False, sort_keys=wording.sort_keys)
    return f"{wording.lead.format(label=label)}:\n{text}"


@runtime_checkable
class SchemaPrompting(Protocol):
    """A model that can say which schema message its request would carry in the prompt."""

    def schema_prompt(self, options: CompletionOptions) -> str | None:
        """The system message this model adds for ``options.response_schema``, or ``None``.

        The text is what the adapter puts after the prompt's leading system messages when its
        payload cannot carry the schema (OpenAI's JSON mode, Anthropic's ``prompt`` route, a
        provider with no structured-output payload). ``None`` when ``options`` asks for no
        schema or the payload carries it. A caller that puts the text in the messages itself
        sets ``options.schema_prompt_given`` so the adapter adds no second copy.
        """
        ...


def schema_prompt_for(model: ChatModel, options: CompletionOptions) -> str | None:
    """``model.schema_prompt(options)`` when the model offers it, else ``None``.

    ``None`` also when ``options`` asks for no schema or already has the message
    (``schema_prompt_given``). Wrappers (metering, budgets) pass the inner model's method
    through.
    """
    if options.response_schema is None or options.schema_prompt_given:
        return None
    method = getattr(model, "schema_prompt", None)
    if method is None:
        return None
    text = method(options)
    return text if isinstance(text, str) and text else None


def place_schema_prompt(
    model: ChatModel, messages: Sequence[Message], options: CompletionOptions
) -> tuple[list[Message], CompletionOptions]:
    """The attempt's messages and options with the schema message put in by the caller.

    When ``model`` sends the schema as a prompt message (`schema_prompt_for`), the message goes
    after the leading system messages and ``schema_prompt_given`` is set, so a hook run on the
    messages afterwards sees it and the adapter adds no copy; otherwise both come back as given.
    """
    text = schema_prompt_for(model, options)
    if text is None:
        return list(messages), options
    return with_schema_prompt(messages, text), replace(options, schema_prompt_given=True)


def with_schema_prompt(messages: Sequence[Message], text: str) -> list[Message]:
    """``messages`` with ``Message.system(text)`` after their leading system messages.

    The leading run is the system and summary messages before the first other message (all of
    them when there is no other), the place every adapter puts a schema it sends in the prompt.
    """
    lead = next(
        (i for i, m in enumerate(messages) if m.role not in (Role.SYSTEM, Role.SUMMARY)),
        len(messages),
    )
    return [*messages[:lead], Message.system(text), *messages[lead:]]
