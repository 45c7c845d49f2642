"""Injectable chance (DESIGN.md §5.5): everything random draws from a `random.Random`.

Components take an ``rng`` argument; tests pass a seeded ``random.Random(seed)`` so involuntary
recall, sampling seeds and jitter are reproducible.
"""

from __future__ import annotations

import random

__all__ = ["resolve_rng"]


def resolve_rng(rng: random.Random | None = None, *, seed: int | None = None) -> random.Random:
    """The random source to use: ``rng`` when given, else a new one seeded with ``seed``.

    With neither, the new source is seeded from the operating system.
    """
    if rng is not None:
        if seed is not None:
            raise ValueError("pass either rng or seed, not both")
        return rng
    return random.Random(seed)
