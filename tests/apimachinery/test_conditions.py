"""Status conditions: the cases of Go's apimachinery/pkg/api/meta conditions_test.go, on frozen
generated structs and on plain dicts, plus the time and change-detection contracts."""

from __future__ import annotations

import datetime
import re
from typing import Any

import msgspec
import pytest

from samplecontroller.apimachinery.conditions import (
    ConditionLike,
    find_status_condition,
    is_status_condition_false,
    is_status_condition_present_and_equal,
    is_status_condition_true,
    now,
    remove_status_condition,
    set_status_condition,
)
from samplecontroller.kubernetes.apis.meta.v1 import Condition

BEFORE = "2024-01-01T10:00:00Z"
AFTER = "2024-01-01T12:00:00Z"
NOW = "2024-01-01T11:00:00Z"


def c(type_: str, **fields: Any) -> Condition:
    return Condition(type=type_, **fields)


SET_CASES: list[tuple[str, tuple[Condition, ...], Condition, tuple[Condition, ...], bool]] = [
    (
        "should-add",
        (c("first"), c("third")),
        c("second", status="True", last_transition_time=BEFORE, reason="reason", message="message"),
        (c("first"), c("third"),
         c("second", status="True", last_transition_time=BEFORE, reason="reason", message="message")),
        True,
    ),
    (
        "use-supplied-time",
        (c("first"), c("second", status="False"), c("third")),
        c("second", status="True", last_transition_time=BEFORE, reason="reason", message="message"),
        (c("first"),
         c("second", status="True", last_transition_time=BEFORE, reason="reason", message="message"),
         c("third")),
        True,
    ),
    (
        "update-fields",
        (c("first"), c("second", status="True", last_transition_time=BEFORE), c("third")),
        c("second", status="True", last_transition_time=AFTER, reason="reason", message="message",
          observed_generation=3),
        (c("first"),
         c("second", status="True", last_transition_time=BEFORE, reason="reason", message="message",
           observed_generation=3),
         c("third")),
        True,
    ),
    (
        "nothing-changes",
        (c("first", status="True", last_transition_time=BEFORE, reason="r", message="m",
           observed_generation=2),),
        c("first", status="True", last_transition_time=AFTER, reason="r", message="m",
          observed_generation=2),
        (c("first", status="True", last_transition_time=BEFORE, reason="r", message="m",
           observed_generation=2),),
        False,
    ),
    (
        "status-change-without-time-uses-now",
        (c("first", status="False", last_transition_time=BEFORE, reason="Old"),),
        c("first", status="True", reason="New"),
        (c("first", status="True", last_transition_time=NOW, reason="New"),),
        True,
    ),
    (
        "add-without-time-uses-now",
        (),
        c("first", status="Unknown"),
        (c("first", status="Unknown", last_transition_time=NOW),),
        True,
    ),
    (
        "unset-and-empty-are-equal",
        (c("first", status="True", last_transition_time=BEFORE),),
        c("first", status="True", reason="", message="", observed_generation=0),
        (c("first", status="True", last_transition_time=BEFORE),),
        False,
    ),
    (
        "cleared-reason-becomes-unset",
        (c("first", status="True", last_transition_time=BEFORE, reason="Was"),),
        c("first", status="True"),
        (c("first", status="True", last_transition_time=BEFORE),),
        True,
    ),
]


@pytest.mark.parametrize(("existing", "new", "expected", "changed"),
                         [case[1:] for case in SET_CASES], ids=[case[0] for case in SET_CASES])
def test_set_status_condition(existing: tuple[Condition, ...], new: Condition,
                              expected: tuple[Condition, ...], changed: bool) -> None:
    assert set_status_condition(existing, new, now=NOW) == (expected, changed)


@pytest.mark.parametrize(("existing", "new", "expected", "changed"),
                         [case[1:] for case in SET_CASES], ids=[case[0] for case in SET_CASES])
