"""The message model: one conversation, as every layer of agentos sees it.

A `Message` has a role (system, user, assistant, tool, summary, error, thought) and content that
is text or a list of parts. An assistant message may request `ToolCall`s and carry the provider's
`ReplayBlock`s (Anthropic thinking blocks, Gemini thought signatures), kept verbatim so the next
request can send them back. A tool message answers one call with a `ToolResult`.

`dump_messages()` / `load_messages()` serialise a whole history to JSON and back through one
pydantic adapter (`MessageHistoryAdapter`); the round trip is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

__all__ = [
    "ContentPart",
    "ImagePart",
    "Message",
    "MessageHistoryAdapter",
    "ReplayBlock",
    "Role",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "dump_messages",
    "load_messages",
]


class Role(StrEnum):
    """Who a message is from. ``error`` and ``thought`` messages are never sent to a model."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SUMMARY = "summary"
    ERROR = "error"
    THOUGHT = "thought"


@dataclass(frozen=True, slots=True)
class TextPart:
    """A run of text inside multimodal content."""

    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image given by URL (``https:`` or ``data:``), with its media type when known."""

    url: str
    media_type: str | None = None
    type: Literal["image"] = "image"


ContentPart = Annotated[TextPart | ImagePart, Field(discriminator="type")]
"""One part of multimodal content."""


def _is_none(value: object) -> bool:
    return value is None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run a tool: ``{id, name, arguments}``.

    ``unparsed_arguments`` holds the argument text a model sent that is not a JSON object
    (``arguments`` is then empty): the call is the model's mistake, not the caller's, so the
    tool orchestrator answers it with the spec's invalid-arguments error result ("Failed to
    parse arguments ...") which the model sees, and its sibling calls still run.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    # Left out of the stored JSON when unset, so every well-formed call is stored as before.
    unparsed_arguments: Annotated[str | None, Field(exclude_if=_is_none)] = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The answer to one `ToolCall`.

    ``output`` is any JSON value; a failed call has ``is_error=True`` and, when known,
    ``error_details`` (a code, a message, whatever helps the model recover).
    """

    tool_call_id: str
    tool_name: str
    output: Any = None
    is_error: bool = False
    error_details: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ReplayBlock:
    """Provider data that must travel back to the same provider unchanged.

    ``provider`` names who produced it (``"anthropic"``, ``"gemini"``), ``type`` what it is
    (``"thinking"``, ``"redacted_thinking"``, ``"thought_signature"``), ``data`` the payload
    exactly as received.
    """

    provider: str
    type: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation.

    Use the constructors (`Message.user()`, `Message.assistant()`, `Message.tool()`, ...) rather
    than setting fields by hand: they keep each role's fields consistent.
    """

    role: Role
    content: str | list[ContentPart] = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_result: ToolResult | None = None
    replay_blocks: list[ReplayBlock] = field(default_factory=list)
    name: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        role = self.role
        if type(role) is not Role:  # a plain string given for the role
            role = Role(role)
            object.__setattr__(self, "role", role)
        if self.tool_calls and role is not Role.ASSISTANT:
            raise ValueError(f"only assistant messages request tool calls, not {role.value!r} ones")
        if (self.tool_result is not None) != (role is Role.TOOL):
            raise ValueError("a tool message carries exactly one tool_result, and only it does")

    @classmethod
    def system(cls, text: str) -> Message:
        """A system instruction."""
        return cls(Role.SYSTEM, text)

    @classmethod
    def user(cls, content: str | list[ContentPart], *, name: str | None = None) -> Message:
        """A user turn: text, or text and image parts."""
        return cls(Role.USER, content, name=name)

    @classmethod
    def assistant(
        cls,
        text: str = "",
        *,
        tool_calls: list[ToolCall] | None = None,
        replay_blocks: list[ReplayBlock] | None = None,
    ) -> Message:
        """A model reply: its text, the tools it asked for and its replay blocks."""
        return cls(
            Role.ASSISTANT,
            text,
            tool_calls=list(tool_calls or []),
            replay_blocks=list(replay_blocks or []),
        )

    @classmethod
    def tool(cls, result: ToolResult) -> Message:
        """The result of one tool call, answering the assistant message that requested it."""
        return cls(Role.TOOL, tool_result=result)

    @property
    def text(self) -> str:
        """The message's text: its string content, or its text parts joined."""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text for part in self.content if isinstance(part, TextPart))


MessageHistoryAdapter: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
"""The one adapter that validates and serialises a whole history."""


def dump_messages(messages: list[Message], *, indent: int | None = None) -> str:
    """Serialise a history to JSON text (`load_messages()` reads it back exactly)."""
    return MessageHistoryAdapter.dump_json(messages, indent=indent).decode()


def load_messages(data: str | bytes) -> list[Message]:
    """Read a history that `dump_messages()` wrote.

    Raises `pydantic.ValidationError` when the JSON is not a history.
    """
    return MessageHistoryAdapter.validate_json(data)
