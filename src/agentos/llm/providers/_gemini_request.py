"""What the Gemini adapter sends as contents: agentos messages as google-genai types.

Private to `agentos.llm.providers.gemini`; the generation config (options, tools) is
`_gemini_config`'s. Every function imports the SDK's ``types`` module inside its body: the
adapter checked the SDK is installed before calling any of them, and importing this module must
not import the SDK.

Thought signatures (``ReplayBlock("gemini", "thought_signature", data)``) carry, in ``data``:

- ``signature``: the signature as base64 text, as the API sent it;
- ``part``: the kind of part it came on: ``"text"``, ``"function_call"`` or ``"thought"``;
- ``tool_call_id`` and ``name``: for a ``function_call`` part, the call it belongs to;
- ``text``: for a ``thought`` part, that part's own text (usually empty).

`model_parts()` puts each signature back on the part it came with: thought parts first, then
the reply's text (one part: the streamed text joined), then the function calls in order.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import urllib.parse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentos.core.messages import ImagePart, Message, ReplayBlock, Role, TextPart, ToolResult
from agentos.llm.providers._gemini_config import invalid_option

if TYPE_CHECKING:
    from google.genai import types

__all__ = [
    "SKIP_SIGNATURE",
    "build_contents",
    "decode_signature",
    "encode_signature",
    "signature_block",
]

PROVIDER = "gemini"
SIGNATURE_TYPE = "thought_signature"

SKIP_SIGNATURE = "skip_thought_signature_validator"
"""Google's documented stand-in for a function call Gemini did not sign (a call another
provider made, or one from before thought signatures): Gemini 3 refuses a model turn whose first
function call has no signature, and accepts this value in its place."""


def encode_signature(raw: bytes) -> str:
    """A signature as the API writes it: standard base64."""
    return base64.b64encode(raw).decode("ascii")


def decode_signature(text: str) -> bytes:
    """The bytes of a base64 signature, standard or URL-safe alphabet, padded or not."""
    padded = text + "=" * (-len(text) % 4)
    return base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)


def signature_block(raw: bytes, part: str, **where: Any) -> ReplayBlock:
    """The replay block for a signature that came on a ``part`` (see the module docstring)."""
    return ReplayBlock(
        PROVIDER, SIGNATURE_TYPE, {"signature": encode_signature(raw), "part": part, **where}
    )


def build_contents(
    messages: Sequence[Message],
) -> tuple[types.Content | None, list[types.Content]]:
    """The system instruction and the conversation, in Gemini's roles.

    System and summary messages become the parts of ``system_instruction``, in order (Gemini
    has one instruction, not system turns); assistant messages become ``model`` turns; a tool
    result becomes a ``functionResponse`` part of a ``user`` turn; error and thought messages are
    not sent. Adjacent turns of the same role are merged, so the results of parallel calls
    travel together in one turn, as Gemini asks.
    """
    from google.genai import types

    system: list[types.Part] = []
    contents: list[types.Content] = []
    for message in messages:
        match message.role:
            case Role.SYSTEM | Role.SUMMARY:
                if message.text:
                    system.append(types.Part(text=message.text))
                continue
            case Role.ERROR | Role.THOUGHT:
                continue
            case Role.USER:
                role, parts = "user", _user_parts(message)
            case Role.ASSISTANT:
                role, parts = "model", model_parts(message)
            case Role.TOOL:
                assert message.tool_result is not None  # Message guarantees it
                role, parts = "user", [_function_response(message.tool_result)]
        if not parts:
            continue
        if contents and contents[-1].role == role:
            (contents[-1].parts or []).extend(parts)
        else:
            contents.append(types.Content(role=role, parts=parts))
    return (types.Content(parts=system) if system else None), contents


def _user_parts(message: Message) -> list[types.Part]:
    from google.genai import types

    if isinstance(message.content, str):
        return [types.Part(text=message.content)] if message.content else []
    parts: list[types.Part] = []
    for part in message.content:
        if isinstance(part, TextPart):
            if part.text:
                parts.append(types.Part(text=part.text))
        elif isinstance(part, ImagePart):
            parts.append(_image_part(part))
    return parts


def _image_part(image: ImagePart) -> types.Part:
    """A ``data:`` URL travels inline; any other URL as ``fileData``, which Gemini fetches."""
    from google.genai import types

    if not image.url.startswith("data:"):
        guessed = mimetypes.guess_type(urllib.parse.urlsplit(image.url).path)[0]
        return types.Part(
            file_data=types.FileData(file_uri=image.url, mime_type=image.media_type or guessed)
        )
    head, comma, payload = image.url[len("data:") :].partition(",")
    if not comma:
        raise invalid_option("content", "an image data: URL has no ',' before its data")
    media_type, *params = head.split(";")
    try:
        data = (
            base64.b64decode(payload, validate=True)
            if "base64" in params
            else urllib.parse.unquote_to_bytes(payload)
        )
    except (binascii.Error, ValueError) as exc:
        raise invalid_option(
            "content", f"an image data: URL has invalid base64 data: {exc}"
        ) from exc
    mime = image.media_type or media_type or "application/octet-stream"
    return types.Part(inline_data=types.Blob(mime_type=mime, data=data))


def model_parts(message: Message) -> list[types.Part]:
    """An assistant message as a model turn, each thought signature back on its part."""
    from google.genai import types

    thoughts: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    for block in message.replay_blocks:
        if block.provider != PROVIDER or block.type != SIGNATURE_TYPE:
            continue  # another provider's block: only its own provider reads it
        kind = block.data.get("part")
        if kind == "thought":
            thoughts.append(block.data)
        elif kind == "function_call":
            calls[str(block.data.get("tool_call_id"))] = block.data
        else:
            texts.append(block.data)
    parts = [
        types.Part(text=str(data.get("text", "")), thought=True, thought_signature=_signature(data))
        for data in thoughts
    ]
    if message.text or texts:
        first = texts[0] if texts else None
        parts.append(
            types.Part(text=message.text, thought_signature=_signature(first) if first else None)
        )
        # Two signatures cannot share a part; any further one keeps an empty part of its own.
        parts.extend(types.Part(text="", thought_signature=_signature(d)) for d in texts[1:])
    for index, call in enumerate(message.tool_calls):
        data = calls.get(call.id)
        signature = _signature(data) if data else None
        if signature is None and index == 0:
            signature = decode_signature(SKIP_SIGNATURE)
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=call.id, name=call.name, args=dict(call.arguments)
                ),
                thought_signature=signature,
            )
        )
    return parts


def _signature(data: dict[str, Any]) -> bytes:
    try:
        return decode_signature(str(data["signature"]))
    except (KeyError, binascii.Error, ValueError) as exc:
        raise invalid_option(
            "replay_blocks", f"a Gemini thought_signature block has no valid signature: {exc}"
        ) from exc


def _function_response(result: ToolResult) -> types.Part:
    """A tool result, under Gemini's ``output`` / ``error`` keys.

    The output is always wrapped, so an output that is itself an object with an ``error`` key
    is not read as a failure.
    """
    from google.genai import types

    if result.is_error:
        response: dict[str, Any] = {
            "error": result.error_details if result.error_details is not None else result.output
        }
    else:
        response = {"output": result.output}
    return types.Part(
        function_response=types.FunctionResponse(
            id=result.tool_call_id, name=result.tool_name, response=response
        )
    )
