"""Consolidation: the memory's offline cycle (reference §1.20; spec: Cognitive memory).

`ConsolidationPipeline` runs one cycle (`agentos.memory.consolidation.pipeline` describes its
seven steps); each step that works on the graph is its own module (`replay`, `schemas`,
`conflicts`), and a cycle records what it changes in a `changes.CycleChanges` it persists at the
end. `agentos.memory.consolidation_loop.ConsolidationLoop` runs cycles on a timer.
"""

from agentos.memory.consolidation.config import ConsolidationConfig, ConsolidationResult
from agentos.memory.consolidation.pipeline import ConsolidationPipeline
from agentos.memory.consolidation.schemas import (
    SCHEMA_SYSTEM_PROMPT,
    SCHEMA_TAGS,
    Embed,
    schema_prompt,
)

__all__ = [
    "SCHEMA_SYSTEM_PROMPT",
    "SCHEMA_TAGS",
    "ConsolidationConfig",
    "ConsolidationPipeline",
    "ConsolidationResult",
    "Embed",
    "schema_prompt",
]
