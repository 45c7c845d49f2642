r"""The chunker: a document's text cut into passages of at most a token budget, with overlap.

`chunk_text` is deterministic (same text and options, same chunks) and works in four steps:

1. **Paragraphs.** The text is split at blank lines (``\n`` followed by optional spaces and
   another ``\n``); each paragraph is stripped and empty ones are dropped.
2. **Sentences.** Each paragraph is split at the whitespace that follows ``.``, ``!`` or ``?``
   (or one of them and a closing quote or bracket). A sentence keeps its own text verbatim,
   inner line breaks included.
3. **Oversized pieces.** A sentence whose estimate exceeds the budget is cut at whitespace into
   runs of words that fit (rejoined by one space); a single word that alone exceeds the budget
   is cut into slices of ``4 * max_tokens`` characters (the estimate's characters per token).
4. **Packing.** Pieces are added to the current chunk in order while the chunk's text fits the
   budget. In a chunk, pieces of one paragraph are joined by one space and a new paragraph
   starts after a blank line (``"\n\n"``). When the next piece does not fit, the chunk is closed
   and the next one starts with the overlap: the longest run of the closed chunk's last pieces
   whose text fits ``overlap_tokens`` (never the whole closed chunk, so each chunk adds new
   text), shortened from its front until the next piece fits beside it.

Sizes use the project's one estimate, `agentos.core.tokens.estimate_tokens` (characters / 4,
rounded up), measured on the chunk's joined text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentos.api.call_checks import invalid
from agentos.core.tokens import estimate_tokens

__all__ = [
    "DEFAULT_CHUNK_TOKENS",
    "DEFAULT_OVERLAP_TOKENS",
    "ChunkingOptions",
    "chunk_text",
]

DEFAULT_CHUNK_TOKENS = 256
"""The default budget of one chunk, in estimated tokens (about 1,000 characters)."""

DEFAULT_OVERLAP_TOKENS = 32
"""The default overlap carried from one chunk into the next, in estimated tokens."""

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")
# Closing quotes and brackets: ASCII, and the typographic U+201D and U+2019.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"'\u201d\u2019)\]]))\s+")
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class ChunkingOptions:
    """How documents are cut: ``max_tokens`` per chunk and ``overlap_tokens`` carried over.

    ``max_tokens`` must be an integer of at least 1 and ``overlap_tokens`` an integer from 0 to
    ``max_tokens - 1``; anything else is a `GMIError` (``INVALID_ARGUMENT``) naming the field.
    """

    max_tokens: int = DEFAULT_CHUNK_TOKENS
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS

    def __post_init__(self) -> None:
        for name in ("max_tokens", "overlap_tokens"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                invalid(f"chunking.{name}", f"must be an integer, got {type(value).__name__}")
        if self.max_tokens < 1:
            invalid("chunking.max_tokens", f"must be at least 1, got {self.max_tokens}")
        if not 0 <= self.overlap_tokens < self.max_tokens:
            invalid(
                "chunking.overlap_tokens",
                f"must be from 0 to max_tokens - 1 ({self.max_tokens - 1}), "
                f"got {self.overlap_tokens}",
            )


@dataclass(frozen=True, slots=True)
class _Piece:
    """A sentence (or a cut of one) and whether it opens its paragraph."""

    text: str
    opens_paragraph: bool


def chunk_text(text: str, options: ChunkingOptions | None = None) -> list[str]:
    """The chunks of ``text`` under ``options`` (see the module's four steps); ``[]`` if blank.

    Text that is not a string is a `GMIError` (``INVALID_ARGUMENT``) naming ``text``.
    """
    if not isinstance(text, str):
        invalid("text", f"must be a string, got {type(text).__name__}")
    chosen = options or ChunkingOptions()
    pieces = list(_pieces(text, chosen.max_tokens))
    chunks: list[str] = []
    current: list[_Piece] = []
    for piece in pieces:
        if current and estimate_tokens(_join([*current, piece])) > chosen.max_tokens:
            chunks.append(_join(current))
            current = _overlap(current, piece, chosen)
        current.append(piece)
    if current:
        chunks.append(_join(current))
    return chunks


def _pieces(text: str, max_tokens: int) -> list[_Piece]:
    pieces: list[_Piece] = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        stripped = paragraph.strip()
        if not stripped:
            continue
        first = True
        for sentence in _SENTENCE_END.split(stripped):
            for cut in _fit(sentence.strip(), max_tokens):
                pieces.append(_Piece(cut, first))
                first = False
    return pieces


def _fit(sentence: str, max_tokens: int) -> list[str]:
    """``sentence`` alone, or cut into word runs (and slices of long words) within the budget."""
    if not sentence:
        return []
    if estimate_tokens(sentence) <= max_tokens:
        return [sentence]
    width = 4 * max_tokens  # the most characters whose estimate fits the budget
    cuts: list[str] = []
    run = ""
    for word in _WHITESPACE.split(sentence):
        slices = [word[start : start + width] for start in range(0, len(word), width)]
        for part in slices:
            joined = f"{run} {part}" if run else part
            if len(joined) <= width:
                run = joined
            else:
                cuts.append(run)
                run = part
    if run:
        cuts.append(run)
    return cuts


def _join(pieces: list[_Piece]) -> str:
    text = ""
    for index, piece in enumerate(pieces):
        if index == 0:
            text = piece.text
        else:
            text += ("\n\n" if piece.opens_paragraph else " ") + piece.text
    return text


def _overlap(closed: list[_Piece], following: _Piece, options: ChunkingOptions) -> list[_Piece]:
    """The closed chunk's last pieces that open the next chunk (step 4)."""
    carried: list[_Piece] = []
    # Grow backwards while the carried text fits the overlap; stop before the first piece, so
    # the whole closed chunk is never carried and every chunk adds new text.
    for start in range(len(closed) - 1, 0, -1):
        candidate = closed[start:]
        if estimate_tokens(_join(candidate)) > options.overlap_tokens:
            break
        carried = candidate
    while carried and estimate_tokens(_join([*carried, following])) > options.max_tokens:
        carried = carried[1:]
    return carried
