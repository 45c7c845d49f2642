"""The stemmer natural pairs with each language agentos scores, by ISO 639-1 code.

English uses `agentos.nlp.porter` (natural's ``PorterStemmer``); every other language uses the
port of natural's ``PorterStemmer<Lang>``. A language is shipped only when its stemmer is here,
its lexicon is in ``data/`` and its golden file passes.
"""

from __future__ import annotations

from collections.abc import Callable

from agentos.nlp import porter
from agentos.nlp.stemmers import de, es, fr, it, nl, pt

__all__ = ["STEMMERS"]

STEMMERS: dict[str, Callable[[str], str]] = {
    "en": porter.stem,
    "es": es.stem,
    "pt": pt.stem,
    "nl": nl.stem,
    "fr": fr.stem,
    "de": de.stem,
    "it": it.stem,
}
"""Stemmer of each shipped language; the keys are the shipped languages, English first."""
