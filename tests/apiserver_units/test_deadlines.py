"""filters.Deadlines: request deadlines kept per slot, one timer per slot instead of one per request."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import pytest

from samplecontroller.apiserver.filters import Deadlines, RequestExpiry


async def _sleep_within(deadlines: Deadlines, limit: float, sleep: float) -> float:
    """Sleep ``sleep`` seconds under a deadline ``limit`` seconds away; the seconds it took."""
    started = time.monotonic()
    timeout = asyncio.timeout(None)
    async with timeout:
        slot = deadlines.file(timeout, limit)
        try:
            await asyncio.sleep(sleep)
        finally:
            deadlines.unfile(slot, timeout)
    return time.monotonic() - started


def test_a_request_past_its_deadline_gets_timeout_error_at_most_a_slot_late() -> None:
    async def main() -> float:
        deadlines = Deadlines()
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await _sleep_within(deadlines, 0.2, 30)
        return time.monotonic() - started

    elapsed = asyncio.run(main())
    assert 0.2 <= elapsed < 0.2 + Deadlines.SLOT + 1.0  # the loaded machine's scheduling slack on top


def test_requests_answered_in_time_are_not_expired_by_their_slot_later() -> None:
    async def main() -> None:
        deadlines = Deadlines()
        assert await _sleep_within(deadlines, 0.05, 0) < 0.05
        await asyncio.sleep(0.05 + 2 * Deadlines.SLOT)  # the slot's timer fires: nothing is filed there any more
        assert deadlines._slots == {}
        assert await _sleep_within(deadlines, 5, 0.01) >= 0.01  # the next request is unaffected

    asyncio.run(main())


def test_requests_of_one_slot_share_one_timer() -> None:
    async def main() -> tuple[int, int]:
        deadlines = Deadlines()
        loop = asyncio.get_running_loop()
        timers = len(loop._scheduled)  # type: ignore[attr-defined]
        gate = asyncio.Event()

        async def request() -> None:
            timeout = asyncio.timeout(None)
            async with timeout:
                slot = deadlines.file(timeout, 60)
                try:
                    await gate.wait()
                finally:
                    deadlines.unfile(slot, timeout)

        tasks = [asyncio.create_task(request()) for _ in range(200)]
        await asyncio.sleep(0)
        added = len(loop._scheduled) - timers  # type: ignore[attr-defined]
        gate.set()
        await asyncio.gather(*tasks)
        return added, sum(len(members) for members in deadlines._slots.values())

    added, still_filed = asyncio.run(main())
    assert added <= 2  # 200 requests within one loop turn: one slot (two if the turn straddles a slot's end)
    assert still_filed == 0


async def _request_within(deadlines: Deadlines, limit: float, work: Callable[[], Awaitable[str]]) -> str:
    """``work`` under a deadline ``limit`` seconds away, as the filter chain runs a request."""
    expiry = RequestExpiry()
    slot = deadlines.file(expiry, limit)
    try:
        result = await work()
    except asyncio.CancelledError:
        if not expiry.settle(cancelled=True):
            raise
        return "timed out"
    else:
        expiry.settle(cancelled=False)
        return result
    finally:
        deadlines.unfile(slot, expiry)


def test_a_request_expiry_times_out_the_request_past_its_deadline_only() -> None:
    async def slow() -> str:
        await asyncio.sleep(30)
        return "answered"

    async def quick() -> str:
        await asyncio.sleep(0)
        return "answered"

    async def main() -> tuple[str, str, int]:
        deadlines = Deadlines()
        late = await _request_within(deadlines, 0.1, slow)
        in_time = await _request_within(deadlines, 0.1, quick)
        task = asyncio.current_task()
        assert task is not None
        return late, in_time, task.cancelling()

    assert asyncio.run(main()) == ("timed out", "answered", 0)  # the cancellation taken back: none pending


def test_a_request_expiry_leaves_another_cancellation_to_its_caller() -> None:
    """The connection's task cancelled for another reason too (its client went away) while the
    deadline passed: the request is not answered with a timeout, the cancellation goes on."""
    async def main() -> None:
        deadlines = Deadlines()
        gate = asyncio.Event()

        async def request() -> str:
            async def work() -> str:
                gate.set()
                await asyncio.sleep(30)
                return "answered"
            return await _request_within(deadlines, 60, work)

        task = asyncio.create_task(request())
        await gate.wait()
        for slot in list(deadlines._slots):
            deadlines._expire(slot)  # the deadline passes: the task is cancelled once
        task.cancel()  # and once more, by someone else, before it runs again
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_a_request_that_swallows_its_expiry_is_answered_and_its_cancellation_taken_back() -> None:
    async def stubborn() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            pass
        return "answered anyway"

    async def main() -> tuple[str, int]:
        result = await _request_within(Deadlines(), 0.1, stubborn)
        task = asyncio.current_task()
        assert task is not None
        return result, task.cancelling()

    assert asyncio.run(main()) == ("answered anyway", 0)
