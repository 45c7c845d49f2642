"""The full runtime (spec: AgentOS, GMIManager, processRequest; DESIGN.md §3, rank 6).

`AgentOS` streams each request's `AgentOSResponse` chunks (`agentos.runtime.agentos`), built from
`AgentOSConfig` (`create_agentos_config()` reads the environment) over `GMIManager`
(`agentos.substrate.gmi_manager`). Its parts: the request (`AgentOSInput`, `parse_request`), the
chunk types and `GMIChunkTransformer`, the stored conversations, the retrieval augmentor that
ships (`agentos.runtime.retrieval`) and the guardrails (`agentos.runtime.guardrails`).
"""

from agentos.runtime.agentos import AgentOS
from agentos.runtime.chunks import (
    AgentOSResponse,
    AgentOSResponseChunkType,
    ErrorChunk,
    FinalResponseChunk,
    MetadataUpdateChunk,
    SystemProgressChunk,
    TextDeltaChunk,
    ToolCallRequestChunk,
    ToolResultEmissionChunk,
    UiCommandChunk,
    dump_response,
)
from agentos.runtime.config import AgentOSConfig, create_agentos_config
from agentos.runtime.discovery import CapabilityDiscovery, KeywordCapabilityDiscovery
from agentos.runtime.request import AgentOSInput, RequestOptions, parse_request
from agentos.runtime.transformer import GMIChunkTransformer

__all__ = [
    "AgentOS",
    "AgentOSConfig",
    "AgentOSInput",
    "AgentOSResponse",
    "AgentOSResponseChunkType",
    "CapabilityDiscovery",
    "ErrorChunk",
    "FinalResponseChunk",
    "GMIChunkTransformer",
    "KeywordCapabilityDiscovery",
    "MetadataUpdateChunk",
    "RequestOptions",
    "SystemProgressChunk",
    "TextDeltaChunk",
    "ToolCallRequestChunk",
    "ToolResultEmissionChunk",
    "UiCommandChunk",
    "create_agentos_config",
    "dump_response",
    "parse_request",
]
