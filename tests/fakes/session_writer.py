"""A child process for the two-process test: ``COUNT`` sends on one durable session.

``python -m fakes.session_writer DB NAME SEED COUNT LEASE_TIMEOUT`` (run from ``tests/``) opens
session ``shared`` of a `gmi()` agent on the SQLite store at DB and sends ``NAME-0`` ...
``NAME-{COUNT-1}`` (every fifth also calls the ``add`` tool). The model holds some turns longer
than the lease timeout (seeded), so the other process's sends meet a running turn. Prints one
JSON line per send: its prompt and ``"landed"`` or ``"busy"`` (a `GMIError` ``SESSION_BUSY``);
any other error ends the process.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from agentos.api.gmi_agent import gmi
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import Message, Role, ToolCall
from agentos.llm.model import CompletionOptions, ToolDefinition
from agentos.storage import SQLiteSessionStore
from agentos.testing import ScriptedModel, ScriptStep
from fakes.tools import add

SESSION = "shared"


def reply_to(prompt: str) -> str:
    """The answer the model gives ``prompt``."""
    return f"ack {prompt}"


async def main(path: Path, name: str, seed: int, count: int, lease_timeout: float) -> None:
    rng = random.Random(seed)
    holds: dict[str, float] = {}

    def answer(
        messages: Sequence[Message], tools: Sequence[ToolDefinition], _: CompletionOptions
    ) -> ScriptStep:
        prompt = next(m.text for m in reversed(messages) if m.role is Role.USER)
        if messages[-1].role is Role.USER and prompt.endswith("tool"):
            return ScriptStep(tool_calls=[ToolCall(f"call-{prompt}", "add", {"a": 1, "b": 2})])
        return ScriptStep(text=reply_to(prompt), wait=holds.get(prompt, 0.0))

    store = SQLiteSessionStore(path=path, lease_timeout=lease_timeout)
    agent = gmi(model=ScriptedModel(answer), tools=[add], store=store, fallback_providers=[])
    session = agent.session(SESSION)
    for index in range(count):
        prompt = f"{name}-{index}" + (" tool" if index % 5 == 0 else "")
        # Most turns are quick; one in six holds the session past the other's lease timeout.
        holds[prompt] = lease_timeout * 2 if rng.random() < 1 / 6 else rng.uniform(0, 0.03)
        try:
            await session.send(prompt)
            outcome = "landed"
        except GMIError as error:
            if error.code != GMIErrorCode.SESSION_BUSY or SESSION not in error.message:
                raise
            outcome = "busy"
        print(json.dumps({"prompt": prompt, "outcome": outcome}), flush=True)
        await asyncio.sleep(rng.uniform(0, 0.03))
    store.close()


if __name__ == "__main__":
    db, who, seed_text, count_text, timeout_text = sys.argv[1:6]
    asyncio.run(main(Path(db), who, int(seed_text), int(count_text), float(timeout_text)))
