"""A tool the host runs: the turn pauses, the process ends, a new process resumes it.

The runtime declares ``approve_refund`` as an external tool (DESIGN §5.24): a turn whose model
calls it pauses, the pending request is saved in the SQLite database before the host reads it,
and this first process exits. A second process opens the same database, finds the pending
request, runs the tool (here: a human's answer, scripted) and continues the turn.

    python examples/runtime_external_tools.py            # on the local model
    python examples/runtime_external_tools.py --scripted # on a scripted model (no weights)

Both phases run as real processes: ``--phase ask`` and ``--phase resume`` (what ``main`` runs).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from agentos import BUILT_IN_PERSONAS
from agentos.core.messages import ToolCall, ToolResult
from agentos.llm.model import ChatModel, ToolDefinition
from agentos.runtime import AgentOS, AgentOSResponseChunkType, ToolCallRequestChunk
from agentos.testing import ScriptedModel, ScriptStep

APPROVE = ToolDefinition(
    "approve_refund",
    "Ask a human to approve a refund; returns 'approved' or 'denied'.",
    {
        "type": "object",
        "properties": {"amount": {"type": "number"}},
        "required": ["amount"],
    },
)
REQUEST = {
    "user_id": "user-42",
    "session_id": "refund-1",
    "selected_persona_id": "v_researcher",
    "text_input": "Please refund my order of 30 dollars.",
}


def _model(scripted: bool, phase: str) -> ChatModel | None:
    if not scripted:
        return None  # the local model
    if phase == "ask":
        call = ToolCall("call-1", "approve_refund", {"amount": 30})
        return ScriptedModel([ScriptStep(tool_calls=[call])])
    return ScriptedModel(["Your refund of 30 dollars was approved."])


async def _runtime(database: Path, model: ChatModel | None) -> AgentOS:
    return await AgentOS.create(
        personas=BUILT_IN_PERSONAS,
        provider="local" if model is None else None,
        model=model,
        utility_ai="statistical",
        external_tools=[APPROVE],
        conversation_store="sqlite",
        database_path=database,
    )


async def ask(database: Path, model: ChatModel | None) -> list[str]:
    """Phase 1: run the turn until it pauses for the host; return the tools it asked for."""
    runtime = await _runtime(database, model)
    asked: list[str] = []
    async for chunk in runtime.process_request(REQUEST):
        if isinstance(chunk, ToolCallRequestChunk) and chunk.actionable:
            asked = [call.name for call in chunk.tool_calls]
        elif chunk.type is AgentOSResponseChunkType.TEXT_DELTA:
            print(chunk.text_delta, end="")
    await runtime.shutdown()
    print(f"paused for: {asked}")
    return asked


async def resume(database: Path, model: ChatModel | None) -> str:
    """Phase 2, a new process: answer the saved request and stream the rest of the turn."""
    runtime = await _runtime(database, model)
    pause = await runtime.get_pending_external_tool_request("refund-1", user_id="user-42")
    if pause is None:
        await runtime.shutdown()
        return ""
    results = [ToolResult(call.id, call.name, "approved") for call in pause.tool_calls]
    reply: list[str] = []
    async for chunk in runtime.handle_tool_results("refund-1", "user-42", results):
        if chunk.type is AgentOSResponseChunkType.TEXT_DELTA:
            reply.append(chunk.text_delta)
    await runtime.shutdown()
    print(f"resumed: {''.join(reply)}")
    return "".join(reply)


def main(scripted: bool = False, directory: str | None = None) -> str:
    """Run ``ask`` in a child process, then ``resume`` in another; return the final reply."""
    with tempfile.TemporaryDirectory() as scratch:
        database = Path(directory or scratch) / "agentos.db"
        for phase in ("ask", "resume"):
            command = [sys.executable, __file__, "--phase", phase, "--database", str(database)]
            if scripted:
                command.append("--scripted")
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            print(done.stdout, end="")
        return done.stdout.rsplit("resumed: ", 1)[-1].strip()


def _cli(argv: list[str] | None = None) -> Any:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--phase", choices=("ask", "resume"))
    parser.add_argument("--database", type=Path)
    parser.add_argument("--scripted", action="store_true")
    args = parser.parse_args(argv)
    if args.phase is None:
        return main(args.scripted)
    model = _model(args.scripted, args.phase)
    if args.phase == "ask":
        return asyncio.run(ask(args.database, model))
    return asyncio.run(resume(args.database, model))


if __name__ == "__main__":
    _cli()
