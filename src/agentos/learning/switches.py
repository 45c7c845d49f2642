"""The process switches and the effective mode (spec "Learning": Modes and the process switches).

"AGENTOS_LEARNING_OFF=1 puts every turn of every layer in the process in mode off.
AGENTOS_LEARNING_FREEZE=1 freezes a turn whose mode would be on [...]. Any other value of either
variable sets nothing." Both are read at each call (each prepared turn), never cached, so a
process that sets one mid-run changes the next turn.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

from .settings import LearningMode

__all__ = [
    "LEARNING_FREEZE_ENV",
    "LEARNING_OFF_ENV",
    "ModeSetBy",
    "effective_mode",
    "learning_switches",
]

ModeSetBy = Literal["config", "AGENTOS_LEARNING_OFF", "AGENTOS_LEARNING_FREEZE"]
LEARNING_OFF_ENV: Literal["AGENTOS_LEARNING_OFF"] = "AGENTOS_LEARNING_OFF"
LEARNING_FREEZE_ENV: Literal["AGENTOS_LEARNING_FREEZE"] = "AGENTOS_LEARNING_FREEZE"
_ON_VALUE = "1"


def learning_switches(
    environ: Mapping[str, str] | None = None,
) -> tuple[LearningMode | None, ModeSetBy | None]:
    """The mode the process switches impose and which one imposes it, or ``(None, None)``.

    ``AGENTOS_LEARNING_OFF=1`` gives ``('off', 'AGENTOS_LEARNING_OFF')`` and wins over the freeze;
    ``AGENTOS_LEARNING_FREEZE=1`` gives ``('frozen', 'AGENTOS_LEARNING_FREEZE')``. Only the exact
    value ``"1"`` counts. ``environ`` defaults to ``os.environ``, read now.
    """
    env = os.environ if environ is None else environ
    if env.get(LEARNING_OFF_ENV) == _ON_VALUE:
        return "off", LEARNING_OFF_ENV
    if env.get(LEARNING_FREEZE_ENV) == _ON_VALUE:
        return "frozen", LEARNING_FREEZE_ENV
    return None, None


def effective_mode(
    configured: LearningMode, environ: Mapping[str, str] | None = None
) -> tuple[LearningMode, ModeSetBy]:
    """The mode in effect for a layer configured with ``configured``, and what set it.

    The off switch wins over everything; the freeze switch freezes only a mode that would be
    ``on`` (a configured ``off`` stays off, set by ``config``); otherwise the config decides.
    """
    override, set_by = learning_switches(environ)
    if override == "off" and set_by is not None:
        return "off", set_by
    if override == "frozen" and set_by is not None and configured == "on":
        return "frozen", set_by
    return configured, "config"
