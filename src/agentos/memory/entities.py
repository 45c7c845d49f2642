"""Entities of a text, found without a model (the keyword feature strategy's counterpart).

Consolidation links traces that share an entity, so encoding records them. With no model to ask,
an entity is a run of capitalised words ("Paris", "New York", "Ada Lovelace") that are not common
words capitalised only because they start a sentence ("The", "Yesterday"), or a year or a
percentage ("2026", "12%"). Entities keep their spelling; duplicates are dropped, first
occurrence first. Good enough to link "Paris" in two memories; a host with a better extractor
passes ``entities=`` to `encode()`.
"""

from __future__ import annotations

import re

__all__ = ["extract_entities"]

_WORD = re.compile(r"[A-Za-z][\w'\u2019-]*|\d[\d.,]*%?")
_COMMON_WORDS = """
    i i'm i've i'd i'll the a an and but or so if when then this that these those it its my
    your we you he she they our their his her yes no ok okay hi hello thanks thank please
    what why how where who which can could would should will do does did is are was were be
    just also yesterday today tomorrow maybe actually recently lately honestly sometimes
    after before since because although remember tell sure well now there here let let's not
    dear
"""
_COMMON = frozenset(_COMMON_WORDS.split())


def extract_entities(text: str, limit: int = 12) -> list[str]:
    """Up to ``limit`` entities of ``text`` (see the module doc)."""
    found: list[str] = []
    run: list[str] = []

    def close() -> None:
        if run:
            name = " ".join(run)
            if name not in found:
                found.append(name)
            run.clear()

    for match in _WORD.finditer(text):
        word = match.group(0).rstrip(".,")
        if word[0].isdigit():
            close()
            wanted = (len(word) == 4 and word.isdigit()) or word.endswith("%")
            if wanted and word not in found:
                found.append(word)
            continue
        if word[0].isupper() and word.lower().replace("\u2019", "'") not in _COMMON:
            run.append(word)
        else:
            close()
        if text[match.end() : match.end() + 1] in (".", "!", "?", ",", ";", ":"):
            close()
    close()
    return found[:limit]
