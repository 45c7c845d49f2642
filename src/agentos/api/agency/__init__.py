"""`agency()`: a roster of agents working one task under a strategy (spec: Multi-agent work).

`agency()` builds an `Agency`; its ``generate()`` / a session's ``send()`` return an
`AgencyResult` (text, agent calls, usage), ``stream()`` an `AgencyStreamResult` whose events are
`AgentStarted`, `AgentTextDelta`, `AgentFinished` and `AgencyFinished`. Bad options raise
`AgencyConfigError` naming the field.
"""

from __future__ import annotations

from .agency import Agency, AgencySession, agency
from .config import AgencyConfigError, AgencyPlan, Member
from .controls import AgencyLimitError, AgencyLimitWarning, Controls
from .parallel import AgencyQuorumError
from .results import (
    AgencyEvent,
    AgencyFinished,
    AgencyResult,
    AgencyStreamResult,
    AgentCall,
    AgentFinished,
    AgentStarted,
    AgentTextDelta,
)
from .run import SKIPPED_BY_HITL, AgencyMemberError, AgencyRun

__all__ = [
    "SKIPPED_BY_HITL",
    "Agency",
    "AgencyConfigError",
    "AgencyEvent",
    "AgencyFinished",
    "AgencyLimitError",
    "AgencyLimitWarning",
    "AgencyMemberError",
    "AgencyPlan",
    "AgencyQuorumError",
    "AgencyResult",
    "AgencyRun",
    "AgencySession",
    "AgencyStreamResult",
    "AgentCall",
    "AgentFinished",
    "AgentStarted",
    "AgentTextDelta",
    "Controls",
    "Member",
    "agency",
]
