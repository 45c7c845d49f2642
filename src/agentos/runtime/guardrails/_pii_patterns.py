"""Finding PII in text: what each kind matches, how it is validated, how it is replaced.

Each kind, what it matches, and how a candidate is validated:

- ``EMAIL``: ``name@domain.tld``, a local part of 1 to 64 characters and a dotted domain.
- ``IBAN``: 2 capital letters, 2 check digits, 11 to 30 capitals or digits, grouped by 4 with
  single spaces or not; ISO 13616 mod-97 must give 1.
- ``CREDIT_CARD``: 13 to 19 digits, or 4-4-4-4, 4-6-5 and 4-6-4 groups split by spaces or
  dashes; a card network's prefix (30-38, 4, 50-58, 6, 2221-2720) and the Luhn checksum.
- ``SSN``: ``AAA-GG-SSSS``, no area 000, 666 or 9xx, no group 00, no serial 0000.
- ``PHONE``: ``+`` and 8 to 15 digits in groups (``+44 20 7946 0958``, ``+1 (415) 555-0132``,
  ``+14155550132``); US numbers ``(415) 555-0132``, ``415-555-0132``, ``415.555.0132``,
  ``415 555 0132``, with an optional leading ``1``; area and exchange codes start 2 to 9.
- ``IP_ADDRESS``: an IPv4 dotted quad, each part 0 to 255 with no leading zero.

No kind matches inside a longer word or number: a candidate must not touch a letter, a digit
or (for numbers) a ``.``, ``,`` or ``-`` followed by a digit, nor a placeholder (a ``]`` before
it, a ``[`` after it, so redacting one value never frees its neighbour), so dates (``2024-03-15``,
``15.03.2024``), prices (``$1,299.99``), version strings (``1.2.3``, ``v2.10.4.1``) and ordinary
numbers stay. A dotted quad with every part under 256 (``1.2.3.4``) is an IPv4 address whatever
it means. A candidate that fails its validation is retried shorter, cut at a space (an IBAN
followed by a capitalised word), then dropped. The text is scanned once, left to right: the value
that starts first wins (on a tie, the kind listed first above) and the scan goes on after it.
Each value is replaced by its kind's placeholder (``[EMAIL]``, ``[IBAN]``, ...), which no kind
matches, so redaction is idempotent.

These are format checks: a list of numbers can still hold a run shaped like a value (three
numbers shaped ``NXX NXX XXXX`` read as a US phone number, four 4-digit numbers with a card
prefix that pass Luhn, about one run in ten, as a card).

The patterns never look at a whitespace character before or after a value, and join the parts of
a value only with a single space: ``PiiRedaction.output_tail`` relies on both to hold back a
streamed tail.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["MAX_SPAN", "PiiKind", "PiiMatch", "find_pii", "redact_pii"]


class PiiKind(StrEnum):
    """A kind of personal data; its value is the placeholder's name (``[EMAIL]``)."""

    EMAIL = "EMAIL"
    IBAN = "IBAN"
    CREDIT_CARD = "CREDIT_CARD"
    SSN = "SSN"
    PHONE = "PHONE"
    IP_ADDRESS = "IP_ADDRESS"

    @property
    def placeholder(self) -> str:
        """The text that replaces a value of this kind."""
        return f"[{self.value}]"


@dataclass(frozen=True, slots=True)
class PiiMatch:
    """One PII value found: its kind and where it is (``text[start:end]``)."""

    kind: PiiKind
    start: int
    end: int


MAX_SPAN = 64
"""No value of a kind whose parts are split by spaces, and what its patterns look at after it,
spans more characters than this (an international phone number: at most 53)."""

_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_PATTERNS: dict[PiiKind, tuple[re.Pattern[str], ...]] = {
    PiiKind.EMAIL: (
        re.compile(
            r"(?<![\w.%+\-\]])[\w.%+\-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+"
            r"[A-Za-z]{2,24}(?![\w\-@\[]|\.[\w\[])"
        ),
    ),
    PiiKind.IBAN: (re.compile(r"(?<![\w\]])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,8}(?![\w\[])"),),
    PiiKind.CREDIT_CARD: (
        re.compile(
            r"(?<![\w.,+\-\]])(?:\d{4}([ \-])\d{4}\1\d{4}\1\d{4}|\d{4}([ \-])\d{6}\2\d{4,5}"
            r"|\d{13,19})(?![\w\[]|[.,\-][\d\[])"
        ),
    ),
    PiiKind.SSN: (
        re.compile(
            r"(?<![\w\-\]])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w\[]|-[\d\[])"
        ),
    ),
    PiiKind.PHONE: (
        re.compile(
            r"(?<![\w+.\-\]])(?:1[ .\-]?)?(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[ .\-])[2-9]\d{2}[ .\-]"
            r"\d{4}(?![\w\[]|[.\-][\d\[])"
        ),
        re.compile(
            r"(?<![\w+\]])\+[1-9]\d{0,2}(?:[ .\-]?\(?\d{1,4}\)?){1,7}(?![\w\[]|[.\-][\d\[])"
        ),
    ),
    PiiKind.IP_ADDRESS: (
        re.compile(rf"(?<![\w.\]])(?:{_OCTET}\.){{3}}{_OCTET}(?![\w\[]|\.[\d\[])"),
    ),
}


