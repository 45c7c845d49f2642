"""`MaxOutputLength`: the output stream cut at a length limit (issue 13 item 6).

The limit is in characters, or in estimated tokens (`agentos.core.tokens`: characters / 4,
rounded up, so N tokens allow 4N characters). The guardrail counts the characters it receives,
so placed last in a runner it counts what the user sees. The batch that crosses the limit is
answered with ``Block``: the part up to the limit is released, the stream ends, and the reason
says which limit was reached. Input and tool calls are allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentos.api.call_checks import invalid
from agentos.core.tokens import estimate_tokens_for_chars

from ._decision import Allow, Block, GuardrailDecision
from ._options import check_id
from ._protocol import OutputBatch

__all__ = ["MaxOutputLength"]


class MaxOutputLength:
    """Ends the output stream at ``max_chars`` characters or ``max_tokens`` estimated tokens.

    Give exactly one, a positive integer; otherwise `GMIError` naming the option.
    """

    def __init__(
        self,
        *,
        max_chars: int | None = None,
        max_tokens: int | None = None,
        id: str = "max_output_length",
    ) -> None:
        self._id = check_id(id)
        if (max_chars is None) == (max_tokens is None):
            invalid("max_chars" if max_chars is None else "max_tokens", "give exactly one limit")
        option, value = (
            ("max_chars", max_chars) if max_tokens is None else ("max_tokens", max_tokens)
        )
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            invalid(option, f"must be a positive integer, not {value!r}")
        self._limit_chars = value if max_tokens is None else _chars_for_tokens(value)
        if max_tokens is None:
            self._limit = f"{value} characters"
        else:
            self._limit = f"{value} estimated tokens ({self._limit_chars} characters)"

    @property
    def id(self) -> str:
        """The guardrail's id (``max_output_length`` unless given)."""
        return self._id

    @property
    def max_chars(self) -> int:
        """The limit in characters (4 per token for a limit in tokens)."""
        return self._limit_chars

    async def check_input(self, text: str) -> GuardrailDecision:
        """Allow: the limit is on the output."""
        return Allow()

    async def check_output(self, batch: OutputBatch) -> GuardrailDecision:
        """Allow a batch within the limit; cut the one that crosses it and end the stream."""
        room = self._limit_chars - batch.offset
        if len(batch.text) <= room:
            return Allow()
        return Block(
            f"output reached the maximum length of {self._limit}", text=batch.text[: max(room, 0)]
        )

    async def check_tool_call(self, name: str, arguments: Mapping[str, Any]) -> GuardrailDecision:
        """Allow: the limit is on the output."""
        return Allow()

    def output_tail(self, pending: str) -> int:
        """0: the limit needs no look-ahead."""
        return 0


def _chars_for_tokens(tokens: int) -> int:
    """The most characters whose token estimate stays within ``tokens``."""
    chars = tokens * 4  # characters / 4, rounded up: 4N characters are N tokens
    while estimate_tokens_for_chars(chars) > tokens:
        chars -= 1
    while estimate_tokens_for_chars(chars + 1) <= tokens:
        chars += 1
    return chars
