"""What a ``python`` handler's function receives: a deep copy of the event (handlers.python.json_copy)."""

from __future__ import annotations

import collections

from handlers.python import json_copy


def test_json_copy_is_deep_and_keeps_types() -> None:
    ordered = collections.OrderedDict(x=[1])
    value = {"a": [1, {"b": (1, [2])}, "x"], "c": None, "d": {"e": [True, 1.5]}, "o": ordered}
    copied = json_copy(value)
    assert copied == value and copied is not value
    assert copied["a"] is not value["a"] and copied["a"][1] is not value["a"][1]
    assert copied["a"][1]["b"][1] is not value["a"][1]["b"][1]  # a tuple goes to copy.deepcopy, which copies it
    assert copied["d"]["e"] is not value["d"]["e"]
    assert type(copied["o"]) is collections.OrderedDict and copied["o"]["x"] is not ordered["x"]
    copied["d"]["e"].append("changed")
    assert value["d"]["e"] == [True, 1.5]
