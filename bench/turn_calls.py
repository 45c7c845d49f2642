"""``python -m bench.turn_calls``: the Python calls of one light ``send("hi")``, and their spread.

Not a benchmark (no baseline, nothing timed): a count that shows how far a turn's data travels.
A ``gmi(model=ScriptedModel(script), cognition="light")`` session (`bench.turn_models.script`:
one text reply with its usage) plays one warm-up turn, is cleared, and plays ``send(PROMPT)``
under ``sys.setprofile``. Printed:

- **calls**: Python function calls made during the turn (a profiler "call" event that starts a
  frame; resuming a suspended generator or coroutine also raises "call", and is counted apart
  as **resumptions**). Calls of C functions are not counted.
- **modules**: the distinct modules those calls ran in: agentos's, and all.
- **package switches**: consecutive calls in different packages, an agentos package being
  ``agentos.<name>`` and any other code its top-level package (``asyncio``, ``pydantic``, ...);
  and, apart, switches between agentos packages only (other code skipped).
- the calls per package, most first.

Issue 12 reported, for the tree it reviewed: 677 calls across 43 modules with 226 package
switches. The figures depend on the Python version; the one used is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any

import agentos
from agentos.testing import ScriptedModel
from bench.turn_models import REPLY, script

__all__ = ["TurnCalls", "count_turn_calls", "main"]

PROMPT = "hi"


def _package(module: str) -> str:
    """``agentos.<name>`` for agentos's modules, the top-level package for any other."""
    parts = module.split(".")
    if parts[0] == "agentos" and len(parts) > 1:
        return f"agentos.{parts[1]}"
    return parts[0]


@dataclass(frozen=True, slots=True)
class TurnCalls:
    """The modules of a turn's Python calls, in order, and its resumptions."""

    calls: list[str]
    resumptions: int

    @property
    def modules(self) -> set[str]:
        """Every module a call ran in."""
        return set(self.calls)

    @property
    def agentos_modules(self) -> set[str]:
        """The agentos modules among `modules`."""
        return {module for module in self.calls if module.startswith("agentos")}

    @property
    def switches(self) -> int:
        """Consecutive calls in different packages (agentos's by subpackage)."""
        packages = [_package(module) for module in self.calls]
        return sum(1 for a, b in itertools.pairwise(packages) if a != b)

    @property
    def agentos_switches(self) -> int:
        """Consecutive agentos calls in different agentos packages (other calls skipped)."""
        packages = [_package(module) for module in self.calls if module.startswith("agentos")]
        return sum(1 for a, b in itertools.pairwise(packages) if a != b)


async def count_turn_calls(prompt: str = PROMPT) -> TurnCalls:
    """Profile one light ``send(prompt)`` on a warmed, cleared session of a scripted agent."""
    agent = agentos.gmi(model=ScriptedModel(script), cognition="light")
    session = agent.session("turn-calls")
    await session.send(prompt)  # warm: the GMI is built, first-use caches are filled
    await session.clear()
    calls: list[str] = []
    resumptions = 0

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal resumptions
        if event != "call":
            return
        # A frame that starts has run no instruction yet; a resumed one has (f_lasti > 0).
        if frame.f_lasti > 0:
            resumptions += 1
        else:
            calls.append(str(frame.f_globals.get("__name__", "?")))

    sys.setprofile(profile)
    try:
        result = await session.send(prompt)
    finally:
        sys.setprofile(None)
    await agent.close()
    if result.text != REPLY:
        raise RuntimeError(f"the session answered {result.text!r}")
    return TurnCalls(calls, resumptions)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures of one light turn."""
    parser = argparse.ArgumentParser(prog="python -m bench.turn_calls", description=__doc__)
    parser.add_argument("--prompt", default=PROMPT, help=f"the user message ({PROMPT!r})")
    parser.add_argument("--top", type=int, default=12, metavar="N", help="packages listed (12)")
    args = parser.parse_args(argv)
    turn = asyncio.run(count_turn_calls(args.prompt))
    agentos_calls = sum(1 for module in turn.calls if module.startswith("agentos"))
    version = sys.version.split()[0]
    print(f"one light send({args.prompt!r}) on ScriptedModel, Python {version}:")
    print(f"  calls:            {len(turn.calls)} ({agentos_calls} in agentos)")
    print(f"  resumptions:      {turn.resumptions} (generators and coroutines resumed)")
    print(f"  modules:          {len(turn.agentos_modules)} of agentos, {len(turn.modules)} in all")
    print(f"  package switches: {turn.switches} ({turn.agentos_switches} between agentos packages)")
    print("  calls per package:")
    for package, count in Counter(_package(m) for m in turn.calls).most_common(args.top):
        print(f"    {count:5d}  {package}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
