"""Line diffs that stay fast on megabyte files with a few scattered edits.

``difflib.SequenceMatcher(autojunk=False)`` is quadratic-ish on long files full of repeated
lines (blank lines, ``)``): 1.4 MB ``common_methods_invocations.py`` took a minute per diff.
Here the common prefix and suffix are trimmed, a long middle is split at lines that occur
exactly once on each side and in the same order (patience anchors), and only the small pieces
between anchors go to difflib, so small inputs get exactly difflib's answer.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter

SMALL = 4_000_000  # len(a) * len(b) at or below which difflib is used as is


def opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    """Like ``SequenceMatcher(None, a, b, autojunk=False).get_opcodes()`` (identical when
    ``len(a) * len(b) <= SMALL``; otherwise a valid, near-minimal edit script)."""
    if len(a) * len(b) <= SMALL:
        return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    raw: list[tuple[str, int, int, int, int]] = []
    _diff(a, b, 0, len(a), 0, len(b), raw)
    out: list[tuple[str, int, int, int, int]] = []
    for op in raw:  # merge neighbours of the same kind (difflib never emits them split)
        if op[1] == op[2] and op[3] == op[4]:
            continue
        if (
            out
            and out[-1][0] == op[0] == "equal"
            or out
            and out[-1][0] != "equal"
            and op[0] != "equal"
        ):
            t, i1, _, j1, _ = out[-1]
            tag = (
                "equal"
                if t == "equal"
                else (
                    "replace"
                    if (i1 < op[2] and j1 < op[4])
                    else ("delete" if j1 == op[4] else "insert")
                )
            )
            out[-1] = (tag, i1, op[2], j1, op[4])
        else:
            out.append(op)
    return out or [("equal", 0, 0, 0, 0)]


def _diff(a, b, i1, i2, j1, j2, out) -> None:
    p = 0
    while i1 + p < i2 and j1 + p < j2 and a[i1 + p] == b[j1 + p]:
        p += 1
    s = 0
    while i2 - s > i1 + p and j2 - s > j1 + p and a[i2 - s - 1] == b[j2 - s - 1]:
        s += 1
    if p:
        out.append(("equal", i1, i1 + p, j1, j1 + p))
    mi1, mi2, mj1, mj2 = i1 + p, i2 - s, j1 + p, j2 - s
    if (mi2 - mi1) * (mj2 - mj1) <= SMALL or not _anchored(a, b, mi1, mi2, mj1, mj2, out):
        if mi1 < mi2 or mj1 < mj2:
            sm = difflib.SequenceMatcher(None, a[mi1:mi2], b[mj1:mj2], autojunk=False)
            out += [
                (t, x1 + mi1, x2 + mi1, y1 + mj1, y2 + mj1)
                for t, x1, x2, y1, y2 in sm.get_opcodes()
            ]
    if s:
        out.append(("equal", i2 - s, i2, j2 - s, j2))


def _anchored(a, b, i1, i2, j1, j2, out) -> bool:
    ca, cb = Counter(a[i1:i2]), Counter(b[j1:j2])
    where = {ln: j for j, ln in enumerate(b[j1:j2], j1) if cb[ln] == 1}
    pairs = [(i, where[ln]) for i, ln in enumerate(a[i1:i2], i1) if ca[ln] == 1 and ln in where]
    anchors = _increasing(pairs)
    if not anchors:
        return False
    pi, pj = i1, j1
    for i, j in anchors:
        _diff(a, b, pi, i, pj, j, out)
        out.append(("equal", i, i + 1, j, j + 1))
        pi, pj = i + 1, j + 1
    _diff(a, b, pi, i2, pj, j2, out)
    return True


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``pairs`` (sorted by i) increasing in j (patience sort)."""
    tails: list[int] = []
    idx: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pos = bisect.bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            idx.append(k)
        else:
            tails[pos], idx[pos] = j, k
        back[k] = idx[pos - 1] if pos else -1
    out, k = [], idx[-1] if idx else -1
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    return out[::-1]


class Matcher(difflib.SequenceMatcher):
    """A SequenceMatcher whose opcodes come from ``opcodes`` (for get_grouped_opcodes)."""

    def __init__(self, a: list[str], b: list[str]) -> None:
        self.a, self.b = a, b
        self.opcodes = None

    def get_opcodes(self):
        if self.opcodes is None:
            self.opcodes = opcodes(self.a, self.b)
        return self.opcodes
