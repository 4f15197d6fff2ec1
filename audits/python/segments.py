"""Segmented parse: ``ast.parse`` of only the pieces of a large file that matter.

Files from ``SEGMENT_MIN_BYTES`` (audits/python_scan.py) up are parsed partially, each time as one
parse of the file with all other lines blanked (nodes keep their true lines and columns): first
every top-level statement that may hold a module-level import, then the other top-level
statements holding hit lines, and of a large class/def only its header and the body statements
holding them. Whenever the kept pieces do not parse, or do not begin statements where expected,
the caller parses the whole file instead.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Sequence

# A top-level statement starts at column 0 with something that can begin a statement and is not a
# continuation keyword; starts inside triple-quoted strings are dropped, decorators stay with
# their definition. Any piece that does not parse on its own makes the caller parse the file.
_STARTS = re.compile(rb"^(?=[A-Za-z_@\[({'\"0-9.\-~])(?!(?:else|elif|except|finally)\b)", re.M)
# the same after a newline: a pattern that begins with a literal is searched for fast
_NL_STARTS = re.compile(rb"\n(?=[A-Za-z_@\[({'\"0-9.\-~])(?!(?:else|elif|except|finally)\b)")


def top_level_pieces(data: bytes) -> list[tuple[int, int, int, int]] | None:
    """Top-level statements as (first_line, last_line, stmt_line, stmt_offset), lines 1-based:
    the piece spans first..last and its statement starts at column 0 of ``stmt_line`` (byte
    ``stmt_offset``); the first piece also holds the comments before it. None when unsure."""
    strings = _triple_spans(data)
    if strings is None:
        return None
    segs: list[tuple[int, int]] = []
    line, last, si, prev_deco = 1, 0, 0, False
    at = [0] if _STARTS.match(data) else []
    for pos in at + [m.start() + 1 for m in _NL_STARTS.finditer(data)]:
        while si < len(strings) and strings[si][1] <= pos:
            si += 1
        if si < len(strings) and strings[si][0] < pos:
            continue  # inside a triple-quoted string
        line += data.count(b"\n", last, pos)
        last = pos
        if not prev_deco:
            segs.append((line, pos))
        prev_deco = data.startswith(b"@", pos)
    if not segs:
        return None
    total = data.count(b"\n", last) + line
    return [
        (1 if i == 0 else a, segs[i + 1][0] - 1 if i + 1 < len(segs) else total, a, off)
        for i, (a, off) in enumerate(segs)
    ]


def import_segments(data: bytes, segs) -> list[int]:
    """Indices of the pieces that may hold a module-level import: every piece but a class/def
    with the word ``import`` in it (a string or comment saying it only costs parse time)."""
    out: list[int] = []
    offs = [0] + [s[3] for s in segs[1:]]  # the first piece from the file's start
    find, n = data.find, len(segs)
    pos = find(b"import")
    while pos >= 0:
        end = pos + 6
        if (pos == 0 or not _WORD.match(data, pos - 1)) and not _WORD.match(data, end):
            i = bisect.bisect_right(offs, pos) - 1
            if i >= 0 and not _DEF_START.match(data, segs[i][3]):
                out.append(i)
            if i + 1 >= n:
                break
            end = offs[i + 1]  # one word is enough: go on with the next piece
        pos = find(b"import", end)
    return out


_WORD = re.compile(rb"\w")


def parse_segments(
    data: bytes, segs, lines: list[str], hits: Sequence[int] | None = None
) -> list[ast.stmt] | None:
    """Parse the pieces ``segs`` (from ``top_level_pieces``); None if that fails.

    One ``ast.parse`` of the file with every other line blanked, so nodes keep their true lines
    and columns. With ``hits``, a large class/def is kept as its header plus only the body
    statements that hold a hit line and its last one (see ``_plan_def``): the visitor skips
    every statement without a hit line anyway. The result is checked: each kept piece must begin
    a statement of its body, else None (the caller then parses the whole file).
    """
    regions: list[tuple[int, int]] = []
    top = _Check(0, 0, [], [])
    for first, last, line, off in segs:
        top.starts.append(line)
        if (
            hits is not None
            and first == line
            and last - line >= SPLIT_MIN_LINES
            and _DEF_START.match(data, off)
        ):
            sub = _plan_def(lines, line, last, "", hits, regions)
            if sub is not None:
                top.children.append(sub)
                continue
        regions.append((first, last))
    if not regions:
        return []
    parts: list[str] = []
    at = 1  # the line the next part starts on
    for a, b in regions:
        parts.append("\n" * (a - at))
        parts.append("\n".join(lines[a - 1 : b]))
        at = b
    try:
        body = ast.parse("".join(parts)).body
    except SyntaxError:
        return None
    return body if _verify(body, top) else None


# Splitting a class/def: its body statements start at the body's indentation. As for top-level
# segments a wrong boundary is possible in odd layouts (a continuation line at exactly the body
# indentation); a boundary after a line that ends open is not taken, and a kept piece that does
# not begin a statement of its body after parsing sends the caller to a whole-file parse.
SPLIT_MIN_LINES = 40  # smaller statements are kept whole
_DEF_START = re.compile(rb"(?:class|def|async[ \t]+def)\b|@")
_DEF_START_STR = re.compile(_DEF_START.pattern.decode())
_INDENTED = re.compile(r"\n([ \t]+)(?=[A-Za-z_@\[({'\"0-9.\-~])")
_OPEN_END = re.compile(r"[(\[{,\\]\s*$")  # without brackets only a backslash continues a line
_MEMBER: dict[str, re.Pattern] = {}
_OUTER: dict[int, re.Pattern] = {}
_HEADER_TRIES = 8
DEFS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class _Check:
    """Expected shape: kept pieces start at ``starts`` (indentation ``col``) in this body."""

    line: int
    col: int
    starts: list[int]
    children: list["_Check"]


def stmt_start(n: ast.stmt) -> tuple[int, int]:
    d = getattr(n, "decorator_list", None)
    return (d[0].lineno, d[0].col_offset - 1) if d else (n.lineno, n.col_offset)


def _verify(body: list[ast.stmt], chk: _Check) -> bool:
    by_line = {}
    for n in body:
        by_line.setdefault(stmt_start(n)[0], n)
    for s in chk.starts:
        n = by_line.get(s)
        if n is None or stmt_start(n) != (s, chk.col):
            return False
    for c in chk.children:
        n = by_line.get(c.line)
        if not isinstance(n, DEFS) or not _verify(n.body, c):
            return False
    return True


def _triple_spans(text):
    """(start, end) of the triple-quoted strings in ``text`` (str or bytes), paired naively
    left to right; None when one is left open."""
    q2, q1 = ('"""', "'''") if isinstance(text, str) else (b'"""', b"'''")
    marks: list[tuple[int, bool]] = []
    for q, dq in ((q2, True), (q1, False)):
        find = text.find
        pos = find(q)
        while pos >= 0:
            marks.append((pos, dq))
            pos = find(q, pos + 3)
    marks.sort()
    spans: list[tuple[int, int]] = []
    open_at, quote = -1, True
    for pos, dq in marks:
        if open_at < 0:
            open_at, quote = pos, dq
        elif dq == quote:
            spans.append((open_at, pos + 3))
            open_at = -1
    return None if open_at >= 0 else spans


