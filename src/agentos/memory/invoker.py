"""The model call a memory makes for itself (HyDE, observer, reflector, gist, schema summaries).

A `ModelInvoker` takes a system prompt and a user prompt and returns the model's text. A memory
without one makes no model call: HyDE is off, the observer and reflector do not run, temporal
gist keeps the first words, and consolidation writes no schema summaries.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

__all__ = ["ModelInvoker"]

ModelInvoker = Callable[[str, str], Awaitable[str]]
"""``await invoker(system, user)`` → the model's reply text."""
