"""Spanish: a port of natural 8.1.1's ``PorterStemmerEs`` (``porter_stemmer_es.js``, MIT).

Rule for rule, quirks included: natural does not lower-case here (its ``word.toLowerCase()``
discards the result; the sentiment tokenizer has lower-cased already), ``removeAccent`` replaces
only the first occurrence of each accented vowel, and among several matching suffixes the
longest wins (the first listed on a tie).
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["stem"]

_VOWELS = frozenset("aeiouáéíóúAEIOUÁÉÍÓÚ")  # natural: /[aeiouáéíóú]/gi

_PRONOUNS = ("me", "se", "sela", "selo", "selas", "selos", "la", "le", "lo", "las", "les", "los",
             "nos")  # fmt: skip
_PRE_ACCENTED = ("iéndo", "ándo", "ár", "ér", "ír")
_PRE_PLAIN = ("iendo", "ando", "ar", "er", "ir")

# Step 1: (region, suffixes, replacement), tried in order; the first that matches is applied.
_STEP1: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("r2", ("anza", "anzas", "ico", "ica", "icos", "icas", "ismo", "ismos", "able", "ables",
            "ible", "ibles", "ista", "istas", "oso", "osa", "osos", "osas", "amiento",
            "amientos", "imiento", "imientos"), ""),
    ("r2", ("icadora", "icador", "icación", "icadoras", "icadores", "icaciones", "icante",
            "icantes", "icancia", "icancias", "adora", "ador", "ación", "adoras", "adores",
            "aciones", "ante", "antes", "ancia", "ancias"), ""),
    ("r2", ("logía", "logías"), "log"),
    ("r2", ("ución", "uciones"), "u"),
    ("r2", ("encia", "encias"), "ente"),
    ("r2", ("ativamente", "ivamente", "osamente", "icamente", "adamente"), ""),
    ("r1", ("amente",), ""),
    ("r2", ("antemente", "ablemente", "iblemente", "mente"), ""),
    ("r2", ("abilidad", "abilidades", "icidad", "icidades", "ividad", "ividades", "idad",
            "idades"), ""),
    ("r2", ("ativa", "ativo", "ativas", "ativos", "iva", "ivo", "ivas", "ivos"), ""),
)  # fmt: skip
_STEP2A = ("ya", "ye", "yan", "yen", "yeron", "yendo", "yo", "yó", "yas", "yes", "yais", "yamos")
_STEP2B = (
    "arían",
    "arías",
    "arán",
    "arás",
    "aríais",
    "aría",
    "aréis",
    "aríamos",
    "aremos",
    "ará",
    "aré",
    "erían",
    "erías",
    "erán",
    "erás",
    "eríais",
    "ería",
    "eréis",
    "eríamos",
    "eremos",
    "erá",
    "eré",
    "irían",
    "irías",
    "irán",
    "irás",
    "iríais",
    "iría",
    "iréis",
    "iríamos",
    "iremos",
    "irá",
    "iré",
    "aba",
    "ada",
    "ida",
    "ía",
    "ara",
    "iera",
    "ad",
    "ed",
    "id",
    "ase",
    "iese",
    "aste",
    "iste",
    "an",
    "aban",
    "ían",
    "aran",
    "ieran",
    "asen",
    "iesen",
    "aron",
    "ieron",
    "ado",
    "ido",
    "ando",
    "iendo",
    "ió",
    "ar",
    "er",
    "ir",
    "as",
    "abas",
    "adas",
    "idas",
    "ías",
    "aras",
    "ieras",
    "ases",
    "ieses",
    "ís",
    "áis",
    "abais",
    "íais",
    "arais",
    "ierais",
    "  aseis",
    "ieseis",
    "asteis",
    "isteis",
    "ados",
    "idos",
    "amos",
    "ábamos",
    "íamos",
    "imos",
    "áramos",
    "iéramos",
    "iésemos",
    "ásemos",
)  # fmt: skip  -- "  aseis" (with two spaces) is natural's, kept as is
_STEP2B_EN = ("en", "es", "éis", "emos")
_STEP3 = ("os", "a", "o", "á", "í", "ó")
_ACCENTS = (("á", "a"), ("é", "e"), ("í", "i"), ("ó", "o"), ("ú", "u"))


def _is_vowel(char: str) -> bool:
    return char in _VOWELS


def _longest_suffix(word: str, suffixes: tuple[str, ...]) -> str:
    # natural's endsInArr: the longest listed suffix the word ends with ("" if none); a stable
    # sort by length, so the first listed wins a tie (max() keeps the first maximum too).
    best = ""
    for suffix in suffixes:
        if len(word) >= len(suffix) and word.endswith(suffix) and len(suffix) > len(best):
            best = suffix
    return best


def _remove_accent(word: str) -> str:
    for accented, plain in _ACCENTS:
        word = word.replace(accented, plain, 1)
    return word


def _cut(word: str, suffix: str) -> str:
    # JavaScript word.slice(0, -n) with n > 0: "" when n exceeds the length (never wraps).
    return word[: max(len(word) - len(suffix), 0)]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The stem natural's ``PorterStemmerEs.stem(word)`` gives (for lower-case input)."""
    if len(word) < 2:
        return _remove_accent(word)
    r1, r2, rv = _regions(word)
    word = _step0_attached_pronoun(word, rv)
    after0 = word
    word = _step1_standard_suffix(word, r1, r2)
    if word == after0:
        word = _step2a_verb_suffix_y(word, rv)
        if word == after0:
            word = _step2b_other_verb_suffix(word, rv)
    word = _step3_residual_suffix(word, rv)
    return _remove_accent(word)


