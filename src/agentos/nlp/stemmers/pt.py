"""Portuguese: a port of natural 8.1.1's ``PorterStemmerPt`` (``porter_stemmer_pt.js``, MIT).

natural's Snowball-style stemmer: regions R1, R2 and RV fixed once on the prelude'd word
(``ã``/``õ`` written ``a~``/``o~``), then suffix steps that each replace the first listed suffix
the word ends with inside the step's region. Ported rule for rule, including its list order.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["stem"]

_VOWELS = "aeiouáéíóúâêôàãõ"

_STEP1_PLAIN = (
    "amentos", "imentos", "aço~es", "adoras", "adores", "amento", "imento",
    "aça~o", "adora", "ância", "antes", "ismos", "istas",
    "ador", "ante", "ável", "ezas", "icas", "icos", "ismo", "ista", "ível", "osas", "osos",
    "eza", "ica", "ico", "osa", "oso",
)  # fmt: skip
_STEP1_ADVERBS = ("ativamente", "icamente", "ivamente", "osamente", "adamente")
_STEP1_MENTE = ("antemente", "avelmente", "ivelmente", "mente")
_STEP1_IDADE = (
    "abilidades", "abilidade", "icidades", "icidade", "ividades", "ividade", "idades", "idade",
)  # fmt: skip
_STEP1_IVA = ("ativas", "ativos", "ativa", "ativo", "ivas", "ivos", "iva", "ivo")
_STEP2 = (
    "aríamos", "ássemos", "eríamos", "êssemos", "iríamos", "íssemos",
    "áramos", "aremos", "aríeis", "ásseis", "ávamos", "éramos", "eremos",
    "eríeis", "ésseis", "íramos", "iremos", "iríeis", "ísseis",
    "ara~o", "ardes", "areis", "áreis", "ariam", "arias", "armos", "assem",
    "asses", "astes", "áveis", "era~o", "erdes", "ereis", "éreis", "eriam",
    "erias", "ermos", "essem", "esses", "estes", "íamos", "ira~o", "irdes",
    "ireis", "íreis", "iriam", "irias", "irmos", "issem", "isses", "istes",
    "adas", "ados", "amos", "ámos", "ando", "aram", "aras", "arás", "arei",
    "arem", "ares", "aria", "asse", "aste", "avam", "avas", "emos", "endo",
    "eram", "eras", "erás", "erei", "erem", "eres", "eria", "esse", "este",
    "idas", "idos", "íeis", "imos", "indo", "iram", "iras", "irás", "irei",
    "irem", "ires", "iria", "isse", "iste",
    "ada", "ado", "ais", "ara", "ará", "ava", "eis", "era", "erá", "iam",
    "ias", "ida", "ido", "ira", "irá",
    "am", "ar", "as", "ei", "em", "er", "es", "eu", "ia", "ir", "is", "iu", "ou",
)  # fmt: skip
_STEP4 = ("os", "a", "i", "o", "á", "í", "ó")


class _Token:
    """natural's ``Token``: a string and region starts fixed at the start."""

    __slots__ = ("regions", "string")

    def __init__(self, string: str) -> None:
        self.string = string
        self.regions: dict[str, int] = {}

    def vowel_at(self, index: int) -> bool:
        return 0 <= index < len(self.string) and self.string[index] in _VOWELS

    def next_vowel(self, start: int) -> int:
        n = len(self.string)
        index = start if 0 <= start < n else n
        while index < n and not self.vowel_at(index):
            index += 1
        return index

    def next_consonant(self, start: int) -> int:
        n = len(self.string)
        index = start if 0 <= start < n else n
        while index < n and self.vowel_at(index):
            index += 1
        return index

    def replace_in_region(
        self, suffixes: tuple[str, ...] | str, replacement: str, region: str
    ) -> None:
        # natural's replaceSuffixInRegion: the first suffix (in list order) that the word ends
        # with and that starts at or after the region start is replaced; then it stops.
        start = self.regions.get(region, 0)
        for suffix in (suffixes,) if isinstance(suffixes, str) else suffixes:
            if self.string.endswith(suffix) and len(self.string) - len(suffix) >= start:
                self.string = self.string[: len(self.string) - len(suffix)] + replacement
                return


def _region_n(token: _Token, start: int) -> int:
    # The region after the first non-vowel following a vowel, searched from ``start``.
    length = len(token.string)
    index = start
    region = length
    while index < length - 1 and region == length:
        if token.vowel_at(index) and not token.vowel_at(index + 1):
            region = index + 2
        index += 1
    return region


def _region_v(token: _Token) -> int:
    rv = len(token.string)
    if rv > 3:
        if not token.vowel_at(1):
            rv = token.next_vowel(2) + 1
        elif token.vowel_at(0) and token.vowel_at(1):
            rv = token.next_consonant(2) + 1
        else:
            rv = 3
    return rv


def _standard_suffix(token: _Token) -> None:
    token.replace_in_region(_STEP1_PLAIN, "", "r2")
    token.replace_in_region(("logias", "logia"), "log", "r2")
    token.replace_in_region(("ências", "ência"), "ente", "r2")
    token.replace_in_region(_STEP1_ADVERBS, "", "r2")
    token.replace_in_region("amente", "", "r1")
    token.replace_in_region(_STEP1_MENTE, "", "r2")
    token.replace_in_region(_STEP1_IDADE, "", "r2")
    token.replace_in_region(_STEP1_IVA, "", "r2")
    if token.string.endswith(("eiras", "eira")):
        token.replace_in_region(("iras", "ira"), "ir", "rv")


def _residual_form(token: _Token) -> None:
    before = token.string
    if token.string.endswith(("gue", "gué", "guê")):
        token.replace_in_region(("ue", "ué", "uê"), "", "rv")
    if token.string.endswith(("cie", "cié", "ciê")):
        token.replace_in_region(("ie", "ié", "iê"), "", "rv")
    if before == token.string:
        token.replace_in_region(("e", "é", "ê"), "", "rv")
    token.replace_in_region("ç", "c", "all")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The stem natural's ``PorterStemmerPt.stem(word)`` gives: Portuguese, lower-cased."""
    token = _Token(word.lower().replace("ã", "a~").replace("õ", "o~"))
    token.regions["all"] = 0
    token.regions["r1"] = _region_n(token, 0)
    token.regions["r2"] = _region_n(token, token.regions["r1"])
    token.regions["rv"] = _region_v(token)
    original = token.string
    _standard_suffix(token)
    if token.string == original:
        token.replace_in_region(_STEP2, "", "rv")
    if token.string != original:
        if token.string.endswith("ci"):
            token.replace_in_region("i", "", "rv")
    else:
        token.replace_in_region(_STEP4, "", "rv")
    _residual_form(token)
    return token.string.replace("a~", "ã").replace("o~", "õ")
