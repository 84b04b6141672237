"""Property tests of the correlator: the spam filter's budget and the aggregation bound."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from samplecontroller.record import EventCorrelator
from tests.record.conftest import FakeClock


def _event(obj: int, reason: int, message: int) -> dict[str, Any]:
    return {"metadata": {"name": f"o{obj}.{reason}.{message}", "namespace": "default"}, "type": "Normal",
            "involvedObject": {"kind": "Foo", "name": f"o{obj}", "namespace": "default"},
            "source": {"component": "c"}, "reason": f"r{reason}", "message": f"m{message}", "count": 1}


steps = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3), st.integers(0, 15),
                           st.floats(0, 120, allow_nan=False)), max_size=150)


@settings(max_examples=60, deadline=None)
@given(steps)
def test_spam_filter_never_exceeds_burst_plus_refill(seq: list[tuple[int, int, int, float]]) -> None:
    clock = FakeClock()
    start = clock()
    c = EventCorrelator(clock, burst=5, qps=1 / 60)
    passed: dict[int, int] = {}
    for obj, reason, message, dt in seq:
        clock.step(dt)
        if not c.correlate(_event(obj, reason, message)).skip:
            passed[obj] = passed.get(obj, 0) + 1
    budget = 5 + (clock() - start) / 60
    assert all(n <= budget for n in passed.values())
    if seq and all(dt == 0 for *_, dt in seq):
        assert all(n == min(5, sum(1 for o, *_ in seq if o == obj)) for obj, n in passed.items())


@settings(max_examples=60, deadline=None)
@given(steps)
def test_aggregation_after_max_distinct_messages(seq: list[tuple[int, int, int, float]]) -> None:
    clock = FakeClock()
    c = EventCorrelator(clock, burst=10_000, max_events=4, max_interval=1e9)
    seen: dict[tuple[int, int], set[int]] = {}
    aggregates: dict[tuple[int, int], set[str]] = {}
    created: set[str] = set()
    for obj, reason, message, dt in seq:
        clock.step(dt)
        result = c.correlate(_event(obj, reason, message))
        assert not result.skip
        ev, group = result.event, seen.setdefault((obj, reason), set())
        combined = ev["message"].startswith("(combined from similar events): ")
        if message not in group and len(group) >= 3:
            assert combined  # a new message once 4 distinct ones were seen in the window
        if len(group | {message}) < 4:
            assert not combined
        group.add(message)
        name = ev["metadata"]["name"]
        if combined:
            aggregates.setdefault((obj, reason), set()).add(name)
        if result.patch is None:
            assert ev["count"] == 1 and name not in created
            created.add(name)
        else:
            assert ev["count"] > 1 and name in created
    assert all(len(names) == 1 for names in aggregates.values())  # one aggregate per group, then patches


def test_correlating_a_repeat_leaves_the_given_event_as_it_was() -> None:
    # The broadcaster hands one event dict to every watcher: the correlator copies what it changes.
    c = EventCorrelator(FakeClock())
    c.correlate(_event(0, 0, 0))
    repeat = _event(0, 0, 0)
    repeat["metadata"]["name"] = "o0.new"
    before = repr(repeat)
    result = c.correlate(repeat)
    assert result.event["count"] == 2 and result.event["metadata"]["name"] == "o0.0.0" and result.patch
    assert repr(repeat) == before
