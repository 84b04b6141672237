"""filters.Deadlines: request deadlines kept per slot, one timer per slot instead of one per request."""

from __future__ import annotations

import asyncio
import time

import pytest

from samplecontroller.apiserver.filters import Deadlines


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
