"""`PiiRedaction`: personal data replaced by typed placeholders (issue 13 item 6).

The kinds, their validation and their placeholders are in `_pii_patterns`. On the input and
the output the guardrail answers ``Redact`` with the replaced text when it found a value; on a
tool call it redacts every string inside the arguments (nested maps and lists included).

Streaming: ``output_tail`` holds back the trailing token (text after the last whitespace,
which may be the start of an email or of a number) and, before it, every token joined to it by
a single space that could be part of a value split by spaces (a token with a digit, or 1 to 4
capital letters such as an IBAN group). The cut is thus after a whitespace character, where no
value can straddle and no pattern looks, so each batch redacts as the whole text would. When
that chain grows past 256 characters (a long run of numbers), the cut moves to the last token
start at least `MAX_SPAN` + 2 characters before the end that no value straddles.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from agentos.api.call_checks import invalid

from ._decision import Allow, GuardrailDecision, GuardrailStage, Redact
from ._options import check_id, check_stages, map_strings, token_spans
from ._pii_patterns import MAX_SPAN, PiiKind, find_pii, redact_pii
from ._protocol import OutputBatch

__all__ = ["PiiRedaction"]

_ALL_STAGES = tuple(GuardrailStage)
_CHAIN_TOKEN = re.compile(r"\S*\d\S*|[A-Z]{1,4}")
_MAX_HOLD = 256


class PiiRedaction:
    """Replaces emails, phone numbers, card numbers, IBANs, US SSNs and IPv4 addresses.

    ``kinds`` limits the kinds redacted (all by default); ``stages`` where it applies (input,
    output and tool calls by default). Each is checked here: `GMIError` naming the option.
    """

    def __init__(
        self,
        *,
        kinds: Collection[PiiKind | str] | None = None,
        stages: Collection[GuardrailStage | str] = _ALL_STAGES,
        id: str = "pii_redaction",
    ) -> None:
        self._id = check_id(id)
        self._kinds = _check_kinds(kinds)
        self._stages = check_stages(stages, GuardrailStage)

    @property
    def id(self) -> str:
        """The guardrail's id (``pii_redaction`` unless given)."""
        return self._id

    @property
    def kinds(self) -> tuple[PiiKind, ...]:
        """The kinds redacted, in `PiiKind` order."""
        return self._kinds

    async def check_input(self, text: str) -> GuardrailDecision:
        """Redact the user's input."""
        return self._text(text, GuardrailStage.INPUT)

    async def check_output(self, batch: OutputBatch) -> GuardrailDecision:
        """Redact one output batch."""
        return self._text(batch.text, GuardrailStage.OUTPUT)

    async def check_tool_call(self, name: str, arguments: Mapping[str, Any]) -> GuardrailDecision:
        """Redact every string inside a tool call's arguments."""
        if GuardrailStage.TOOL_CALL not in self._stages:
            return Allow()
        found: list[PiiKind] = []

        def change(text: str) -> str:
            redacted, kinds = redact_pii(text, self._kinds)
            found.extend(kinds)
            return redacted

        redacted = map_strings(dict(arguments), change)
        return Redact(_reason(found), arguments=redacted) if found else Allow()

    def output_tail(self, pending: str) -> int:
        """The trailing characters that could still be, or join, a value (see the module doc)."""
        if GuardrailStage.OUTPUT not in self._stages or not pending:
            return 0
        cut = _chain_start(pending)
        if len(pending) - cut > _MAX_HOLD:
            cut = max(cut, _capped_cut(pending, self._kinds))
        return len(pending) - cut

    def _text(self, text: str, stage: GuardrailStage) -> GuardrailDecision:
        if stage not in self._stages:
            return Allow()
        redacted, found = redact_pii(text, self._kinds)
        return Redact(_reason(found), text=redacted) if found else Allow()


def _check_kinds(kinds: Collection[PiiKind | str] | None) -> tuple[PiiKind, ...]:
    if kinds is None:
        return tuple(PiiKind)
    names = [kind.value for kind in PiiKind]
    if isinstance(kinds, str) or not isinstance(kinds, Collection):
        invalid("kinds", f"must be a collection of kinds among {names}, not {kinds!r}")
    for kind in kinds:
        if kind not in names:
            invalid("kinds", f"unknown kind {kind!r} (known: {', '.join(names)})")
    if not kinds:
        invalid("kinds", "name at least one kind")
    return tuple(kind for kind in PiiKind if kind.value in kinds)


def _reason(found: list[PiiKind]) -> str:
    """``redacted EMAIL (1), PHONE (2)``: the kinds in `PiiKind` order, never the values."""
    counts = ", ".join(f"{kind.value} ({found.count(kind)})" for kind in PiiKind if kind in found)
    return f"redacted {counts}"


def _chain_start(text: str) -> int:
    """Where the held tail starts: the trailing token and the value-like tokens joined to it."""
    spans = token_spans(text)
    cut = len(text) if text[-1].isspace() else spans.pop()[0]  # a trailing token may grow
    while spans:
        start, end = spans.pop()
        if end != cut - 1 or text[end] != " " or not _CHAIN_TOKEN.fullmatch(text[start:end]):
            break  # not joined by exactly one space, or it cannot be part of a value
        cut = start
    return cut


def _capped_cut(text: str, kinds: Collection[PiiKind]) -> int:
    """The last token start ``MAX_SPAN`` + 2 before the end that no value straddles (or 0)."""
    matches = find_pii(text, kinds)
    limit = len(text) - MAX_SPAN - 2
    for start, _ in reversed(token_spans(text)):
        if start <= limit and not any(m.start < start < m.end for m in matches):
            return start
    return 0
