"""``canonical`` (the stored and hashed text of a record) never raises: what JSON cannot carry becomes a
placeholder naming why and the value's type (``gateway.plain.plain``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.audit.record import canonical
from gateway.plain import PLAIN_DEPTH, plain


class Unprintable:
    def __str__(self) -> str:
        raise ValueError("no")


def nested(depth: int) -> list[Any]:
    top: list[Any] = []
    level = top
    for _ in range(depth):
        level.append([])
        level = level[0]
    return top


def test_keys_json_cannot_write_become_placeholders_and_their_values_are_kept() -> None:
    text = canonical({(1, 2): "a", "b": 1, 3: "c", None: 0, True: 1, 1.5: 2, float("nan"): 3})
    assert json.loads(text) == {
        "[unencodable: key of type tuple: (1, 2)]": "a",
        "b": 1,
        "3": "c",
        "null": 0,
        "true": 1,
        "1.5": 2,
        "NaN": 3,
    }


def test_keys_that_write_alike_are_all_kept() -> None:
    assert json.loads(canonical({1: "int", "1": "str"})) in ({"1": "int", "1 #2": "str"}, {"1": "str", "1 #2": "int"})


def test_too_deep_circular_and_unprintable_values_become_placeholders() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    deep = json.loads(canonical({"v": nested(5000)}))["v"]
    levels = 0
    while isinstance(deep, list):
        deep, levels = deep[0], levels + 1
    assert deep == f"[unencodable: nested deeper than {PLAIN_DEPTH} levels: list]" and levels == PLAIN_DEPTH - 1
    assert json.loads(canonical(loop)) == [1, "[unencodable: circular reference: list]"]
    assert json.loads(canonical({"x": Unprintable()})) == {"x": "[unencodable: str() raised ValueError: Unprintable]"}
    big = json.loads(canonical({"n": 10**5000}))
    assert big == {"n": f"[unencodable: integer too long: int of {(10**5000).bit_length()} bits]"}


@pytest.mark.parametrize(
    "value",
    [{"a": [1, 2.5, "x", None, True]}, {"z": 1, "a": {"b": "é\u2028"}}, [float("inf"), -float("inf")], "\ud800"],
)
def test_what_json_can_carry_is_written_as_before(value: Any) -> None:
    assert canonical(plain(value)) == canonical(value)
