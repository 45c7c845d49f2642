"""`agentos.testing.FakeClock` and the `Clock` protocol it shares with `SystemClock`."""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentos.core import Clock, SystemClock, system_clock
from agentos.testing import FakeClock

START = datetime(2026, 1, 1, tzinfo=UTC)


async def start_sleeper(clock: FakeClock, seconds: float, log: list[float]) -> asyncio.Task[None]:
    """A task that sleeps ``seconds`` on ``clock`` then logs them; returns once it is waiting."""

    async def sleeper() -> None:
        await clock.sleep(seconds)
        log.append(seconds)

    task = asyncio.create_task(sleeper())
    await asyncio.sleep(0)
    return task


async def settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


# --- reading the time ------------------------------------------------------------------------


def test_starts_at_new_year_2026_utc_with_monotonic_zero() -> None:
    clock = FakeClock()
    assert clock.now() == START
    assert clock.now().tzinfo is UTC
    assert clock.timestamp() == START.timestamp()
    assert clock.monotonic() == 0.0
    assert clock.sleepers == 0


def test_start_can_be_given_and_is_converted_to_utc() -> None:
    paris_noon = datetime(2025, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    clock = FakeClock(paris_noon)
    assert clock.now() == datetime(2025, 6, 1, 10, 0, tzinfo=UTC)
    assert clock.now().tzinfo is UTC


def test_naive_start_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        FakeClock(datetime(2026, 1, 1))


def test_is_a_clock() -> None:
    assert isinstance(FakeClock(), Clock)


# --- advancing -------------------------------------------------------------------------------


def test_advance_by_seconds_moves_now_timestamp_and_monotonic_together() -> None:
    clock = FakeClock()
    clock.advance(90)
    assert clock.now() == START + timedelta(seconds=90)
    assert clock.timestamp() == START.timestamp() + 90
    assert clock.monotonic() == 90.0


def test_advance_by_a_timedelta() -> None:
    clock = FakeClock()
    clock.advance(timedelta(minutes=2, milliseconds=500))
    assert clock.now() == START + timedelta(seconds=120.5)
    assert clock.monotonic() == 120.5


def test_advance_by_days() -> None:
    clock = FakeClock()
    clock.advance(timedelta(days=61))
    clock.advance(3 * 86400)
    assert clock.now() == datetime(2026, 3, 6, tzinfo=UTC)
    assert clock.monotonic() == 64 * 86400.0
    assert clock.timestamp() - START.timestamp() == 64 * 86400.0


def test_advances_accumulate() -> None:
    clock = FakeClock()
    for _ in range(10):
        clock.advance(0.1)
    assert clock.monotonic() == 1.0
    assert clock.now() == START + timedelta(seconds=1)


def test_split_advances_agree_exactly_across_all_three_readings() -> None:
    # 0.1 + 0.7 is 0.7999999999999999 in floats; the clock still reads exactly 0.8 s later.
    clock = FakeClock()
    clock.advance(0.1)
    clock.advance(0.7)
    assert clock.monotonic() == 0.8
    assert clock.now() == START + timedelta(seconds=0.8)
    assert clock.now() - START == timedelta(seconds=clock.monotonic())


def test_advance_by_zero_changes_nothing() -> None:
    clock = FakeClock()
    clock.advance(0)
    clock.advance(timedelta(0))
    assert (clock.now(), clock.monotonic()) == (START, 0.0)


@pytest.mark.parametrize(
    "by",
    [-1, -0.5, timedelta(seconds=-1), timedelta(microseconds=-1)],
    ids=["-1s", "-0.5s", "timedelta-1s", "timedelta-1us"],
)
def test_negative_advance_is_refused_and_changes_nothing(by: float | timedelta) -> None:
    clock = FakeClock()
    clock.advance(5)
    with pytest.raises(ValueError, match="only moves forward"):
        clock.advance(by)
    assert (clock.now(), clock.monotonic()) == (START + timedelta(seconds=5), 5.0)


@pytest.mark.parametrize("by", [math.nan, math.inf])
def test_non_finite_advance_is_refused(by: float) -> None:
    clock = FakeClock()
    with pytest.raises(ValueError, match="finite"):
        clock.advance(by)
    assert clock.monotonic() == 0.0


# --- set -------------------------------------------------------------------------------------


def test_set_jumps_forward_and_moves_monotonic_by_the_same_amount() -> None:
    clock = FakeClock()
    clock.set(datetime(2026, 1, 8, 6, 30, tzinfo=UTC))
    assert clock.now() == datetime(2026, 1, 8, 6, 30, tzinfo=UTC)
    assert clock.monotonic() == 7 * 86400 + 6.5 * 3600


def test_set_accepts_other_timezones_and_keeps_utc() -> None:
    clock = FakeClock()
    clock.set(datetime(2026, 1, 1, 3, 0, tzinfo=timezone(timedelta(hours=2))))
    assert clock.now() == datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
    assert clock.now().tzinfo is UTC


def test_set_to_now_is_allowed() -> None:
    clock = FakeClock()
    clock.set(START)
    assert clock.now() == START


def test_set_to_the_past_is_refused() -> None:
    clock = FakeClock()
    with pytest.raises(ValueError, match="only moves forward"):
        clock.set(START - timedelta(seconds=1))
    assert clock.now() == START


def test_set_refuses_a_naive_datetime() -> None:
    clock = FakeClock()
    with pytest.raises(ValueError, match="timezone-aware"):
        clock.set(datetime(2026, 2, 1))
    assert clock.now() == START


# --- sleeping --------------------------------------------------------------------------------


async def test_sleep_waits_until_the_clock_reaches_its_deadline() -> None:
    clock = FakeClock()
    log: list[float] = []
    task = await start_sleeper(clock, 5, log)
    assert clock.sleepers == 1
    clock.advance(4.999999)
    await settle()
    assert not task.done()
    clock.advance(0.000001)
    await settle()
    assert task.done()
    assert log == [5]
    assert clock.sleepers == 0


async def test_sleep_wakes_when_advanced_past_its_deadline() -> None:
    clock = FakeClock()
    log: list[float] = []
    task = await start_sleeper(clock, 5, log)
    clock.advance(timedelta(days=1))
    await settle()
    assert task.done()


async def test_sleep_counts_from_when_it_started() -> None:
    clock = FakeClock()
    clock.advance(100)
    log: list[float] = []
    task = await start_sleeper(clock, 2, log)
    clock.advance(1)
    await settle()
    assert not task.done()
    clock.advance(1)
    await settle()
    assert task.done()


async def test_split_advances_wake_a_sleep_of_their_sum() -> None:
    clock = FakeClock()
    log: list[float] = []
    task = await start_sleeper(clock, 0.8, log)
    clock.advance(0.1)
    clock.advance(0.7)
    await settle()
    assert task.done()


async def test_sleepers_wake_in_deadline_order_not_start_order() -> None:
    clock = FakeClock()
    log: list[float] = []
    tasks = [await start_sleeper(clock, seconds, log) for seconds in (3, 1, 2.5, 10)]
    assert clock.sleepers == 4
    clock.advance(5)
    await settle()
    assert log == [1, 2.5, 3]
    assert clock.sleepers == 1
    assert not tasks[3].done()
    tasks[3].cancel()


async def test_sleepers_with_the_same_deadline_wake_in_start_order() -> None:
    clock = FakeClock()
    woke: list[str] = []

    async def sleeper(name: str) -> None:
        await clock.sleep(1)
        woke.append(name)

    tasks = [asyncio.create_task(sleeper(name)) for name in ("a", "b", "c")]
    await asyncio.sleep(0)
    clock.advance(1)
    await asyncio.gather(*tasks)
    assert woke == ["a", "b", "c"]


async def test_advance_wakes_only_the_sleepers_due() -> None:
    clock = FakeClock()
    log: list[float] = []
    short = await start_sleeper(clock, 1, log)
    long = await start_sleeper(clock, 60, log)
    clock.advance(30)
    await settle()
    assert (short.done(), long.done()) == (True, False)
    clock.advance(30)
    await settle()
    assert long.done()
    assert log == [1, 60]


@pytest.mark.parametrize("seconds", [0, -3])
async def test_sleep_of_zero_or_less_returns_without_advancing(seconds: float) -> None:
    clock = FakeClock()
    await clock.sleep(seconds)
    assert clock.monotonic() == 0.0
    assert clock.sleepers == 0


async def test_a_sleep_shorter_than_a_microsecond_waits_for_one() -> None:
    clock = FakeClock()
    log: list[float] = []
    task = await start_sleeper(clock, 1e-9, log)
    await settle()
    assert not task.done()
    clock.advance(timedelta(microseconds=1))
    await settle()
    assert task.done()


async def test_an_infinite_sleep_never_wakes() -> None:
    clock = FakeClock()
    log: list[float] = []
    task = await start_sleeper(clock, math.inf, log)
    clock.advance(timedelta(days=365 * 100))
    await settle()
    assert not task.done()
    task.cancel()
    await settle()
    assert clock.sleepers == 0


async def test_a_nan_sleep_is_refused_rather_than_never_waking() -> None:
    clock = FakeClock()
    task = asyncio.create_task(clock.sleep(math.nan))
    await settle()
    if not task.done():  # would wait forever: fail instead of hanging the suite
        task.cancel()
        pytest.fail("sleep(nan) is waiting")
    with pytest.raises(ValueError, match="finite"):
        task.result()
    assert clock.sleepers == 0


@given(st.lists(st.integers(min_value=1, max_value=10**8), min_size=1, max_size=6))
def test_a_sleep_wakes_exactly_when_the_advances_reach_its_duration(steps: list[int]) -> None:
    # steps are microseconds; the clock is advanced by them as float seconds.
    async def scenario() -> None:
        clock = FakeClock()
        log: list[float] = []
        task = await start_sleeper(clock, sum(steps) / 1_000_000, log)
        for step in steps:
            assert not task.done()
            await clock.advance_and_settle(step / 1_000_000)
        assert task.done()
        assert clock.now() - START == timedelta(microseconds=sum(steps))
        assert clock.monotonic() == sum(steps) / 1_000_000

    asyncio.run(scenario())


async def test_a_cancelled_sleeper_is_no_longer_counted_and_does_not_break_advance() -> None:
    clock = FakeClock()
    log: list[float] = []
    cancelled = await start_sleeper(clock, 1, log)
    kept = await start_sleeper(clock, 2, log)
    cancelled.cancel()
    await settle()
    assert clock.sleepers == 1
    clock.advance(2)
    await settle()
    assert cancelled.cancelled()
    assert kept.done()
    assert log == [2]


async def test_advance_and_settle_lets_the_woken_sleepers_run() -> None:
    clock = FakeClock()
    log: list[float] = []
    await start_sleeper(clock, 1, log)
    await start_sleeper(clock, 2, log)
    await clock.advance_and_settle(2)
    assert log == [1, 2]
    assert clock.monotonic() == 2.0


async def test_sleep_on_a_day_scale() -> None:
    clock = FakeClock()
    log: list[float] = []
    task = await start_sleeper(clock, 30 * 86400, log)
    await clock.advance_and_settle(timedelta(days=29))
    assert not task.done()
    await clock.advance_and_settle(timedelta(days=1))
    assert task.done()
    assert clock.now() == datetime(2026, 1, 31, tzinfo=UTC)


# --- SystemClock -----------------------------------------------------------------------------


def test_system_clock_is_a_clock() -> None:
    assert isinstance(SystemClock(), Clock)
    assert isinstance(system_clock, SystemClock)


def test_a_plain_object_is_not_a_clock() -> None:
    assert not isinstance(object(), Clock)


def test_system_clock_reads_aware_utc_time_and_a_monotonic_counter() -> None:
    clock = SystemClock()
    now = clock.now()
    assert now.tzinfo is UTC
    assert abs(clock.timestamp() - now.timestamp()) < 60
    first = clock.monotonic()
    assert clock.monotonic() >= first


async def test_system_clock_sleep_of_zero_returns() -> None:
    await SystemClock().sleep(0)