def _in_spans(spans: list[tuple[int, int]], pos: int) -> bool:
    i = bisect.bisect_right(spans, (pos, 1 << 62)) - 1
    return i >= 0 and spans[i][0] < pos < spans[i][1]


def _plan_def(
    lines: list[str],
    first: int,
    last: int,
    indent: str,
    hits: Sequence[int],
    regions: list[tuple[int, int]],
) -> _Check | None:
    """Append to ``regions`` the lines to keep of the class/def spanning first..last: its header,
    the body statements holding a hit line and the last one (which fixes the node's end). Returns
    the shape to verify after parsing; None (``regions`` untouched) when the layout is unclear."""
    text = "\n".join(lines[first - 1 : last])
    strings = _triple_spans(text)
    if strings is None:
        return None
    body = _body_start(text, strings, indent)
    if body is None or _reaches_out(text, strings, indent, body[1]):
        return None
    body_indent, body_start = body
    starts = _member_starts(text, strings, lines, first, body)
    if not starts:
        return None
    mark = len(regions)
    regions.append((first, starts[0] - 1))
    chk = _Check(first, len(body_indent), [], [])
    for i, a in enumerate(starts):
        b = starts[i + 1] - 1 if i + 1 < len(starts) else last
        j = bisect.bisect_left(hits, a)
        if i + 1 < len(starts) and not (j < len(hits) and hits[j] <= b):
            continue
        chk.starts.append(a)
        if b - a >= SPLIT_MIN_LINES and _DEF_START_STR.match(lines[a - 1], len(body_indent)):
            sub = _plan_def(lines, a, b, body_indent, hits, regions)
            if sub is not None:
                chk.children.append(sub)
                continue
        regions.append((a, b))
    if len(regions) == mark + 1:
        del regions[mark:]
        return None
    return chk


