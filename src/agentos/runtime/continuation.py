"""What the full runtime checks and takes before it continues a paused turn.

`take_pause` is the start of `AgentOS.handle_tool_results()`: the session's pending request is
taken exactly once, after every result is checked against it. `continuation_namespace` is the
namespace the continuation runs under (spec "Learning": Learners: "A tool continuation belongs
to the turn it continues; one that runs under another organization than its turn (a resume whose
host passes another organizationId) is a turn of another namespace"): the organization the host
passes, resolved as a request's is (else the runtime's ``default_organization_id``), else the
paused turn's own, which the pause keeps (`ToolPause.organization_id`), so a GMI built again
after a restart binds its learner under the paused turn's namespace.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentos.core.errors import GMIError, GMIErrorCode
from agentos.core.messages import ToolResult
from agentos.storage import ToolPause, ToolPauseStore
from agentos.substrate.tool_continuation import continuation_input

__all__ = ["check_organization_id", "continuation_namespace", "take_pause"]


def check_organization_id(organization_id: object) -> None:
    """Refuse an ``organization_id`` that is neither ``None`` nor a string.

    ``INVALID_ARGUMENT`` naming ``organization_id``, before any work.
    """
    if organization_id is not None and not isinstance(organization_id, str):
        raise GMIError(
            f"organization_id: must be a string or None, got {type(organization_id).__name__}",
            GMIErrorCode.INVALID_ARGUMENT,
            {"option": "organization_id"},
        )


def continuation_namespace(
    organization_id: str | None, pause: ToolPause, default_organization_id: str | None
) -> str:
    """The namespace the continuation of ``pause`` runs under (``''``: none); see the module doc.

    ``organization_id`` ``None`` (the host passed none) keeps the paused turn's; a pause saved
    before pauses kept one falls back to ``default_organization_id``, as its turn resolved it.
    """
    if organization_id is None:
        return pause.organization_id or default_organization_id or ""
    return organization_id or default_organization_id or ""


async def take_pause(
    pauses: ToolPauseStore, session_id: str, user_id: str, results: Sequence[ToolResult]
) -> tuple[ToolPause, tuple[ToolResult, ...]]:
    """Take the session's pending request; return it and every call's answer.

    The answers are ``results`` followed by an ``EXTERNAL_TOOL_NOT_RUN`` error result for each
    call the host left out, as the conversation keeps them. Raises ``INVALID_STATE`` when the
    session has no pending request (or another caller took it first) and ``VALIDATION_ERROR``
    when a result answers no call of it, or one call twice, before the request is taken.
    """
    pause = await pauses.load(session_id, user_id=user_id)
    if pause is None:
        raise GMIError(
            f"session {session_id!r} has no pending external tool request",
            GMIErrorCode.INVALID_STATE,
            {"option": "session_id"},
        )
    unknown = [r.tool_call_id for r in results if r.tool_call_id not in pause.tool_call_ids]
    if not results or unknown:
        raise GMIError(
            f"results: {unknown or 'none'} do not answer the pending request's calls",
            GMIErrorCode.VALIDATION_ERROR,
            {"option": "results", "pending": list(pause.tool_call_ids)},
        )
    # Duplicates are refused here, before the pause is taken.
    answered = continuation_input(list(pause.tool_calls), results, user_id).tool_results or ()
    taken = await pauses.take(session_id, user_id=user_id, interaction_id=pause.interaction_id)
    if taken is None:
        raise GMIError(
            f"session {session_id!r}: the pending request was already answered",
            GMIErrorCode.INVALID_STATE,
            {"option": "session_id"},
        )
    return taken, tuple(answered)
