"""The lexer's plain-words shortcut (``_SIMPLE``: ``npm test``) yields exactly the tokens of the full
tokenizer, and never takes a command with a character the tokenizer interprets."""

from __future__ import annotations

import random
import re

from configs.guards.destructive.lexer import _SIMPLE, Lexer, Word

ALPHABET = "ab -./=~:@%+!^01\t\n;&|()<>'\"\\$`{},*?[]#é\u00a0"


def shape(tokens: list[object] | None) -> object:
    """The tokens as plain values, substitutions and redirection targets included."""
    if tokens is None:
        return None
    out: list[object] = []
    for t in tokens:
        if isinstance(t, Word):
            out.append(("word", t.text, t.literal, t.quoted, t.meta, [shape(s) for s in t.subs], shape(t.procsub)))
        else:
            target, body = getattr(t, "target", None), getattr(t, "body", None)
            out.append(
                (
                    type(t).__name__,
                    getattr(t, "op", None),
                    shape([target] if target else None),
                    shape([body] if body else None),
                )
            )
    return out


def full(command: str) -> list[object]:
    """The full tokenizer's tokens (a start past 0 never takes the shortcut)."""
    return Lexer(" " + command, 0, 1).run()


def test_plain_commands_take_the_shortcut_with_the_same_tokens() -> None:
    for command in ("npm test", "  git status  ", "ls -la /tmp", "make -j4 CC=gcc", "a=1 b", "x~y!z:w@v%u+"):
        assert re.fullmatch(_SIMPLE, command), command
        assert shape(Lexer(command, 0).run()) == shape(full(command))


def test_random_commands_agree_with_the_full_tokenizer() -> None:
    rng = random.Random(5)
    took = 0
    for _ in range(20_000):
        command = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12)))
        simple = re.fullmatch(_SIMPLE, command) is not None
        took += simple
        try:
            expected = shape(full(command))
        except Exception as exc:  # the full tokenizer refuses it: the shortcut must not have taken it
            assert not simple, (command, exc)
            continue
        assert shape(Lexer(command, 0).run()) == expected, command
    assert took > 500  # the shortcut was exercised


def test_interpreted_characters_never_take_the_shortcut() -> None:
    for command in ("rm -rf ~/x", "echo $HOME", "a;b", "a\tb", "a\nb", "ls *", "a#b", "x{a,b}", "a 'b'", "\\rm x"):
        if "~" in command:  # a tilde is text to the tokenizer (the rules expand it): both agree
            assert shape(Lexer(command, 0).run()) == shape(full(command))
            continue
        assert re.fullmatch(_SIMPLE, command) is None, command
