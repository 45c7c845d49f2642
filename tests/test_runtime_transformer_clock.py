"""`GMIChunkTransformer`'s ``clock`` check: any `Clock` is taken, anything else refused, every time.

The check is remembered per class (a runtime-checkable protocol's isinstance() is slow), so these
tests pin that remembering never lets a non-clock through: not after a clock of another class
was taken, and not for an object whose members live on the instance rather than its class.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from agentos.core.clock import system_clock
from agentos.core.errors import GMIError, GMIErrorCode
from agentos.runtime.transformer import GMIChunkTransformer
from agentos.testing import FakeClock


def _make(clock: Any) -> GMIChunkTransformer:
    return GMIChunkTransformer(
        stream_id="s1_turn_1",
        gmi_instance_id="gmi-1",
        persona_id="helper",
        session_id="s1",
        clock=clock,
    )


def _refused(clock: Any) -> None:
    with pytest.raises(GMIError) as caught:
        _make(clock)
    assert caught.value.code is GMIErrorCode.INVALID_ARGUMENT
    assert caught.value.details == {"option": "clock"}


async def _sleep(_seconds: float) -> None:
    return None


def _namespace_clock() -> SimpleNamespace:
    return SimpleNamespace(
        now=system_clock.now,
        timestamp=lambda: 12.5,
        monotonic=lambda: 1.0,
        sleep=_sleep,
    )


@pytest.mark.parametrize("clock", [None, 3.0, "clock", object(), SimpleNamespace(now=lambda: 0)])
def test_a_value_that_is_not_a_clock_is_refused_naming_the_option(clock: Any) -> None:
    _make(FakeClock())  # a clock of another class taken first changes nothing
    _make(system_clock)
    _refused(clock)
    _refused(clock)  # and a second time alike


def test_a_clock_is_taken_every_time_and_stamps_the_chunks() -> None:
    clock = FakeClock()
    for _ in range(3):
        delta = _make(clock).text_delta("hi")
        assert delta.timestamp == clock.timestamp()


def test_members_on_the_instance_count_for_that_instance_only() -> None:
    stamped = _make(_namespace_clock()).text_delta("hi")
    assert stamped.timestamp == 12.5
    _refused(SimpleNamespace(now=system_clock.now, timestamp=lambda: 1.0))
    assert _make(_namespace_clock()).text_delta("again").timestamp == 12.5
