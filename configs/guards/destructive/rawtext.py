"""The fallback for a command that cannot be tokenized (an unterminated quote or substitution).

Bash would refuse to run it, but an agent retries with the quoting fixed, so the text is checked for the same
patterns as any command: the same rules run on two readings of the raw text -- the open quote or substitution
closed at the end, and every quote character dropped -- and a deny in either denies. Text that still cannot be
tokenized (or is too long to analyse) is scanned with a few bounded regular expressions.
"""

from __future__ import annotations

import re

from .context import POLICY, Ctx
from .lexer import Lexer, ParseError
from .protected import rule_for, write_reason

_SUB_CLOSER = r"[)}`\]]"  # a closer that ends a substitution (compiled on first use)
_CLOSERS = ("'", '"', "`", ")", "}", "))", "'\"", "\"'", "')", '")', "`)", "]")
_RAW_RULES = [  # bounded repeats keep the scan linear on long input; compiled on first use
    (r"(?<![\w./-])rm\s[^;&|\n]{0,300}?(?<=\s)(?:-[A-Za-z]*[rR]|--recursive\b)", "a recursive delete (`rm -r`)"),
    (
        r"(?<![\w./-])git\s[^;&|\n]{0,300}?\bpush\b[^;&|\n]{0,300}?\s(?:-[A-Za-z]*[fd][A-Za-z]*\b"
        r"|--force(?![\w-])|--mirror\b|--delete\b|--prune\b|[+:]\w)",
        "a force or destructive `git push`",
    ),
    (r"(?<![\w./-])git\s[^;&|\n]{0,300}?\breset\s[^;&|\n]{0,300}?--(?:hard|merge)\b", "`git reset --hard`"),
    (r"(?<![\w./-])git\s[^;&|\n]{0,300}?\bclean\s[^;&|\n]{0,100}?-[A-Za-z]*f", "`git clean -f`"),
    (
        r"(?<![\w./-])(?:curl|wget)\s[^;&\n]{0,1000}?\|\s*(?:sudo\s+)?(?:\S*/)?(?:ba|z|da|k|mk|a)?sh\b",
        "a downloaded script piped into a shell",
    ),
    (r":\s*\(\s*\)\s*\{[^}]{0,100}?:\s*\|\s*:", "a fork bomb"),
    (r"(?<![\w./-])find\s[^;&|\n]{0,300}?-delete\b", "`find -delete`"),
    (
        r"(?<![\w./-])(?:mkfs|newfs|mk(?:e2|ntf|dosf|exfatf|reiserf|udff)s\s|wipefs\s|blkdiscard\s|mkswap\s)|\bdd\s[^;&|\n]{0,200}?of=/dev/(?!null|zero)"
        r"|>\|?\s*['\"]?/dev/(?:[shv]d[a-z]|xvd[a-z]|nvme[0-9]|mmcblk[0-9]|r?disk[0-9])",
        "a disk overwrite",
    ),
]
_RAW_WRITES = (r"(?:>>?|>\||&>>?)\s*['\"]?([^\s;&|<>'\"()]+)", r"\bof=['\"]?([^\s;&|'\"]+)")
_RAW_ARG_WRITERS = r"(?<![\w./-])(tee|cp|mv|ln|install|sed|truncate)\s([^;&|\n]*)"


def raw_scan(text: str, problem: str, ctx: Ctx) -> str | None:
    """Check ``text``, which cannot be tokenized because of ``problem`` (see the module docstring). Nothing
    found, but a substitution left open (``$(``, a backquote, ``${``): asks (``parse.unterminated``)."""
    head = f"hookgate cannot parse this command ({problem}), and it appears to contain"
    if len(text) <= 100_000 and ctx.depth < 18:
        readings = _readings(text)
        for reading in readings:
            try:
                toks = Lexer(reading, ctx.depth + 1).run()
            except ParseError:
                continue
            reason = ctx.check_tokens(toks)
            if reason:
                return f"{head} a command it stops: {reason} Fix the quoting, or ask the user to run it."
        if not readings or any(re.search(_SUB_CLOSER, r[len(text) :]) for r in readings):
            return ctx.hit(
                "parse.unterminated",
                text[:80],
                (
                    f"hookgate cannot parse this command ({problem}): a substitution (`$(`, a backquote or `${{`) "
                    f"is left open, so hookgate cannot tell what it runs, and {POLICY} asks first. Fix the quoting."
                ),
            )
        return None
    return regex_scan(text, head, ctx)


def _readings(text: str) -> list[str]:
    """The raw text read two ways: the open quote or substitution closed, and without quote characters."""
    out = []
    for closer in _CLOSERS:
        try:
            Lexer(text + closer, 0).run()
        except ParseError:
            continue
        out.append(text + closer)
        break
    bare = re.sub(r"['\"`]", " ", text)
    for closer in ("", *_CLOSERS[3:]):
        try:
            Lexer(bare + closer, 0).run()
        except ParseError:
            continue
        out.append(bare + closer)
        break
    return out


def regex_scan(text: str, head: str, ctx: Ctx) -> str | None:
    """The last resort: a few bounded patterns over the raw text."""
    for pattern, what in _RAW_RULES:
        if re.search(pattern, text):
            return ctx.hit(
                "parse.unanalysable",
                text[:80],
                f"{head} {what}; {POLICY} blocks that. Fix the quoting, or ask the user to run it.",
            )
    paths = [m.group(1) for rule in _RAW_WRITES for m in re.finditer(rule, text)]
    for m in re.finditer(_RAW_ARG_WRITERS, text):
        if m.group(1) != "sed" or re.search(r"(?:^|\s)(?:-[A-Za-z]*i|--in-place)", m.group(2)):
            paths += [p.strip("'\"") for p in m.group(2).split() if not p.startswith("-")]
    for path in paths:
        reason = write_reason(path, "This command")
        if reason:
            return ctx.hit(rule_for(path), text[:80], f"{head} a write to a secrets file. {reason}")
    return None
