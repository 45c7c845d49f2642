"""French: a port of natural 8.1.1's ``PorterStemmerFr`` (``porter_stemmer_fr.js``, MIT).

Rule for rule, including natural's departures from the Snowball description (its suffix lists,
its RV computation, the longest-suffix matching inside each branch). JavaScript's out-of-range
``token[i]`` (``undefined``) and negative ``slice`` arguments are reproduced by `_char` and
`_slice`.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["stem"]

_VOWELS = frozenset("aeiouyâàëéêèïîôûù")

_S2A = ("îmes", "ît", "îtes", "i", "ie", "Ie", "ies", "ir", "ira", "irai", "iraIent", "irais",
        "irait", "iras", "irent", "irez", "iriez", "irions", "irons", "iront", "is", "issaIent",
        "issais", "issait", "issant", "issante", "issantes", "issants", "isse", "issent", "isses",
        "issez", "issiez", "issions", "issons", "it")  # fmt: skip
_S2B_DELETE = ("é", "ée", "ées", "és", "èrent", "er", "era", "erai", "eraIent", "erais",
               "erait", "eras", "erez", "eriez", "erions", "erons", "eront", "ez", "iez",
               "Iez")  # fmt: skip
_S2B_A = ("âmes", "ât", "âtes", "a", "ai", "aIent", "ais", "ait", "ant", "ante", "antes", "ants",
          "as", "asse", "assent", "asses", "assiez", "assions")  # fmt: skip


def _is_vowel(char: str | None) -> bool:
    return char is not None and char in _VOWELS


def _char(text: str, index: int) -> str | None:
    # JavaScript text[index]: undefined (None) out of range, never wrapping.
    return text[index] if 0 <= index < len(text) else None


def _slice(text: str, start: int, end: int | None = None) -> str:
    # JavaScript String.prototype.slice: negative indices count from the end, clamped at 0.
    n = len(text)
    begin = max(n + start, 0) if start < 0 else min(start, n)
    stop = n if end is None else (max(n + end, 0) if end < 0 else min(end, n))
    return text[begin:stop] if begin < stop else ""


def _cut(text: str, count: int) -> str:
    # text.slice(0, -count) for count > 0.
    return _slice(text, 0, -count)


def _longest(text: str, suffixes: tuple[str, ...]) -> str:
    best = ""
    for suffix in suffixes:
        if text.endswith(suffix) and len(suffix) > len(best):
            best = suffix
    return best


def _prelude(token: str) -> str:
    token = token.lower()
    if not token:
        return "undefined"  # JavaScript: "" + token[0] with token[0] undefined
    first = token[0]
    result = first.upper() if first == "y" and _is_vowel(_char(token, 1)) else first
    for i in range(1, len(token)):
        char = token[i]
        before, after = _char(token, i - 1), _char(token, i + 1)
        if (
            (char in ("u", "i") and _is_vowel(before) and _is_vowel(after))
            or (char == "y" and (_is_vowel(before) or _is_vowel(after)))
            or (char == "u" and before == "q")
        ):
            result += char.upper()
        else:
            result += char
    return result


def _regions(token: str) -> tuple[int, int, int]:
    length = len(token)
    r1 = r2 = rv = length
    i = 0
    while i < length - 1 and r1 == length:
        if _is_vowel(token[i]) and not _is_vowel(token[i + 1]):
            r1 = i + 2
        i += 1
    i = r1
    while i < length - 1 and r2 == length:
        if _is_vowel(token[i]) and not _is_vowel(token[i + 1]):
            r2 = i + 2
        i += 1
    if _is_vowel(_char(token, 0)) and _is_vowel(_char(token, 1)):
        rv = 3
    if token[:3] in ("par", "col", "tap"):
        rv = 3
    else:
        i = 1
        while i < length - 1 and rv == length:
            if _is_vowel(token[i]):
                rv = i + 1
            i += 1
    return r1, r2, rv


_Step1Result = tuple[str, bool] | None
"""A step 1 group's answer: the token and natural's ``doStep2a``, or ``None`` (no suffix of
the group matched: the next group is tried)."""


def _step1(token: str, r1: int, r2: int, rv: int) -> tuple[str, bool]:
    """Standard suffix removal; returns the token and natural's ``doStep2a``.

    The suffix groups are tried in natural's order; the first that matches ends the step.
    """
    for group in (
        _step1_noun_suffixes,
        _step1_ement,
        _step1_ite,
        _step1_if,
        _step1_aux_euse,
        _step1_adverbs,
    ):
        found = group(token, r1, r2, rv)
        if found is not None:
            return found
    return token, False


def _step1_noun_suffixes(token: str, r1: int, r2: int, rv: int) -> _Step1Result:
    """ance, ique, isme, ...; (ic)ation, atrice, ...; logie; usion, ution; ence."""
    r2t = token[r2:]
    suf = _longest(r2t, ("ance", "iqUe", "isme", "able", "iste", "eux", "ances", "iqUes",
                         "ismes", "ables", "istes"))  # fmt: skip
    if suf:
        return _cut(token, len(suf)), False
    group = ("icatrice", "icateur", "ication", "icatrices", "icateurs", "ications")
    suf = _longest(token, group)
    if suf:
        if _longest(r2t, group):
            return _cut(token, len(suf)), False
        return _cut(token, len(suf)) + "iqU", False
    suf = _longest(r2t, ("atrice", "ateur", "ation", "atrices", "ateurs", "ations"))
    if suf:
        return _cut(token, len(suf)), False
    suf = _longest(r2t, ("logie", "logies"))
    if suf:
        return _cut(token, len(suf)) + "log", False
    suf = _longest(r2t, ("usion", "ution", "usions", "utions"))
    if suf:
        return _cut(token, len(suf)) + "u", False
    suf = _longest(r2t, ("ence", "ences"))
    if suf:
        return _cut(token, len(suf)) + "ent", False
    return None


def _step1_ement(token: str, r1: int, r2: int, rv: int) -> _Step1Result:
    """issement, ativement, ivement, eusement, ablement, ièrement, ement (and plurals)."""
    r1t, r2t, rvt = token[r1:], token[r2:], token[rv:]
    suf = _longest(r1t, ("issement", "issements"))
    if suf:
        if not _is_vowel(_char(token, len(token) - len(suf) - 1)):
            token = _cut(token, len(suf))
        return token, False
    suf = _longest(r2t, ("ativement", "ativements"))
    if suf:
        return _cut(token, len(suf)), False
    suf = _longest(r2t, ("ivement", "ivements"))
    if suf:
        return _cut(token, len(suf)), False
    if _longest(token, ("eusement", "eusements")):
        suf = _longest(r2t, ("eusement", "eusements"))
        if suf:
            return _cut(token, len(suf)), False
        suf = _longest(r1t, ("eusement", "eusements"))
        if suf:
            return _cut(token, len(suf)) + "eux", False
        suf = _longest(rvt, ("ement", "ements"))
        if suf:
            return _cut(token, len(suf)), False
        return token, False
    suf = _longest(r2t, ("ablement", "ablements", "iqUement", "iqUements"))
    if suf:
        return _cut(token, len(suf)), False
    suf = _longest(rvt, ("ièrement", "ièrements", "Ièrement", "Ièrements"))
    if suf:
        return _cut(token, len(suf)) + "i", False
    suf = _longest(rvt, ("ement", "ements"))
    if suf:
        return _cut(token, len(suf)), False
    return None


def _step1_ite(token: str, r1: int, r2: int, rv: int) -> _Step1Result:
    """icité, abilité, ité (and plurals)."""
    r2t = token[r2:]
    suf = _longest(token, ("icité", "icités"))
    if suf:
        if _longest(r2t, ("icité", "icités")):
            return _cut(token, len(suf)), False
        return _cut(token, len(suf)) + "iqU", False
    suf = _longest(token, ("abilité", "abilités"))
    if suf:
        if _longest(r2t, ("abilité", "abilités")):
            return _cut(token, len(suf)), False
        return _cut(token, len(suf)) + "abl", False
    suf = _longest(r2t, ("ité", "ités"))
    if suf:
        return _cut(token, len(suf)), False
    return None


def _step1_if(token: str, r1: int, r2: int, rv: int) -> _Step1Result:
    """icatif, atif, if (and their feminine and plural forms)."""
    r2t = token[r2:]
    icatif = ("icatif", "icative", "icatifs", "icatives")
    if _longest(token, icatif):
        suf = _longest(r2t, icatif)
        if suf:
            token = _cut(token, len(suf))
            r2t = token[r2:]
        suf = _longest(r2t, ("atif", "ative", "atifs", "atives"))
        if suf:
            token = _cut(token, len(suf) + 2) + "iqU"
        return token, False
    suf = _longest(r2t, ("atif", "ative", "atifs", "atives"))
    if suf:
        return _cut(token, len(suf)), False
    suf = _longest(r2t, ("if", "ive", "ifs", "ives"))
    if suf:
        return _cut(token, len(suf)), False
    return None


def _step1_aux_euse(token: str, r1: int, r2: int, rv: int) -> _Step1Result:
    """eaux, aux, euse, euses."""
    if token.endswith("eaux"):
        return _cut(token, 4) + "eau", False
    if token[r1:].endswith("aux"):
        return _cut(token, 3) + "al", False
    suf = _longest(token[r2:], ("euse", "euses"))
    if suf:
        return _cut(token, len(suf)), False
    suf = _longest(token[r1:], ("euse", "euses"))
    if suf:
        return _cut(token, len(suf)) + "eux", False
    return None


def _step1_adverbs(token: str, r1: int, r2: int, rv: int) -> _Step1Result:
    """amment, emment, ment, ments: the removals after which step 2a runs."""
    rvt = token[rv:]
    if rvt.endswith("amment"):
        return _cut(token, 6) + "ant", True
    if rvt.endswith("emment"):
        return _cut(token, 6) + "ent", True
    suf = _longest(rvt, ("ment", "ments"))
    if suf:
        before = _char(token, len(token) - len(suf) - 1)
        if before is not None and _is_vowel(before) and rvt.endswith(before + suf):
            return _cut(token, len(suf)), True
    return None


def _step2(token: str, before_step1: str, do_step2a: bool, r2: int, rv: int) -> str:
    rvt = token[rv:]
    before_step2a = token
    step2a_done = False
    if before_step1 == token or do_step2a:
        step2a_done = True
        suf = _longest(rvt, _S2A)
        if suf:
            before = _char(token, len(token) - len(suf) - 1)
            # natural: !isVowel(letterBefore) && endsin(rvtxt, letterBefore + suf); an undefined
            # letter would make "undefined" + suf, which the region text cannot end with.
            if before is not None and not _is_vowel(before) and rvt.endswith(before + suf):
                token = _cut(token, len(suf))
    if step2a_done and token == before_step2a:
        r2t = token[r2:]
        suf = _longest(rvt, _S2B_DELETE)
        if suf:
            return _cut(token, len(suf))
        if rvt.endswith("ions") and r2t.endswith("ions"):
            return _cut(token, 4)
        suf = _longest(rvt, _S2B_A)
        if suf:
            token = _cut(token, len(suf))
            if _char(token, len(token) - 1) == "e" and rvt.endswith("e" + suf):
                token = _cut(token, 1)
    return token


def _step4(token: str, r2: int, rv: int) -> str:
    last, second = _char(token, len(token) - 1), _char(token, len(token) - 2)
    if last == "s" and second not in ("a", "i", "o", "u", "è", "s"):
        token = _cut(token, 1)
    if token[r2:].endswith("ion") and _char(token, len(token) - 4) in ("s", "t"):
        token = _cut(token, 3)
    suf = _longest(token[rv:], ("ier", "ière", "Ier", "Ière"))
    if suf:
        token = _cut(token, len(suf)) + "i"
    if token[rv:].endswith("e"):
        token = _cut(token, 1)
    if token[rv:].endswith("ë") and _slice(token, len(token) - 3, -1) == "gu":
        token = _cut(token, 1)
    return token


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The stem natural's ``PorterStemmerFr.stem(word)`` gives: French, lower-cased."""
    token = _prelude(word.lower())
    if len(token) == 1:
        return token
    r1, r2, rv = _regions(token)
    before_step1 = token
    token, do_step2a = _step1(token, r1, r2, rv)
    token = _step2(token, before_step1, do_step2a, r2, rv)
    if token != before_step1:
        if _char(token, len(token) - 1) == "Y":
            token = _cut(token, 1) + "i"
        if _char(token, len(token) - 1) == "ç":
            token = _cut(token, 1) + "c"
    else:
        token = _step4(token, r2, rv)
    if _longest(token, ("enn", "onn", "ett", "ell", "eill")):
        token = _cut(token, 1)
    i = len(token) - 1
    while i > 0:
        if not _is_vowel(token[i]):
            i -= 1
        elif i != len(token) - 1 and token[i] in ("é", "è"):
            token = token[:i] + "e" + token[i + 1 :]
            break
        else:
            break
    return token.lower()
