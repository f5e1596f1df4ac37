"""GNU-style option parsing for the guard (``getopt``), shared by ``expand`` and ``runners``."""

from __future__ import annotations


def getopt(
    args: list[str],
    short_arg: str = "",
    long_arg: frozenset[str] = frozenset(),
    optional: str = "",
    permute: bool = True,
) -> tuple[list[str], list[tuple[str, str]], int]:
    """GNU-style options: ``(operands, [(option, value)], index where parsing stopped)``.

    ``short_arg``: letters taking a value (attached or the next word); ``optional``: letters taking an
    optional attached value only; ``long_arg``: long options taking the next word unless written ``--x=v``.
    ``permute=False`` stops at the first operand (for wrappers: ``sudo rm -rf`` -- ``-rf`` is rm's)."""
    operands: list[str] = []
    opts: list[tuple[str, str]] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            operands.extend(args[i:])
            return operands, opts, i
        if a.startswith("--"):
            name, eq, val = a.partition("=")
            if name in long_arg and not eq and i + 1 < len(args):
                i += 1
                val = args[i]
            opts.append((name, val))
        elif a.startswith("-") and len(a) > 1:
            for k in range(1, len(a)):
                ch = a[k]
                if ch in short_arg:
                    val = a[k + 1 :]
                    if not val and i + 1 < len(args):
                        i += 1
                        val = args[i]
                    opts.append(("-" + ch, val))
                    break
                if ch in optional:
                    opts.append(("-" + ch, a[k + 1 :]))
                    break
                opts.append(("-" + ch, ""))
        elif permute:
            operands.append(a)
        else:
            return operands, opts, i
        i += 1
    return operands, opts, i
