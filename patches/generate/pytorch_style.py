"""PyTorch's own style for the lines a rewrite changed, so a patch merges as it is.

From pytorch/pytorch's lint configuration: ``pyproject.toml`` ``[tool.ruff]`` (``line-length =
88``, ``[tool.ruff.format] quote-style = "double"``), applied as a formatter (lintrunner's PYFMT)
to the files it covers, and flake8 with ``max-line-length = 120`` and B950 (``E501`` ignored:
a line may run 10 % over). A file is under the formatter when the formatter leaves it unchanged
before the rewrite; its changed lines are then formatted the same way (``ruff format --range``),
and nothing else in the file moves. Every changed line must fit B950's limit
(``long_lines``): in a file outside the formatter only a changed statement over it is
formatted, the rest keeps its layout.

Files of another project follow that project's own limit the same way (``Style``; which one
applies: ``project_style.style_for``).
"""

from __future__ import annotations

import functools
import io
import re
import shutil
import subprocess
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

from patches.generate import linediff

LINE_LENGTH = 88  # [tool.ruff] line-length
FLAKE8_MAX = 120  # .flake8 max-line-length; B950 allows 10 % more
B950_LIMIT = FLAKE8_MAX + FLAKE8_MAX // 10


@dataclass(frozen=True)
class Style:
    """How a file's changed lines are laid out: ``line_length`` for the formatter, ``limit`` for
    every changed line, ``quotes`` (ruff's quote-style), ``source``: where these come from;
    ``slack``: a file counts as formatted where the formatter would change a few of its lines
    (another project's black, which leaves ``"a " "b"`` alone where ruff joins it)."""

    line_length: int
    limit: int
    quotes: str
    source: str
    slack: bool = False
    indent: int = 4  # the file's own indentation step (timesfm's 2-space classes, round 42)

    def args(self) -> tuple[str, ...]:
        quotes = f'format.quote-style="{self.quotes}"'
        width = f"indent-width={self.indent}"
        return ("--isolated", "--line-length", str(self.line_length), "--config", quotes) + (
            ("--config", width) if self.indent != 4 else ()
        )


PYTORCH = Style(LINE_LENGTH, B950_LIMIT, "double", "pytorch/pytorch's lint configuration")


@functools.lru_cache(maxsize=1)
def ruff() -> str | None:
    """The ruff next to this interpreter (the project's venv), else on PATH."""
    here = Path(sys.executable).with_name("ruff")
    return str(here) if here.exists() else shutil.which("ruff")


def _format(text: str, path: str, style: Style, extra: tuple[str, ...] = ()) -> str | None:
    exe = ruff()
    if exe is None:
        return None
    cmd = [exe, "format", *style.args(), *extra, "--stdin-filename", path, "-"]
    # bytes both ways: text mode would read ruff's CRLF output back as LF (a whole-file diff)
    done = subprocess.run(cmd, input=text.encode("utf-8"), capture_output=True, check=False)
    return done.stdout.decode("utf-8") if done.returncode == 0 else None


def formatted(text: str, path: str = "x.py", style: Style = PYTORCH) -> bool:
    """The formatter leaves ``text`` unchanged (the file is under PyTorch's PYFMT); with the
    style's ``slack``, it changes at most one line in a hundred (two at least)."""
    out = _format(text, path, style)
    if out is None or out == text or not style.slack:
        return out == text
    changed = sum(b - a + 1 for a, b in changed_ranges(text, out))
    return changed <= max(2, text.count("\n") // 100)


def changed_ranges(before: str, after: str) -> list[tuple[int, int]]:
    """1-based inclusive line ranges of ``after`` that differ from ``before`` (the series' own
    line diff: difflib's answer on small files, fast on megabyte ones)."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    out = []
    for tag, _i1, _i2, j1, j2 in linediff.opcodes(a, b):
        if tag in ("replace", "insert") and j2 > j1:
            out.append((j1 + 1, j2))
    return out


def conform(path: str, before: str, after: str, style: Style = PYTORCH) -> str:
    """``after`` with its changed lines in the style's format where ``before`` is formatted; in
    a file outside the formatter only the changed statements over the style's limit are
    formatted (flake8 would reject them); ``after`` itself whenever ruff is unavailable or fails.
    The lines a CRLF file gains (an import, a statement written with ``\\n``) end CRLF too."""
    if after == before:
        return after
    if before.count("\n") == before.count("\r\n") > 0:  # a CRLF file: so are the lines it gains
        after = re.sub(r"(?<!\r)\n", "\r\n", after)
    ranges = changed_ranges(before, after)
    if not formatted(before, path, style):
        lines = after.splitlines()
        ranges = [
            (a, b)
            for a, b in ranges
            if any(len(lines[n - 1]) > style.limit for n in range(a, b + 1))
        ]
    text = after
    lines = after.splitlines()
    for start, end in reversed(ranges):  # bottom-up: lines stay put
        span = f"{start}:1-{end}:{len(lines[end - 1]) + 1}"  # through the end of line `end`
        new = _format(text, path, style, ("--range", span))
        if new is None:
            return after
        text = new
    if style.quotes == "single" or (style.quotes == "preserve" and _single_quoted(before)):
        text = _requoted(before, text)
    return text


_PLAIN_DOUBLE = re.compile(r"\A\"([^\"'\\\n]*)\"\Z")
_PLAIN = re.compile(r"\A(['\"])[^\"'\\\n]*\1\Z")


def _strings(text: str):
    """The plain string tokens of ``text`` (no prefix, no quote or escape inside)."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.STRING and _PLAIN.match(tok.string):
                yield tok
    except (tokenize.TokenError, SyntaxError):
        return


@functools.lru_cache(maxsize=64)
def _single_quoted(text: str) -> bool:
    """Most plain strings of ``text`` are single-quoted (composer's, audiocraft's files)."""
    quotes = [t.string[0] for t in _strings(text)]
    return quotes.count("'") > quotes.count('"')


def _requoted(before: str, after: str) -> str:
    """``after`` with the plain double-quoted strings of its changed lines single-quoted: the
    rewrite's ``"cpu"`` in a file whose author writes ``'cpu'``."""
    changed = {n for a, b in changed_ranges(before, after) for n in range(a, b + 1)}
    lines = after.splitlines(keepends=True)
    hits = [t for t in _strings(after) if t.start[0] in changed and _PLAIN_DOUBLE.match(t.string)]
    for t in sorted(hits, key=lambda t: t.start, reverse=True):
        (row, col), (_, end) = t.start, t.end
        line = lines[row - 1]
        lines[row - 1] = line[:col] + "'" + t.string[1:-1] + "'" + line[end:]
    return "".join(lines)


def long_lines(before: str, after: str, limit: int = B950_LIMIT) -> list[int]:
    """Changed lines of ``after`` longer than ``limit`` (flake8's B950 for PyTorch)."""
    lines = after.splitlines()
    return [
        n
        for start, end in changed_ranges(before, after)
        for n in range(start, end + 1)
        if len(lines[n - 1]) > limit
    ]
