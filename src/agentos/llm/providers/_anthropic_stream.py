"""How the Anthropic adapter reads a Messages API stream (private to `providers.anthropic`).

`StreamState` takes the SDK's events one at a time and gives the agentos chunks each one means,
keeping what the step has said so far (the blocks being streamed, the usage, the stop reason)
for the `FinishChunk` at the end and for the errors that may end it instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentos.core.messages import ReplayBlock, ToolCall
from agentos.core.usage import ModelUsage
from agentos.llm.catalog import priced
from agentos.llm.errors import ProviderError
from agentos.llm.model import (
    FinishChunk,
    FinishReason,
    ModelChunk,
    ReplayChunk,
    TextDelta,
    ToolCallChunk,
    UsageChunk,
)
from agentos.llm.providers._anthropic_schema import SchemaPlan

__all__ = ["PROVIDER", "StreamState"]

PROVIDER = "anthropic"

_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",  # never on a FinishChunk: a refusal raises (kind "refusal")
}


def _diagnostics(message: Any) -> dict[str, Any] | None:
    """The response's cache diagnostics, as the API sent them (``None`` when it sent null).

    They come on ``message_start``'s message shell. A reason type the SDK does not know yet is
    kept too, unchecked (no serializer warning: the dict is passed on, not interpreted).
    """
    diagnostics = getattr(message, "diagnostics", None)
    if diagnostics is None:
        return None
    data: dict[str, Any] = diagnostics.to_dict(mode="json", warnings=False)
    return data


@dataclass
class _Block:
    """A content block being streamed: its start payload and the pieces received so far."""

    start: dict[str, Any]
    parts: list[str] = field(default_factory=list)
    signature: str | None = None


@dataclass
class StreamState:
    """What one step's events have said so far."""

    model_id: str
    plan: SchemaPlan | None
    started: bool = False
    output: bool = False
    stopped: bool = False
    message_id: str | None = None
    response_model: str | None = None
    stop_reason: str | None = None
    stop_details: dict[str, Any] | None = None
    diagnostics: dict[str, Any] | None = None
    service_tier: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    blocks: dict[int, _Block] = field(default_factory=dict)
    held: list[tuple[ToolCall, bool]] = field(default_factory=list)
    """Tool calls held for the stop reason, from the first whose input did not parse on."""

    @property
    def schema_tool(self) -> str | None:
        return self.plan.tool_name if self.plan is not None and self.plan.route == "tool" else None

    def usage(self) -> ModelUsage:
        usage = ModelUsage(
            prompt_tokens=self.input_tokens + self.cache_read + self.cache_write,
            completion_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read,
            cache_write_tokens=self.cache_write,
        )
        return priced(PROVIDER, self.model_id, usage)

    def _read_usage(self, usage: Any) -> None:
        if usage is None:
            return
        # Each figure is a running total; one left out (null) keeps the last one reported.
        for attr, name in (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
            ("cache_read_input_tokens", "cache_read"),
            ("cache_creation_input_tokens", "cache_write"),
        ):
            value = getattr(usage, attr, None)
            if value is not None:
                setattr(self, name, value)
        # The tier the request was served at: on message_start's usage (message_delta's usage
        # has no such field today, but a later report would be the truer one).
        tier = getattr(usage, "service_tier", None)
        if isinstance(tier, str) and tier:
            self.service_tier = tier

    def handle(self, event: Any) -> list[ModelChunk]:
        """The chunks one event gives; raises `ProviderError` for a refusal."""
        match event.type:
            case "message_start":
                self.started = True
                self.message_id = event.message.id
                self.response_model = event.message.model
                self.diagnostics = _diagnostics(event.message)
                self._read_usage(event.message.usage)
            case "content_block_start":
                block = event.content_block.to_dict()
                self.blocks[event.index] = _Block(block)
                if block.get("type") == "text" and block.get("text"):
                    return self._text(block["text"])
            case "content_block_delta":
                return self._delta(event.index, event.delta)
            case "content_block_stop":
                return self._stop(event.index)
            case "message_delta":
                self._read_usage(event.usage)
                self.stop_reason = event.delta.stop_reason
                details = getattr(event.delta, "stop_details", None)
                self.stop_details = details.to_dict() if details is not None else None
                if self.stop_reason == "refusal":
                    raise self._refusal()
                return [*self._release(), UsageChunk(self.usage())]
            case "message_stop":
                self.stopped = True
        return []

    def _hold(self, call: ToolCall, *, parsed: bool) -> list[ModelChunk]:
        """A call now, or held until the stop reason says whether the output limit cut it.

        Input that does not parse is cut JSON when the limit stopped the reply (a cut call is
        never run) and the model's mistake otherwise; later calls wait too, to keep the order.
        """
        if parsed and not self.held:
            return [ToolCallChunk(call)]
        self.held.append((call, parsed))
        return []

    def _release(self) -> list[ModelChunk]:
        cut = _FINISH.get(self.stop_reason or "") == "length"
        held, self.held = self.held, []
        return [ToolCallChunk(call) for call, parsed in held if parsed or not cut]

    def _text(self, text: str) -> list[ModelChunk]:
        if self.schema_tool is not None:
            return []  # on the tool route the answer is the tool's input, not free text
        self.output = True
        return [TextDelta(text)]

    def _delta(self, index: int, delta: Any) -> list[ModelChunk]:
        block = self.blocks.get(index)
        if block is None:
            raise ValueError(f"a delta for content block {index}, which never started")
        match delta.type:
            case "text_delta":
                return self._text(delta.text)
            case "input_json_delta":
                block.parts.append(delta.partial_json)
                if block.start.get("name") == self.schema_tool and delta.partial_json:
                    self.output = True
                    return [TextDelta(delta.partial_json)]
            case "thinking_delta":
                block.parts.append(delta.thinking)
            case "signature_delta":
                block.signature = delta.signature
        return []

    def _stop(self, index: int) -> list[ModelChunk]:
        block = self.blocks.pop(index, None)
        if block is None:
            return []
        data = block.start
        match data.get("type"):
            case "tool_use":
                if data.get("name") == self.schema_tool:
                    if block.parts:
                        return []
                    self.output = True  # the whole input came with the block's start
                    return [TextDelta(json.dumps(data.get("input") or {}, ensure_ascii=False))]
                raw = "".join(block.parts)
                self.output = True
                try:
                    arguments = json.loads(raw) if raw.strip() else data.get("input") or {}
                except json.JSONDecodeError:
                    arguments = None
                if not isinstance(arguments, dict):
                    # The model's mistake: the tool round answers it with an error result.
                    call = ToolCall(data["id"], data["name"], {}, unparsed_arguments=raw)
                    return self._hold(call, parsed=False)
                return self._hold(ToolCall(data["id"], data["name"], arguments), parsed=True)
            case "thinking":
                thinking = dict(data)
                thinking["thinking"] = str(data.get("thinking") or "") + "".join(block.parts)
                if block.signature is not None:
                    thinking["signature"] = block.signature
                return [ReplayChunk(ReplayBlock(PROVIDER, "thinking", thinking))]
            case "redacted_thinking":
                return [ReplayChunk(ReplayBlock(PROVIDER, "redacted_thinking", dict(data)))]
        return []

    def _refusal(self) -> ProviderError:
        category = (self.stop_details or {}).get("category")
        details: dict[str, Any] = {
            "error_type": "refusal",
            "stop_reason": "refusal",
            "finish_reason": _FINISH["refusal"],
        }
        if self.stop_details:
            details["stop_details"] = self.stop_details
        return ProviderError(
            f"Anthropic {self.model_id} refused the request"
            + (f" ({category})" if category else ""),
            provider_id=PROVIDER,
            model_id=self.model_id,
            usage=self.usage(),
            after_output=self.output,
            kind="refusal",
            details=details,
        )

    def finish(self) -> FinishChunk:
        """The step's `FinishChunk`; a stream that ended with no stop reason is an error."""
        if self.stop_reason is None:
            raise ProviderError(
                f"Anthropic {self.model_id}: the stream ended before the model finished "
                f"(no stop_reason)",
                provider_id=PROVIDER,
                model_id=self.model_id,
                usage=self.usage() if self.started else None,
                after_output=self.output,
                kind="stream",
            )
        reason = _FINISH.get(self.stop_reason, "other")
        if reason == "tool_calls" and self.schema_tool is not None:
            reason = "stop"  # the forced schema call is the answer, not a call to run
        return FinishChunk(
            reason,
            response_model=self.response_model,
            provider_message_id=self.message_id,
            schema_route=self.plan.route if self.plan is not None else None,
            cache_diagnostics=self.diagnostics,
            service_tier=self.service_tier,
        )
