"""Guardrails of the full runtime: the protocol, the packs, a runner (issue 13 item 6).

The spec leaves guardrails to a page we do not have (DESIGN.md §5.15); this is ours. A
`Guardrail` sees the user's input before the turn, each batch of the streamed output and each
tool call before it runs, and answers `Allow`, `Redact` (the replacement text or arguments) or
`Block` (a reason). `GuardrailRunner` applies a list in order: redactions compose (each
guardrail sees the text the one before it let through), the first block wins, and every decision
that is not ``Allow`` is reported as a `GuardrailEvent` (guardrail id, stage, kind, reason) for
the reasoning trace and the turn's metadata.

Output batching (`GuardedOutput`, from ``runner.output_stream()``): each guardrail is a stage
holding the text it has not released. A pushed delta is appended to the first stage's pending
text; the stage keeps back the tail its guardrail's ``output_tail(pending)`` asks for (what
could be the start of a match: the digits of a card number not yet complete, the first word of
a blocked phrase) and checks the rest as one `OutputBatch`; what it lets through goes on to the
next stage, and what the last stage lets through is released to the client. ``finish()`` checks
every stage's remaining text with ``final=True``, so nothing held back is lost. A value split
across deltas is therefore checked whole: the released text equals what checking the whole
output at once gives, wherever the deltas split it. A block ends the stream.

Packs: `PiiRedaction` (emails, phone numbers, Luhn-checked card numbers, mod-97-checked IBANs,
US SSNs, IPv4 addresses, each replaced by a placeholder such as ``[EMAIL]``), `BlockedTopics`
(keywords and phrases as whole words, case-insensitive) and `MaxOutputLength` (characters or
estimated tokens). `hard_limits_prompt` renders a persona's hard limits as the "Hard limits"
system prompt.
"""

from ._decision import (
    Allow,
    Block,
    GuardrailAction,
    GuardrailDecision,
    GuardrailEvent,
    GuardrailStage,
    Redact,
)
from ._hard_limits import (
    HARD_LIMITS_HEADING,
    HARD_LIMITS_PRIORITY,
    hard_limits_prompt,
    persona_hard_limits,
)
from ._length import MaxOutputLength
from ._pii import PiiRedaction
from ._pii_patterns import PiiKind
from ._protocol import Guardrail, OutputBatch
from ._runner import GuardrailRunner, InputCheck, ToolCallCheck
from ._stream import GuardedOutput, OutputRelease
from ._topics import BlockedTopics

__all__ = [
    "HARD_LIMITS_HEADING",
    "HARD_LIMITS_PRIORITY",
    "Allow",
    "Block",
    "BlockedTopics",
    "GuardedOutput",
    "Guardrail",
    "GuardrailAction",
    "GuardrailDecision",
    "GuardrailEvent",
    "GuardrailRunner",
    "GuardrailStage",
    "InputCheck",
    "MaxOutputLength",
    "OutputBatch",
    "OutputRelease",
    "PiiKind",
    "PiiRedaction",
    "Redact",
    "ToolCallCheck",
    "hard_limits_prompt",
    "persona_hard_limits",
]
