"""Tools the self-improvement tests share."""

from __future__ import annotations

from agentos.tools import tool

__all__ = ["add"]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: first
        b: second
    """
    return a + b
