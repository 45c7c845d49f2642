"""Dutch: a port of natural 8.1.1's ``PorterStemmerNl`` (``porter_stemmer_nl.js``, MIT).

Rule for rule, quirks included: the word is lower-cased only at the end (capitals count as
consonants until then), and natural's stemmer object keeps a ``suffixeRemoved`` flag that step 2
sets and nothing ever clears, so the "-bar" rule of step 3b is off until the first word whose
final ``e`` step 2 removed, and on for good after it. The flag is process state here too; the
lexicon loads (stemming every lexicon word, in natural's order) before any text is scored, which
is how natural's ``SentimentAnalyzer`` reaches the same state. Stems are cached only once the
flag is set, so a cached stem never outlives a flip.
"""

from __future__ import annotations

import re

__all__ = ["stem"]

_VOWELS = "aeiouèy"
_ACCENTS = str.maketrans(
    {"ä": "a", "ë": "e", "ï": "i", "ö": "o", "ü": "u", "á": "a", "é": "e", "í": "i", "ó": "o",
     "ú": "u"}
)  # fmt: skip
_Y_AFTER_VOWEL = re.compile(r"([aeioué])y")
_I_BETWEEN = re.compile(r"([aeioué])i([aeioué])")
_JS_SE = re.compile(r"[js]se?\Z")
_STEP4 = re.compile(r"[bcdfghjklmnpqrstvwxz](aa|ee|oo|uu)[bcdfghjklmnpqrstvwxz]\Z")

_state = {"suffix_removed": False}
_cache: dict[str, str] = {}
_CACHE_LIMIT = 65536


def _vowel_at(text: str, index: int) -> bool:
    # JavaScript text[index] is undefined out of range, and "aeiouèy".indexOf(undefined) is -1.
    return 0 <= index < len(text) and text[index] in _VOWELS


def _char(text: str, index: int) -> str:
    return text[index] if 0 <= index < len(text) else ""


def _substr(text: str, start: int, length: int) -> str:
    # JavaScript String.prototype.substr: a negative start counts from the end.
    if start < 0:
        start = max(len(text) + start, 0)
    return text[start : start + max(length, 0)]


def _longest(text: str, suffixes: tuple[str, ...]) -> str:
    best = ""
    for suffix in suffixes:
        if text.endswith(suffix) and len(suffix) > len(best):
            best = suffix
    return best


def _remove(text: str, count: int) -> str:
    return text[: max(len(text) - count, 0)]


def _undouble(text: str) -> str:
    return text[:-1] if text[-2:] in ("kk", "tt", "dd") else text


class _Stemmer:
    __slots__ = ("r1", "r2")

    def __init__(self, word: str) -> None:
        length = len(word)
        r1 = r2 = length
        i = 0
        while i < length - 1 and r1 == length:
            if _vowel_at(word, i) and not _vowel_at(word, i + 1):
                r1 = i + 2
            i += 1
        if r1 != length and r1 < 3:
            r1 = 3 if length > 3 else length
        i = r1
        while i < length - 1 and r2 == length:
            if _vowel_at(word, i) and not _vowel_at(word, i + 1):
                r2 = i + 2
            i += 1
        self.r1 = r1
        self.r2 = r2

    def step1b(self, word: str, suffixes: tuple[str, ...]) -> str:
        match = _longest(word, suffixes)
        if match:
            pos = len(word) - len(match)
            if (
                pos >= self.r1
                and not _vowel_at(word, pos - 1)
                and _substr(word, pos - 3, 3) != "gem"
            ):
                word = _undouble(_remove(word, len(match)))
        return word

    def step1(self, word: str) -> str:
        if word.endswith("heden") and len(word) - 5 >= self.r1:
            word = _remove(word, 5) + "heid"
        word = self.step1b(word, ("en", "ene"))
        match = _longest(word, ("se", "s"))
        if match:
            pos = len(word) - len(match)
            if pos >= self.r1 and not _vowel_at(word, pos - 1) and not _JS_SE.search(word):
                word = _remove(word, len(match))
        return word

    def step2(self, word: str) -> str:
        if (
            word.endswith("e")
            and self.r1 < len(word)
            and len(word) > 1
            and not _vowel_at(word, len(word) - 2)
        ):
            word = _remove(word, 1)
            _state["suffix_removed"] = True
            word = _undouble(word)
        return word

    def step3a(self, word: str) -> str:
        if word.endswith("heid") and len(word) - 4 >= self.r2 and _char(word, len(word) - 5) != "c":
            word = self.step1b(_remove(word, 4), ("en",))
        return word

    def step3b(self, word: str) -> str:
        if _longest(word, ("end", "ing")) and len(word) - 3 >= self.r2:
            word = _remove(word, 3)
            if (
                word.endswith("ig")
                and len(word) - 2 >= self.r2
                and _char(word, len(word) - 3) != "e"
            ):
                word = _remove(word, 2)
            else:
                word = _undouble(word)
        if word.endswith("ig") and self.r2 <= len(word) - 2 and _char(word, len(word) - 3) != "e":
            word = _remove(word, 2)
        if word.endswith("lijk") and self.r2 <= len(word) - 4:
            word = self.step2(_remove(word, 4))
        if word.endswith("baar") and self.r2 <= len(word) - 4:
            word = _remove(word, 4)
        if word.endswith("bar") and self.r2 <= len(word) - 3 and _state["suffix_removed"]:
            word = _remove(word, 3)
        return word


def _step4(word: str) -> str:
    if _STEP4.search(word):
        return word[:-2] + word[-1]
    return word


def stem_uncached(word: str) -> str:
    """The stem natural's ``PorterStemmerNl.stem(word)`` gives; updates the shared flag."""
    word = word.translate(_ACCENTS)
    if word.startswith("y"):
        word = "Y" + word[1:]
    word = _Y_AFTER_VOWEL.sub(r"\1Y", word)
    word = _I_BETWEEN.sub(r"\1I\2", word)
    stemmer = _Stemmer(word)
    word = stemmer.step1(word)
    word = stemmer.step2(word)
    word = stemmer.step3a(word)
    word = stemmer.step3b(word)
    return _step4(word).lower()


def stem(word: str) -> str:
    """The stem natural's ``PorterStemmerNl.stem(word)`` gives: Dutch, lower-cased (cached)."""
    cached = _cache.get(word)
    if cached is not None:
        return cached
    result = stem_uncached(word)
    if _state["suffix_removed"]:
        if len(_cache) >= _CACHE_LIMIT:
            _cache.clear()
        _cache[word] = result
    return result