def _body_start(text: str, strings, indent: str) -> tuple[str, int] | None:
    """(the body's indentation, its offset): the header ends before the first indented line
    under which `pass` completes it. None when unclear."""
    wrap = "if 1:\n" if indent else ""
    tries = 0
    for m in _INDENTED.finditer(text):
        if len(m.group(1)) <= len(indent) or _in_spans(strings, m.start(1)):
            continue
        tries += 1
        if tries > _HEADER_TRIES:
            return None
        if not _may_end_header(text, m.start()):
            continue  # the parse below could only fail, or (see there) find the body begun
        try:
            got = ast.parse(f"{wrap}{text[: m.start(1)]}{m.group(1)}pass").body
        except SyntaxError:
            continue
        if wrap and len(got) == 1 and isinstance(got[0], ast.If):
            got = got[0].body
        if not (
            len(got) == 1
            and isinstance(got[0], DEFS)
            and len(got[0].body) == 1
            and isinstance(got[0].body[0], ast.Pass)
        ):
            return None
        return m.group(1), m.start(1)
    return None


def _may_end_header(text: str, eol: int) -> bool:
    """Can the line ending at ``eol`` end a def's header, so that a ``pass`` on the next line is
    its first body statement? Only a line ending in ``:`` can, but a comment, a backslash or an
    odd character (or a blank line) leaves it open. A line that cannot makes ``_body_start``'s
    trial parse fail, or succeed only with the body begun already (a statement before, at the
    ``pass``'s level), which no later trial can undo: both lead to the same answer as not
    parsing. The trial parses of long multi-line signatures cost more than the rest."""
    s = text[text.rfind("\n", 0, eol) + 1 : eol].rstrip()
    return not s or s[-1] in ":\\" or "#" in s or "\r" in s


def _reaches_out(text: str, strings, indent: str, body_start: int) -> bool:
    """A statement start at or left of the def's own indentation after its header: the range
    holds more than the def."""
    out = _OUTER.get(len(indent))
    if out is None:
        out = _OUTER[len(indent)] = re.compile(
            r"\n[ \t]{0,%d}(?=[A-Za-z_@\[({'\"0-9.\-~])" % len(indent)
        )
    return any(not _in_spans(strings, m.start() + 1) for m in out.finditer(text, body_start))


def _member_starts(text: str, strings, lines: list[str], first: int, body) -> list[int]:
    """The lines where the def's body statements start."""
    body_indent, body_start = body
    rx = _MEMBER.get(body_indent)
    if rx is None:
        rx = _MEMBER[body_indent] = re.compile(
            "\n"
            + re.escape(body_indent)
            + r"(?=[A-Za-z_@\[({'\"0-9.\-~])(?!(?:else|elif|except|finally)\b)"
        )
    starts: list[int] = []
    line, last_pos, prev_deco, depth = first + text.count("\n", 0, body_start), body_start, False, 0
    for m in rx.finditer(text, body_start - 1):
        pos = m.start() + 1
        if _in_spans(strings, pos):
            continue
        line += text.count("\n", last_pos, pos)
        depth += _depth(text[last_pos:pos])
        last_pos = pos
        deco = prev_deco
        prev_deco = text.startswith("@", m.end())
        # inside open brackets (as counted, strings and comments included: an unbalanced one
        # only merges pieces) or after a line that ends open, this line continues a statement
        if deco or depth or (starts and _open_before(lines, line, starts[-1])):
            continue
        starts.append(line)
    return starts


def _depth(s: str) -> int:
    return s.count("(") + s.count("[") + s.count("{") - s.count(")") - s.count("]") - s.count("}")


def _open_before(lines: list[str], line: int, floor: int) -> bool:
    """Does the last code line before ``line`` (not before ``floor``) end open (a backslash, a
    bracket, a comma, an operator) or carry a comment (which could hide an open end)? A boundary
    not taken merely keeps two statements together."""
    for k in range(line - 2, floor - 2, -1):
        s = lines[k].strip()
        if s and not s.startswith("#"):
            if "#" in s:
                code, _, _ = s.partition("#")
                if "'" in code or '"' in code:  # the '#' may sit in a string
                    return True
                s = code
            return _OPEN_END.search(s) is not None
    return False
