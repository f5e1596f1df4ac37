"""``Record``: the base of the plain data classes on the hook path (equality, repr and ``replace`` over
``__slots__``).

They are not ``dataclasses``: importing ``dataclasses`` pulls in ``inspect`` (~4 ms), and every
``@dataclass`` class is generated with ``exec`` when its module loads (~0.5 ms each, ten of them on the
way to an answer), a cost every ``hookgate run`` would pay on every tool call. A subclass lists its
fields in ``__slots__`` (in field order) and assigns them all in ``__init__``; or, a subclass of
``Fields``, declares them once as annotated class attributes (a default each, ``fresh(list)`` for a new
list per instance) and gets its ``__slots__`` and a plain ``__init__`` generated when its module loads
(one small ``exec``, no ``inspect``); type checkers see it as a dataclass (``dataclass_transform``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Self, TypeVar, dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> object:
        return lambda cls: cls


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


class _Fresh:
    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory


def fresh(factory: Callable[[], T]) -> T:
    """A ``Fields`` default made anew for every instance (``list``, ``dict``; ``default_factory``). Passing
    None gets one too."""
    return _Fresh(factory)  # type: ignore[return-value]


_LITERALS: dict[Any, str] = {list: "[]", dict: "{}"}


class _FieldsMeta(type):
    """Builds a ``Fields`` subclass's ``__slots__`` and ``__init__`` from its annotated class attributes."""

    def __new__(mcls, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> _FieldsMeta:
        if "__slots__" not in ns:
            names = tuple(ns.get("__annotations__", {}))
            ns["__slots__"] = names
            params: list[str] = []
            lines: list[str] = []
            env: dict[str, Any] = {}
            for i, field in enumerate(names):
                if field not in ns:
                    params.append(field)
                    lines.append(f"self.{field} = {field}")
                    continue
                default = ns.pop(field)
                if isinstance(default, _Fresh):
                    make = _LITERALS.get(default.factory)
                    if make is None:
                        env[f"_f{i}"], make = default.factory, f"_f{i}()"
                    params.append(f"{field}=None")
                    lines.append(f"self.{field} = {make} if {field} is None else {field}")
                else:
                    env[f"_d{i}"] = default
                    params.append(f"{field}=_d{i}")
                    lines.append(f"self.{field} = {field}")
            source = f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(lines or ["pass"])
            exec(source, env)  # the one generated function: what a hand-written __init__ would be
            init = env["__init__"]
            init.__qualname__, init.__module__ = f"{name}.__init__", ns.get("__module__")
            ns.setdefault("__init__", init)
        return super().__new__(mcls, name, bases, ns)


@dataclass_transform(eq_default=False)
class Fields(Record, metaclass=_FieldsMeta):
    """A ``Record`` whose fields are declared once, as annotated class attributes in field order::

        class Verdict(Fields):
            permission: str | None = None
            extra: dict[str, Any] = fresh(dict)

    ``__slots__`` and ``__init__`` (keyword or positional arguments, in that order) are generated."""

    __slots__: tuple[str, ...] = ()
