"""A full-runtime turn that pauses for an external tool, run in a process of its own.

`start_runtime()` builds an `AgentOS` on a SQLite file whose model (`PAUSE_STEP`) answers
`QUESTION` with some text and one call of the host's tool `WEATHER`, so the turn pauses for the
host. Run as a script (``python runtime_pause_child.py DB MODE``) it plays that turn, prints the
actionable TOOL_CALL_REQUEST it read as one JSON line (`dump_response`), then, by ``MODE``:

- ``drain``: reads the stream to its end, shuts the runtime down, exits 0;
- ``stop``: stops reading at the request (spec: "the host stops reading at the first request
  it acts on"), shuts the runtime down, exits 0;
- ``kill``: SIGKILLs itself right after reading the request (nothing shut down or flushed).

A stream with no actionable request exits 3. The lifecycle tests then open the same file in a
new runtime and continue the pause there (`tests/test_runtime_lifecycle.py`).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from agentos.core.messages import ToolCall
from agentos.llm.model import ToolDefinition
from agentos.persona.definition import PersonaDefinition
from agentos.runtime import AgentOS, ToolCallRequestChunk, create_agentos_config, dump_response
from agentos.testing import ScriptedModel, ScriptStep

__all__ = [
    "MODES",
    "PAUSE_STEP",
    "PERSONA",
    "QUESTION",
    "SESSION",
    "USER",
    "WEATHER",
    "WEATHER_CALL",
    "start_runtime",
]

PERSONA = PersonaDefinition(id="helper", name="Helper", base_system_prompt="You are Helper.")
WEATHER = ToolDefinition(
    "weather",
    "Today's weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
WEATHER_CALL = ToolCall("w1", "weather", {"city": "Oslo"})
PAUSE_STEP = ScriptStep(text="Let me check.", tool_calls=[WEATHER_CALL])
"""The paused round: the model's text and its one call of the host's tool."""

USER = "user-42"
SESSION = "trip-session"
QUESTION = "What is the weather in Oslo?"
MODES = ("drain", "stop", "kill")


async def start_runtime(database: Path, model: ScriptedModel, **overrides: Any) -> AgentOS:
    """An initialized runtime on ``database`` (SQLite) with the host's ``weather`` tool."""
    settings: dict[str, Any] = {
        "personas": [PERSONA],
        "default_persona_id": PERSONA.id,
        "model": model,
        "utility_ai": "statistical",
        "external_tools": [WEATHER],
        "conversation_store": "sqlite",
        "database_path": database,
    }
    settings.update(overrides)
    runtime = AgentOS()
    await runtime.initialize(create_agentos_config(environ={}, **settings))
    return runtime


async def main(database: Path, mode: str) -> int:
    """Play the paused turn as ``mode`` says (see the module doc); the exit status."""
    runtime = await start_runtime(database, ScriptedModel([PAUSE_STEP]))
    request = {"user_id": USER, "session_id": SESSION, "text_input": QUESTION}
    read = False
    async for chunk in runtime.process_request(request):
        if isinstance(chunk, ToolCallRequestChunk) and chunk.actionable:
            print(json.dumps(dump_response(chunk)), flush=True)
            read = True
            if mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if mode == "stop":
                break
    await runtime.shutdown()
    return 0 if read else 3


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in MODES:
        sys.exit(f"usage: {Path(__file__).name} DATABASE {{{','.join(MODES)}}}")
    sys.exit(asyncio.run(main(Path(sys.argv[1]), sys.argv[2])))