def _regions(word: str) -> tuple[int, int, int]:
    # R1, R2 and RV as natural computes them (RV only for words longer than 3).
    length = len(word)
    r1 = r2 = rv = length
    i = 0
    while i < length - 1 and r1 == length:
        if _is_vowel(word[i]) and not _is_vowel(word[i + 1]):
            r1 = i + 2
        i += 1
    i = r1
    while i < length - 1 and r2 == length:
        if _is_vowel(word[i]) and not _is_vowel(word[i + 1]):
            r2 = i + 2
        i += 1
    if length > 3:
        if not _is_vowel(word[1]):
            rv = _next(word, 2, vowel=True) + 1
        elif _is_vowel(word[0]) and _is_vowel(word[1]):
            rv = _next(word, 2, vowel=False) + 1
        else:
            rv = 3
    return r1, r2, rv


def _step0_attached_pronoun(word: str, rv: int) -> str:
    suffix = _longest_suffix(word, _PRONOUNS)
    if suffix:
        before = _cut(word[rv:], suffix)
        if _longest_suffix(before, _PRE_ACCENTED):
            return _remove_accent(_cut(word, suffix))
        if _longest_suffix(before, _PRE_PLAIN) or _cut(word, suffix).endswith("uyendo"):
            return _cut(word, suffix)
    return word


def _step1_standard_suffix(word: str, r1: int, r2: int) -> str:
    # The first row of _STEP1 whose suffix ends its region is applied.
    for region, suffixes, replacement in _STEP1:
        text = word[r2:] if region == "r2" else word[r1:]
        suf = _longest_suffix(text, suffixes)
        if suf:
            return _cut(word, suf) + replacement
    return word


def _step2a_verb_suffix_y(word: str, rv: int) -> str:
    # Verb suffixes beginning with y, after u.
    suf = _longest_suffix(word[rv:], _STEP2A)
    if suf and word[len(word) - len(suf) - 1 : len(word) - len(suf)] == "u":
        return _cut(word, suf)
    return word


def _step2b_other_verb_suffix(word: str, rv: int) -> str:
    rv_text = word[rv:]
    suf = _longest_suffix(rv_text, _STEP2B)
    if suf:
        return _cut(word, suf)
    suf = _longest_suffix(rv_text, _STEP2B_EN)
    if suf:
        word = _cut(word, suf)
        if word.endswith("gu"):
            word = word[:-1]
    return word


def _step3_residual_suffix(word: str, rv: int) -> str:
    rv_text = word[rv:]
    suf = _longest_suffix(rv_text, _STEP3)
    if suf:
        return _cut(word, suf)
    if _longest_suffix(rv_text, ("e", "é")):
        word = word[:-1]
        if word[rv:].endswith("u") and word.endswith("gu"):
            word = word[:-1]
    return word


def _next(word: str, start: int, *, vowel: bool) -> int:
    # natural's nextVowelPosition / nextConsonantPosition: the index, else the length.
    for position in range(start, len(word)):
        if _is_vowel(word[position]) == vowel:
            return position
    return len(word)
