"""German: a port of natural 8.1.1's ``PorterStemmerDe`` (``porter_stemmer_de.js``).

The JavaScript original: "Original author: Joder Illi. Copyright (c) 2010, FormBlitz AG. All
rights reserved. Implementation of the stemming algorithm from
http://snowball.tartarus.org/algorithms/german/stemmer.html. Copyright of the algorithm is:
Copyright (c) 2001, Dr Martin Porter. Redistribution and use in source and binary forms, with or
without modification, is covered by the standard BSD license." (Integration in natural by Hugo
W.L. ter Doest.) This port keeps that notice.

Rule for rule, quirks included: natural does not lower-case here, so capitalised lexicon words
keep their capital (and lower-cased tokens never reach them); each step takes the leftmost
matching suffix (the longest), the first of its groups on a tie.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["stem"]

_U_BETWEEN = re.compile(r"([aeiouyäöü])u([aeiouyäöü])")
_Y_BETWEEN = re.compile(r"([aeiouyäöü])y([aeiouyäöü])")
_REGION = re.compile(r"[aeiouyäöü][^aeiouyäöü]")
# JavaScript's "." excludes these line terminators; Python's excludes only "\n".
_ANY = r"[^\n\r\u2028\u2029]"
_S1A = re.compile(r"(em|ern|er)\Z")
_S1B = re.compile(r"(e|en|es)\Z")
_S1C = re.compile(r"([bdfghklmnrt]s)\Z")
_S2A = re.compile(r"(en|er|est)\Z")
_S2B = re.compile(_ANY + r"{3}[bdfghklmnt]st\Z")
_S3A = re.compile(r"(end|ung)\Z")
_S3B = re.compile(r"[^e](ig|ik|isch)\Z")
_S3C = re.compile(r"(lich|heit)\Z")
_S3D = re.compile(r"(keit)\Z")
_NISS = re.compile(r"niss\Z")
_IG_AFTER_NOT_E = re.compile(r"[^e](ig)\Z")
_ER_EN = re.compile(r"(er|en)\Z")
_LICH_IG = re.compile(r"(lich|ig)\Z")
_UMLAUTS = str.maketrans({"U": "u", "Y": "y", "ä": "a", "ö": "o", "ü": "u"})


def _search(pattern: re.Pattern[str], text: str) -> int:
    # JavaScript String.prototype.search: the index of the leftmost match, or -1.
    match = pattern.search(text)
    return match.start() if match else -1


def _earliest(*candidates: tuple[str, int]) -> tuple[str, int]:
    # The smallest index wins; strict "<" keeps the first option on a tie, as natural does.
    option, best = "", 10000
    for name, index in candidates:
        if index != -1 and index < best:
            option, best = name, index
    return option, best


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The stem natural's ``PorterStemmerDe.stem(word)`` gives (no lower-casing, no umlauts)."""
    word = _U_BETWEEN.sub(r"\1U\2", word)
    word = _Y_BETWEEN.sub(r"\1Y\2", word)
    word = word.replace("ß", "ss")

    r1_index = _search(_REGION, word)
    r2_index = -1
    if r1_index != -1:
        r1_index += 2
        r2_index = _search(_REGION, word[r1_index:])
        if r2_index != -1:
            r2_index += 2 + r1_index
    if r1_index != -1 and r1_index < 3:
        r1_index = 3

    # Step 1.
    c1 = _search(_S1C, word)
    option1, index1 = _earliest(
        ("a", _search(_S1A, word)),
        ("b", _search(_S1B, word)),
        ("c", c1 + 1 if c1 != -1 else -1),
    )
    if index1 != 10000 and r1_index != -1 and index1 >= r1_index:
        word = word[:index1]
        if option1 == "b" and _search(_NISS, word) != -1:
            word = word[:-1]

    # Step 2.
    b2 = _search(_S2B, word)
    _, index2 = _earliest(("a", _search(_S2A, word)), ("b", b2 + 4 if b2 != -1 else -1))
    if index2 != 10000 and r1_index != -1 and index2 >= r1_index:
        word = word[:index2]

    # Step 3: d-suffixes.
    b3 = _search(_S3B, word)
    option3, index3 = _earliest(
        ("a", _search(_S3A, word)),
        ("b", b3 + 1 if b3 != -1 else -1),
        ("c", _search(_S3C, word)),
        ("d", _search(_S3D, word)),
    )
    if index3 != 10000 and r2_index != -1 and index3 >= r2_index:
        word = word[:index3]
        if option3 == "a":
            found = _search(_IG_AFTER_NOT_E, word)
            if found != -1 and found + 1 >= r2_index:
                word = word[: found + 1]
        elif option3 == "c":
            found = _search(_ER_EN, word)
            if found != -1 and found >= r1_index:
                word = word[:found]
        elif option3 == "d":
            found = _search(_LICH_IG, word)
            if found != -1 and found >= r2_index:
                word = word[:found]

    return word.translate(_UMLAUTS)
