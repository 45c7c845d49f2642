"""Emergent capabilities: specialists a manager agent creates while it works.

`SpecialistForge` checks a ``spawn_specialist`` request (cap, roles, instructions, an optional
judge); `spawn_specialist_tool()` is the tool a hierarchical agency's manager calls.
`forge_tool_tool()` builds ``forge_tool``: a new tool composed of existing ones (or Python code run
in a bubblewrap `PythonSandbox`, where the host allows it), tested and judged before it joins the
session's `ForgedToolRegistry`.
"""

from agentos.emergent.forge import (
    ForgeCandidate,
    ForgedToolRegistry,
    ForgeJudge,
    ForgeOptions,
    ForgeRejected,
    forge_tool_tool,
)
from agentos.emergent.sandbox import (
    PythonSandbox,
    SandboxError,
    SandboxLimits,
    SandboxUnavailable,
)
from agentos.emergent.specialists import (
    DEFAULT_MAX_SPECIALISTS,
    MAX_INSTRUCTIONS_CHARS,
    RESERVED_ROLES,
    SpecialistForge,
    SpecialistJudge,
    SpecialistRefused,
    SpecialistSpec,
    delegate_tool_name,
    spawn_specialist_tool,
)

__all__ = [
    "DEFAULT_MAX_SPECIALISTS",
    "MAX_INSTRUCTIONS_CHARS",
    "RESERVED_ROLES",
    "ForgeCandidate",
    "ForgeJudge",
    "ForgeOptions",
    "ForgeRejected",
    "ForgedToolRegistry",
    "PythonSandbox",
    "SandboxError",
    "SandboxLimits",
    "SandboxUnavailable",
    "SpecialistForge",
    "SpecialistJudge",
    "SpecialistRefused",
    "SpecialistSpec",
    "delegate_tool_name",
    "forge_tool_tool",
    "spawn_specialist_tool",
]