def test_set_status_condition_on_dicts(existing: tuple[Condition, ...], new: Condition,
                                       expected: tuple[Condition, ...], changed: bool) -> None:
    def wire(condition: Condition) -> dict[str, Any]:
        result: dict[str, Any] = msgspec.to_builtins(condition)
        return result

    result, was_changed = set_status_condition([wire(x) for x in existing], wire(new), now=NOW)
    assert (result, was_changed) == (tuple(wire(x) for x in expected), changed)


def test_set_status_condition_keeps_the_input_unchanged() -> None:
    existing = [c("first", status="False", last_transition_time=BEFORE)]
    set_status_condition(existing, c("first", status="True"), now=NOW)
    assert existing == [c("first", status="False", last_transition_time=BEFORE)]


def test_set_status_condition_on_unset_or_none_conditions() -> None:
    assert set_status_condition(msgspec.UNSET, c("a", status="True"), now=NOW) == (
        (c("a", status="True", last_transition_time=NOW),), True)
    assert set_status_condition(None, c("a", status="True"), now=NOW)[1]


def test_set_status_condition_defaults_to_the_wall_clock() -> None:
    (added,), _ = set_status_condition((), c("a", status="True"))
    assert isinstance(added.last_transition_time, str)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", added.last_transition_time)


def test_now_is_rfc3339_seconds_utc() -> None:
    value = now()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", value)
    parsed = datetime.datetime.fromisoformat(value)
    assert parsed.utcoffset() == datetime.timedelta(0)


def test_remove_status_condition() -> None:
    three = (c("first"), c("second"), c("third"))
    assert remove_status_condition(three, "second") == ((c("first"), c("third")), True)
    assert remove_status_condition(three, "fourth") == (three, False)
    assert remove_status_condition((), "Foo") == ((), False)
    assert remove_status_condition(msgspec.UNSET, "Foo") == ((), False)
    assert remove_status_condition([{"type": "a"}, {"type": "b"}], "a") == (({"type": "b"},), True)


def test_find_status_condition() -> None:
    assert find_status_condition((c("first"),), "second") is None
    assert find_status_condition((c("first"), c("second")), "second") == c("second")
    assert find_status_condition(msgspec.UNSET, "second") is None
    assert find_status_condition([{"type": "x", "status": "True"}], "x") == {"type": "x", "status": "True"}


@pytest.mark.parametrize(("conditions", "status", "expected"), [
    ((c("first", status="Unknown"),), "True", False),
    ((c("first", status="True"),), "True", True),
    ((c("first", status="False"),), "False", True),
    ((), "True", False),
])
def test_is_status_condition_present_and_equal(conditions: tuple[Condition, ...], status: str,
                                               expected: bool) -> None:
    assert is_status_condition_present_and_equal(conditions, "first", status) is expected


def test_is_status_condition_true_and_false() -> None:
    conditions = (c("Ready", status="True"), c("Degraded", status="False"), c("Other", status="Unknown"))
    assert is_status_condition_true(conditions, "Ready")
    assert not is_status_condition_false(conditions, "Ready")
    assert is_status_condition_false(conditions, "Degraded")
    assert not is_status_condition_true(conditions, "Other")
    assert not is_status_condition_false(conditions, "Other")
    assert not is_status_condition_true(conditions, "Missing")
    assert not is_status_condition_false(conditions, "Missing")
    assert is_status_condition_true([{"type": "Ready", "status": "True"}], "Ready")


class RequiredCondition(msgspec.Struct, frozen=True, kw_only=True):
    """A CRD's own condition struct with required fields: it satisfies ConditionLike too."""

    type: str
    status: str
    reason: str = ""
    message: str = ""
    observed_generation: int = 0
    last_transition_time: str = ""


def test_a_struct_with_required_fields_works_and_keeps_its_type() -> None:
    conditions: tuple[RequiredCondition, ...] = (RequiredCondition(type="Ready", status="False"),)
    updated, changed = set_status_condition(conditions, RequiredCondition(type="Ready", status="True"), now=NOW)
    assert changed
    assert updated == (RequiredCondition(type="Ready", status="True", last_transition_time=NOW),)
    like: ConditionLike = updated[0]
    assert like.status == "True"
