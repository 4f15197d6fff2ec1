"""The Python scanner: ``ast`` with import/alias resolution, driven by the catalogue's match specs.

``scan_source(data, relpath, rules, *, package_prefix="")`` is the registry interface (see
audits/languages.py). ``package_prefix`` is prepended to ``relpath`` for the subsystem and for
resolving relative imports when the scanned root is itself a package (e.g. ``torch/``).

What is (not) a finding follows from the AST: comments are not in it, and string constants only
count in the contexts a literal rule names (device keywords, ``torch.device(...)``, comparisons
with device-ish expressions, ...), so docstrings and log/error messages never match. Names only
match through import resolution, so a local ``cuda_ok`` or ``self.cuda_graph`` is not a finding.

Speed: only statements whose line span contains a CUDA token (or an alias bound to a CUDA name)
are visited; files from ``SEGMENT_MIN_BYTES`` up are parsed partially, each time as one parse of
the file with all other lines blanked: first every top-level statement that may hold a
module-level import (imports nested in if/try/with/... blocks bind aliases too), then the other
top-level statements holding such lines, and of a large class/def only its header and the body
statements holding them. Whenever the kept pieces do not parse, or do not begin statements where
expected, the whole file is parsed instead.
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import Sequence

from audits.model import FileError, Finding, Rule
from audits.python.findings import findings, subsystem
from audits.python.hits import TOKENS, cuda_aliases, hit_lines
from audits.python.imports import local_aliases, local_scopes, module_imports
from audits.python.plan import build_plan
from audits.python.segments import import_segments, parse_segments, stmt_start, top_level_pieces
from audits.python.visitor import Scan
from audits.resolve import package_name

__all__ = ["scan_source", "subsystem", "TOKENS", "SEGMENT_MIN_BYTES"]

SEGMENT_MIN_BYTES = 4 * 1024  # below this a whole-file parse costs about the same (performance.md)


def decode(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        head = b"\n".join(data.split(b"\n", 2)[:2])
        m = re.search(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", head, re.M)
        if m is None:
            raise
        try:
            return data.decode(m.group(1).decode("ascii"))
        except (LookupError, UnicodeDecodeError):
            raise UnicodeDecodeError(
                "utf-8", data, 0, 1, "undecodable with its coding cookie"
            ) from None


def scan_source(
    data: bytes,
    relpath: str,
    rules: Sequence[Rule],
    *,
    package_prefix: str = "",
    segments: bool = True,
) -> tuple[list[Finding], list[FileError]]:
    """Findings and per-file errors for one Python file; never raises for bad input.

    ``segments=False`` forces a whole-file parse (tests compare both strategies).
    """
    plan = build_plan(rules)
    low = data.lower()
    if not any(t in low for t in TOKENS):
        return [], []
    if b"\r" in data:  # ast counts \r\n and lone \r as line breaks; so do we
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        low = data.lower()
    try:
        text = decode(data)
    except UnicodeDecodeError as e:
        return [], [
            FileError(
                relpath, "encoding", f"not UTF-8 (byte {e.start}) and no usable coding cookie"
            )
        ]
    if "\0" in text:
        return [], [FileError(relpath, "binary", "NUL byte in source")]
    lines = text.split("\n")
    qual = package_prefix + relpath
    scan = Scan(plan, lines, hit_lines(data, low), package_name(relpath, package_prefix))
    try:
        roots = _parse(scan, data, low, text, segments)
    except SyntaxError as e:
        return [], [FileError(relpath, "syntax", f"line {e.lineno}: {e.msg}")]
    except (RecursionError, MemoryError, ValueError) as e:
        return [], [FileError(relpath, "syntax", f"cannot parse: {type(e).__name__}")]
    try:
        scan.run(roots)
    except RecursionError:
        return [], [FileError(relpath, "syntax", "nesting too deep")]
    return findings(scan, relpath, qual, lines, text), []


def _parse(scan: Scan, data: bytes, low: bytes, text: str, segments: bool) -> list[ast.stmt]:
    """The statements to visit: the whole file, or (from ``SEGMENT_MIN_BYTES`` up) its
    module-level imports first, whose aliases decide which other pieces hold hits, then those.
    Records the imports and the final hit lines on ``scan``; raises SyntaxError."""
    segs = top_level_pieces(data) if segments and len(data) >= SEGMENT_MIN_BYTES else None
    roots = None
    if segs is not None:
        first = import_segments(data, segs)
        roots = parse_segments(data, [segs[i] for i in first], scan.lines)
    if roots is None:
        segs = None
        roots = ast.parse(text).body
    module_imports(scan, roots)
    aliases = cuda_aliases(scan.imports) + local_aliases(scan.lines, scan.hits, scan.package)
    if aliases:
        scan.hits = hit_lines(data, low, aliases)
    if segs is None:
        local_scopes(scan, roots)
        return roots
    hits, taken = scan.hits, set(first)
    rest = [
        s
        for i, s in enumerate(segs)
        if i not in taken and (j := bisect.bisect_left(hits, s[0])) < len(hits) and hits[j] <= s[1]
    ]
    more = parse_segments(data, rest, scan.lines, hits)
    # the pieces of both parses are disjoint; the visitor wants them in source order
    roots = ast.parse(text).body if more is None else sorted(roots + more, key=stmt_start)
    local_scopes(scan, roots)
    return roots
