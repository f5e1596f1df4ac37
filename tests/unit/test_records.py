"""``gateway.records.Fields``: fields declared once give a slotted class with a plain ``__init__``."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.decision import HandlerResult, Verdict
from gateway.records import Fields, fresh


class Point(Fields):
    x: int
    y: int = 0
    tags: list[str] = fresh(list)
    extra: dict[str, Any] = fresh(dict)


def test_fields_make_slots_and_an_init_in_declared_order() -> None:
    assert Point.__slots__ == ("x", "y", "tags", "extra")
    p = Point(1, 2, ["a"])
    assert (p.x, p.y, p.tags, p.extra) == (1, 2, ["a"], {})
    assert Point(x=3) == Point(3, 0, [], {})
    assert repr(Point(1)) == "Point(x=1, y=0, tags=[], extra={})"
    with pytest.raises(AttributeError):
        p.z = 1  # type: ignore[attr-defined]  # slotted: no stray attributes
    with pytest.raises(TypeError):
        Point(y=1)  # type: ignore[call-arg]  # x has no default
    with pytest.raises(TypeError):
        Point(1, w=2)  # type: ignore[call-arg]


def test_fresh_defaults_are_never_shared_and_none_gets_one_too() -> None:
    a, b = Point(1), Point(2, tags=None)  # type: ignore[arg-type]
    a.tags.append("mine")
    assert b.tags == [] and Point(3).tags == []
    assert Verdict().side_effects is not Verdict().side_effects
    assert HandlerResult(id="h", type="python", meta=None).meta == {}  # type: ignore[arg-type]


def test_replace_and_equality_follow_the_fields() -> None:
    v = Verdict(permission="deny", permission_reason="no")
    assert v.replace(permission_reason="why") == Verdict(permission="deny", permission_reason="why")
    assert v != Verdict(permission="deny") and v != HandlerResult(id="a", type="b")
