"""``Record``: the base of the plain data classes on the hook path (equality, repr and ``replace`` over
``__slots__``).

They are not ``dataclasses``: importing ``dataclasses`` pulls in ``inspect`` (~4 ms), and every
``@dataclass`` class is generated with ``exec`` when its module loads (~0.5 ms each, ten of them on the
way to an answer), a cost every ``hookgate run`` would pay on every tool call. A subclass lists its
fields in ``__slots__`` (in field order) and assigns them all in ``__init__``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Self


class Record:
    """Equality (same type, equal fields), a field-by-field ``repr`` and ``replace`` from ``__slots__``."""

    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable records are not hashable (as dataclasses with eq)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def replace(self, **changes: Any) -> Self:
        """A shallow copy with ``changes`` applied (``dataclasses.replace``)."""
        copy = object.__new__(type(self))
        for name in self.__slots__:
            object.__setattr__(copy, name, changes.pop(name) if name in changes else getattr(self, name))
        if changes:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(changes)}")
        return copy
