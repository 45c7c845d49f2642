r"""Word tokenizers that reproduce npm ``natural``'s, character for character.

`tokenize` is what the English lexicon scorer uses (``reference/sentiment.md`` step 1):
``natural.WordTokenizer`` on the lower-cased text, i.e. a split on runs of characters other than
ASCII letters, digits, ``_`` and the Cyrillic letters U+0410-U+044F, then the
characters matched by ``[^\w\s'-]|(?<!\w)-(?!\w)|(?<!\w)'(?!\w)`` removed from every token
(JavaScript's ``\w`` is ASCII), then empty tokens dropped. ``"I don't understand"`` gives
``[i, don, t, understand]``, ``café`` gives ``caf``, emoticons vanish.

`tokenize_for` adds natural's ``AggressiveTokenizer<Lang>`` for the other languages whose
lexicon agentos ships (their character classes keep accented letters).
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["TOKENIZERS", "tokenize", "tokenize_for", "tokenize_reference"]

# The literal steps, kept for the property test that checks the fast path against them.
_WORD_SPLIT = re.compile(r"[^A-Za-z\u0410-\u042f\u0430-\u044f0-9_]+")
_STRIP = re.compile(r"[^\w\s'-]|(?<!\w)-(?!\w)|(?<!\w)'(?!\w)", re.ASCII)

# The fast path. After the split a token holds only ASCII word characters and the Cyrillic
# letters U+0410-U+044F; the strip then deletes exactly the Cyrillic ones (they are not JavaScript
# ``\w``), and no token holds a quote or hyphen for its other branches to match. So: delete the
# Cyrillic letters (which also joins "abcжdef" into "abcdef", as the split-then-strip does) and
# keep the runs of ASCII word characters.
_CYRILLIC = re.compile(r"[\u0410-\u042f\u0430-\u044f]+")
_ASCII_WORD = re.compile(r"[A-Za-z0-9_]+")


def tokenize_reference(text: str) -> list[str]:
    """`tokenize` written as the literal steps of ``sentiment.md`` (slower; for tests)."""
    pieces = [piece for piece in _WORD_SPLIT.split(text.lower()) if piece not in ("", " ")]
    stripped = (_STRIP.sub("", piece) for piece in pieces)
    return [token for token in stripped if token]


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` exactly as natural's WordTokenizer plus the strip.

    Contract: equal to `tokenize_reference` for every string; never raises on any ``str``.
    """
    lowered = text.lower()
    # Python's str.lower() and JavaScript's toLowerCase() agree on the mappings that can yield
    # ASCII (the Kelvin sign gives "k", "İ" gives "i" + U+0307), which is all that matters here.
    if not lowered.isascii():
        lowered = _CYRILLIC.sub("", lowered)
    return _ASCII_WORD.findall(lowered)


def _aggressive(pattern: str) -> Callable[[str], list[str]]:
    """A natural ``AggressiveTokenizer``: split the lower-cased text on ``pattern``."""
    splitter = re.compile(pattern)

    def split(text: str) -> list[str]:
        return [token for token in splitter.split(text.lower()) if token]

    return split


# natural's AggressiveTokenizer<Lang> split patterns (natural 8.1.1, lib/natural/tokenizers/).
# natural's trim() drops only leading and trailing empty strings, but with a ``+`` split no empty
# string occurs inside, and the Portuguese one filters all empties itself; so "drop empties" is
# the same. French is /.../i in JavaScript; applied to lower-cased text the flag changes nothing.
# Italian splits on JavaScript's ASCII \W, so accented Italian letters split words ("perché" ->
# "perch"): that is natural's behaviour and its lexicon was stemmed through the same stemmer.
TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "en": tokenize,
    "es": _aggressive(r"[^a-zA-Zá-úÁ-ÚñÑüÜ]+"),
    "pt": _aggressive(r"[^a-zA-Zà-úÀ-Ú]"),
    "nl": _aggressive(r"[^a-zA-Z0-9_'-]+"),
    "fr": _aggressive(r"[^a-z0-9äâàéèëêïîöôùüûœç-]+"),
    "de": _aggressive(r"[^a-zA-Z0-9ßäöü_'-]+"),
    "it": _aggressive(r"[^A-Za-z0-9_]+"),
}
"""The tokenizer of each language agentos scores, by ISO 639-1 code."""


def tokenize_for(text: str, language: str) -> list[str]:
    """Tokens of ``text`` for ``language`` (an ISO 639-1 code in `TOKENIZERS`; else English)."""
    return TOKENIZERS.get(language, tokenize)(text)