_CARD_PREFIX = re.compile(r"3[0-8]|4|5[0-8]|6|2(?:2[2-9]\d|[3-6]\d\d|7[01]\d|720)")
"""The issuer prefixes of card networks: 30-38 (Amex, Diners, JCB), 4 (Visa), 50-58
(Mastercard, Maestro), 6 (Discover, UnionPay, Maestro), 2221-2720 (Mastercard)."""


def _luhn(digits: str) -> bool:
    """The Luhn checksum of a card number holds."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char) * (2 if index % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _card(value: str) -> bool:
    digits = re.sub(r"[ \-]", "", value)
    return 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) is not None and _luhn(digits)


def _iban(value: str) -> bool:
    compact = value.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]  # ISO 13616: the first four characters go to the end
    return int("".join(str(int(char, 36)) for char in moved)) % 97 == 1


def _phone(value: str) -> bool:
    if not value.startswith("+"):
        return True  # a NANP number: its pattern is its whole validation
    return 8 <= sum(char.isdigit() for char in value) <= 15


def _valid(value: str) -> bool:
    return True


_VALIDATORS: dict[PiiKind, Callable[[str], bool]] = {
    PiiKind.EMAIL: _valid,
    PiiKind.IBAN: _iban,
    PiiKind.CREDIT_CARD: _card,
    PiiKind.SSN: _valid,
    PiiKind.PHONE: _phone,
    PiiKind.IP_ADDRESS: _valid,
}


def _accepted_length(kind: PiiKind, value: str) -> int:
    """The longest valid prefix of a candidate, cut at a space (0 when none is valid)."""
    validate = _VALIDATORS[kind]
    if validate(value):
        return len(value)
    cut = value.rfind(" ")
    while cut > 0:
        if validate(value[:cut]):
            return cut
        cut = value.rfind(" ", 0, cut)
    return 0


def _next_candidate(text: str, kind: PiiKind, pos: int) -> PiiMatch | None:
    """The first valid value of ``kind`` starting at ``pos`` or later.

    A rejected candidate is retried one character later.
    """
    best: PiiMatch | None = None
    for pattern in _PATTERNS[kind]:
        start = pos
        while (match := pattern.search(text, start)) is not None:
            if best is not None and match.start() >= best.start:
                break  # an earlier pattern of the kind already found one as early
            length = _accepted_length(kind, match.group())
            if length:
                best = PiiMatch(kind, match.start(), match.start() + length)
                break
            start = match.start() + 1
    return best


def find_pii(text: str, kinds: Collection[PiiKind] = tuple(PiiKind)) -> list[PiiMatch]:
    """The PII values of ``kinds`` in ``text``, left to right, none overlapping another.

    One scan: from the end of the last value found, the value that starts first is taken (the
    kind listed first in `PiiKind` on a tie), so a rejected or overlapped candidate of one kind
    never hides a later value of another.
    """
    ordered = [kind for kind in PiiKind if kind in kinds]
    upcoming = {kind: _next_candidate(text, kind, 0) for kind in ordered}
    found: list[PiiMatch] = []
    pos = 0
    while True:
        for kind in ordered:
            candidate = upcoming[kind]
            if candidate is not None and candidate.start < pos:
                upcoming[kind] = _next_candidate(text, kind, pos)
        waiting = [match for match in upcoming.values() if match is not None]
        if not waiting:
            return found
        chosen = min(waiting, key=lambda match: (match.start, ordered.index(match.kind)))
        found.append(chosen)
        pos = chosen.end


def redact_pii(text: str, kinds: Collection[PiiKind] = tuple(PiiKind)) -> tuple[str, list[PiiKind]]:
    """``text`` with each PII value replaced by its placeholder, and the kinds replaced."""
    matches = find_pii(text, kinds)
    if not matches:
        return text, []
    parts: list[str] = []
    last = 0
    for match in matches:
        parts.extend((text[last : match.start], match.kind.placeholder))
        last = match.end
    parts.append(text[last:])
    return "".join(parts), [match.kind for match in matches]
