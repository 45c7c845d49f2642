"""Tools the agent tests give their agents."""

from __future__ import annotations

from agentos.tools.tool import tool

__all__ = ["add"]


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: the first
        b: the second
    """
    return a + b
