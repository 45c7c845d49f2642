"""Test doubles for agentos, public so users test their own agents the same way.

`ScriptedModel` plays scripted model steps, `HashEmbedder` embeds without a model, `FakeClock`
moves time by hand. The package itself never imports this module.
"""

from agentos.testing.fake_clock import FakeClock
from agentos.testing.hash_embedder import HashEmbedder
from agentos.testing.scripted_model import (
    ScriptedModel,
    ScriptFunction,
    ScriptStep,
    estimate_tokens,
)

__all__ = [
    "FakeClock",
    "HashEmbedder",
    "ScriptFunction",
    "ScriptStep",
    "ScriptedModel",
    "estimate_tokens",
]
