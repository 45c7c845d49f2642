"""Italian: a port of natural 8.1.1's ``PorterStemmerIt`` (``porter_stemmer_it.js``, MIT).

Rule for rule: acute accents become grave, ``qu`` and ``i``/``u`` between vowels are marked
upper-case (consonants), regions R1, R2 and RV are fixed once, and each step removes the *first
listed* suffix the region ends with (unlike the Spanish stemmer's longest match). Words shorter
than 3 characters come back after the marking, upper-case marks included, as natural's do.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["stem"]

_VOWELS = frozenset("aeiouàèìòù")
_MARK = re.compile(r"([aeiou])(i|u)([aeiou])")
_ACUTE = str.maketrans({"á": "à", "é": "è", "í": "ì", "ó": "ò", "ú": "ù",
                        "Á": "à", "É": "è", "Í": "ì", "Ó": "ò", "Ú": "ù"})  # fmt: skip

_PRONOUNS = (
    "glieli", "glielo", "gliene", "gliela", "gliele", "sene", "tene", "cela", "cele", "celi",
    "celo", "cene", "vela", "vele", "veli", "velo", "vene", "mela", "mele", "meli", "melo",
    "mene", "tela", "tele", "teli", "telo", "gli", "ci", "la", "le", "li", "lo", "mi", "ne",
    "si", "ti", "vi",
)  # fmt: skip
_STEP1: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("r2", ("ativamente", "abilamente", "ivamente", "osamente", "icamente"), ""),
    ("r2", ("icazione", "icazioni", "icatore", "icatori", "azione", "azioni", "atore",
            "atori"), ""),
    ("r2", ("logia", "logie"), "log"),
    ("r2", ("uzione", "uzioni", "usione", "usioni"), "u"),
    ("r2", ("enza", "enze"), "ente"),
    ("rv", ("amento", "amenti", "imento", "imenti"), ""),
    ("r1", ("amente",), ""),
    ("r2", ("atrice", "atrici", "abile", "abili", "ibile", "ibili", "mente", "ante", "anti",
            "anza", "anze", "iche", "ichi", "ismo", "ismi", "ista", "iste", "isti", "istà",
            "istè", "istì", "ico", "ici", "ica", "ice", "oso", "osi", "osa", "ose"), ""),
    ("r2", ("abilità", "icità", "ività", "ità"), ""),
    ("r2", ("icativa", "icativo", "icativi", "icative", "ativa", "ativo", "ativi", "ative",
            "iva", "ivo", "ivi", "ive"), ""),
)  # fmt: skip
_STEP2 = (
    "erebbero", "irebbero", "assero", "assimo", "eranno", "erebbe", "eremmo", "ereste",
    "eresti", "essero", "iranno", "irebbe", "iremmo", "ireste", "iresti", "iscano", "iscono",
    "issero", "arono", "avamo", "avano", "avate", "eremo", "erete", "erono", "evamo", "evano",
    "evate", "iremo", "irete", "irono", "ivamo", "ivano", "ivate", "ammo", "ando", "asse",
    "assi", "emmo", "enda", "ende", "endi", "endo", "erai", "Yamo", "iamo", "immo", "irai",
    "irei", "isca", "isce", "isci", "isco", "erei", "uti", "uto", "ita", "ite", "iti", "ito",
    "iva", "ivi", "ivo", "ono", "uta", "ute", "ano", "are", "ata", "ate", "ati", "ato", "ava",
    "avi", "avo", "erà", "ere", "erò", "ete", "eva", "evi", "evo", "irà", "ire", "irò", "ar",
    "ir",
)  # fmt: skip
_STEP3A = ("ia", "ie", "ii", "io", "ià", "iè", "iì", "iò", "a", "e", "i", "o", "à", "è", "ì",
           "ò")  # fmt: skip


def _first_suffix(text: str, suffixes: tuple[str, ...]) -> str:
    for suffix in suffixes:
        if text.endswith(suffix):
            return suffix
    return ""


def _cut(word: str, suffix: str) -> str:
    return word[: max(len(word) - len(suffix), 0)]


def _mark(match: re.Match[str]) -> str:
    return match.group(1) + match.group(2).upper() + match.group(3)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The stem natural's ``PorterStemmerIt.stem(word)`` gives: Italian, lower-cased."""
    token = word.lower().translate(_ACUTE).replace("qu", "qU")
    token = _MARK.sub(_mark, token)
    if len(token) < 3:
        return token
    r1, r2, rv = _regions(token)
    token = _step0_attached_pronoun(token, rv)
    after0 = token
    token = _step1_standard_suffix(token, r1, r2, rv)
    if token == after0:
        token = _step2_verb_suffix(token, rv)
    return _step3_residual_suffix(token, rv).lower()


def _regions(token: str) -> tuple[int, int, int]:
    # R1, R2 and RV as natural computes them (RV only for words longer than 3).
    length = len(token)
    r1 = r2 = rv = length
    i = 0
    while i < length - 1 and r1 == length:
        if token[i] in _VOWELS and token[i + 1] not in _VOWELS:
            r1 = i + 2
        i += 1
    i = r1
    while i < length - 1 and r2 == length:
        if token[i] in _VOWELS and token[i + 1] not in _VOWELS:
            r2 = i + 2
        i += 1
    if length > 3:
        if token[1] not in _VOWELS:
            rv = next((j for j in range(2, length) if token[j] in _VOWELS), length) + 1
        elif token[0] in _VOWELS and token[1] in _VOWELS:
            rv = next((j for j in range(2, length) if token[j] not in _VOWELS), length) + 1
        else:
            rv = 3
    return r1, r2, rv


def _step0_attached_pronoun(token: str, rv: int) -> str:
    # Both branches are tested on the text before either applies.
    suf = _first_suffix(token, _PRONOUNS)
    if suf:
        before = _cut(token[rv:], suf)
        pre1 = _first_suffix(before, ("ando", "endo"))
        pre2 = _first_suffix(before, ("ar", "er", "ir"))
        if pre1:
            token = _cut(token, suf)
        if pre2:
            token = _cut(token, suf) + "e"
    return token


def _step1_standard_suffix(token: str, r1: int, r2: int, rv: int) -> str:
    # The first row of _STEP1 whose suffix ends its region is applied.
    regions = {"r1": token[r1:], "r2": token[r2:], "rv": token[rv:]}
    for region, suffixes, replacement in _STEP1:
        suf = _first_suffix(regions[region], suffixes)
        if suf:
            return _cut(token, suf) + replacement
    return token


def _step2_verb_suffix(token: str, rv: int) -> str:
    # Run only when step 1 removed nothing.
    suf = _first_suffix(token[rv:], _STEP2)
    return _cut(token, suf) if suf else token


def _step3_residual_suffix(token: str, rv: int) -> str:
    # Always run: a final vowel (and an i before it), then ch / gh ending RV lose their h.
    suf = _first_suffix(token[rv:], _STEP3A)
    if suf:
        token = _cut(token, suf)
    rv_text = token[rv:]
    if rv_text.endswith("ch"):
        token = token[:-2] + "c"
    elif rv_text.endswith("gh"):
        token = token[:-2] + "g"
    return token
