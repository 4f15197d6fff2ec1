"""Per-hunk device coverage: which of a series' new lines ran on which device, in which tests.

``series_hunks(patches)`` reads every hunk of a series and follows its added lines through the
later patches to their line numbers in the file after the whole series (a line a later patch
removes is dropped). ``hunk_coverage(...)`` joins them with coverage.py data recorded with one
dynamic context per test (see ``patches/common/pytest_plugin``): a hunk's *statements* are its
added lines that own bytecode, matched against the lines the tracer reported, so the operand of
a short-circuited ``and`` on its own added line counts only when it was evaluated. A hunk ran on
a device in a test when one of those lines was recorded in that test's context; it is *proven*
on a device only when at least one such test passed there after the series.

Measured paths are mapped back to series paths by stripping the workspace root (the shadow
package's copies of patched files are real files under it, so their recorded paths start there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_DIFF_GIT = re.compile(r"^diff --git a/(\S+) b/(\S+)$")
_PLUS = re.compile(r"^\+\+\+ (?:b/)?(\S+)")


@dataclass
class RawHunk:
    path: str
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    section: str
    kinds: list[str]  # ' ', '-', '+' per body line

    @property
    def header(self) -> str:
        return (
            f"@@ -{self.old_start},{self.old_len} +{self.new_start},{self.new_len} @@"
            + self.section
        ).rstrip()

    def added(self) -> list[int]:
        """Line numbers (in the file after this patch) of the added lines."""
        n, out = self.new_start, []
        for k in self.kinds:
            if k == "+":
                out.append(n)
            if k in " +":
                n += 1
        return out


def parse_patch(text: str) -> list[RawHunk]:
    """Every hunk of a unified diff / git mbox, in order; the body is read by its counts, so an
    mbox signature (``-- ``) after the last hunk is never taken for a removed line."""
    hunks: list[RawHunk] = []
    path = None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _DIFF_GIT.match(line)
        if m:
            path = m.group(2)
        else:
            m = _PLUS.match(line)
            if m and m.group(1) != "/dev/null":
                path = m.group(1)
        h = _HUNK.match(line)
        if h and path:
            old_len = int(h.group(2)) if h.group(2) is not None else 1
            new_len = int(h.group(4)) if h.group(4) is not None else 1
            raw = RawHunk(path, int(h.group(1)), old_len, int(h.group(3)), new_len, h.group(5), [])
            o = n = 0
            i += 1
            while i < len(lines) and (o < old_len or n < new_len):
                body = lines[i]
                k = body[:1] or " "  # an empty context line may have lost its space
                if k == "\\":
                    i += 1
                    continue
                if k not in " +-":
                    break
                raw.kinds.append(k)
                o += k in " -"
                n += k in " +"
                i += 1
            hunks.append(raw)
            continue
        i += 1
    return hunks


def map_line(line: int, hunks: list[RawHunk]) -> int | None:
    """Where ``line`` of a file is after ``hunks`` (one patch, one file, in order) are applied;
    None when a hunk removes it."""
    delta = 0
    for h in hunks:
        o = h.old_start if h.old_len else h.old_start + 1  # -N,0: insert after line N
        if line < o:
            return line + delta
        n = h.new_start if h.new_len else h.new_start + 1  # +M,0: nothing left after line M
        for k in h.kinds:
            if k == " ":
                if o == line:
                    return n
                o, n = o + 1, n + 1
            elif k == "-":
                if o == line:
                    return None
                o += 1
            else:
                n += 1
        delta = n - o
    return line + delta


@dataclass
class Hunk:
    patch: str  # patch file name
    index: int  # 1-based, within the patch
    path: str
    header: str
    added: list[int]  # added lines, numbered in the file after the whole series
    statements: list[int] = field(default_factory=list)  # executable statements they belong to

    def key(self) -> str:
        return f"{self.patch}#{self.index}"


def series_hunks(patches: Iterable[Path]) -> list[Hunk]:
    parsed = [(p.name, parse_patch(p.read_text(errors="replace"))) for p in patches]
    out: list[Hunk] = []
    for k, (name, hunks) in enumerate(parsed):
        for idx, h in enumerate(hunks, 1):
            lines: list[int] = h.added()
            for _, later in parsed[k + 1 :]:
                same = [x for x in later if x.path == h.path]
                if same:
                    lines = [m for m in (map_line(x, same) for x in lines) if m is not None]
            out.append(Hunk(name, idx, h.path, h.header, lines))
    return out


def code_lines(text: str, filename: str = "<hunk>") -> set[int]:
    """Lines that own bytecode (all nested code objects): the lines a line tracer can report."""
    out: set[int] = set()
    todo = [compile(text, filename, "exec", dont_inherit=True)]
    while todo:
        co = todo.pop()
        out.update(line for _, _, line in co.co_lines() if line)
        todo += [c for c in co.co_consts if hasattr(c, "co_lines")]
    return out


def attach_statements(hunks: list[Hunk], root: Path) -> None:
    """Fill ``Hunk.statements``: the added lines that own bytecode, in the files after the series
    (``root``: the after tree). Comments, blank lines and closing brackets own none; a short-
    circuited ``and`` operand on its own line owns some, and it counts only when evaluated."""
    cache: dict[str, set[int] | None] = {}
    for h in hunks:
        if not h.path.endswith(".py") or not h.added:
            continue
        if h.path not in cache:
            try:
                cache[h.path] = code_lines((root / h.path).read_text(encoding="utf-8"), h.path)
            except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
                cache[h.path] = None
        lines = cache[h.path]
        if lines is not None:
            h.statements = sorted(set(h.added) & lines)


def read_contexts(cov_dir: Path, root: Path, paths: set[str]) -> dict[str, dict[int, set[str]]]:
    """{series path: {line: {test ids}}} from a run's coverage data files (lines as the tracer
    reported them: one per line that started executing, not per statement)."""
    from coverage import CoverageData

    root_s = str(root.resolve()) + "/"
    out: dict[str, dict[int, set[str]]] = {}
    for f in sorted(Path(cov_dir).glob("cov-*")):
        data = CoverageData(basename=str(f))
        data.read()
        for measured in data.measured_files():
            rel = measured[len(root_s) :] if measured.startswith(root_s) else None
            if rel not in paths:
                continue
            table = out.setdefault(rel, {})
            for line, ctxs in data.contexts_by_lineno(measured).items():
                tests = {c for c in ctxs if c}
                if tests:
                    table.setdefault(line, set()).update(tests)
    return out


def lines_outside_tests(cov_dir: Path, root: Path, paths: set[str]) -> dict[str, set[int]]:
    """{series path: lines} that ran outside any test (coverage.py's empty context: at import,
    during collection), from a run's coverage data files."""
    from coverage import CoverageData

    root_s = str(root.resolve()) + "/"
    out: dict[str, set[int]] = {}
    for f in sorted(Path(cov_dir).glob("cov-*")):
        data = CoverageData(basename=str(f))
        data.read()
        for measured in data.measured_files():
            rel = measured[len(root_s) :] if measured.startswith(root_s) else None
            if rel in paths:
                table = data.contexts_by_lineno(measured).items()
                out.setdefault(rel, set()).update(ln for ln, c in table if "" in c)
    return out


def hunk_coverage(
    hunks: list[Hunk],
    contexts: dict[str, dict[str, dict[int, set[str]]]],
    passing: dict[str, set[str]],
    devices: dict[str, str],
    before: dict[str, set[str]] | None = None,
) -> list[dict]:
    """One JSON-able entry per hunk.

    ``contexts``: device -> read_contexts(...) of its after run; ``passing``: device -> test ids
    that passed after the series; ``devices``: device -> "measured" | "absent: why" |
    "not measured: why"; ``before``: device -> test ids that passed before it (when known).
    """
    out = []
    for h in hunks:
        entry = {
            "key": h.key(),
            "patch": h.patch,
            "hunk": h.index,
            "path": h.path,
            "header": h.header,
            "added_lines": h.added,
            "statements": h.statements,
            "devices": {},
            "proven_on": [],
        }
        for dev, state in devices.items():
            if state != "measured":
                entry["devices"][dev] = {"state": state}
                continue
            table = contexts.get(dev, {}).get(h.path, {})
            ran: set[int] = set()
            tests: set[str] = set()
            for s in h.statements:
                if table.get(s):
                    ran.add(s)
                    tests |= table[s]
            good = sorted(tests & passing.get(dev, set()))
            entry["devices"][dev] = {
                "state": "measured",
                "statements_run": sorted(ran),
                "tests": sorted(tests),
                "passing_tests": good,
            }
            if before is not None:
                entry["devices"][dev]["passed_before"] = sorted(set(good) & before.get(dev, set()))
            if good:
                entry["proven_on"].append(dev)
        out.append(entry)
    return out


def cell(entry: dict, dev: str) -> str:
    """``cpu: 12 tests (3/4 lines)`` / ``**unexercised**`` / ``absent`` for Markdown and tables."""
    d = entry["devices"].get(dev, {"state": "absent"})
    if d["state"] != "measured":
        return d["state"].split(":")[0]
    if not entry["statements"]:
        return "no executable new lines"
    if not d["tests"]:
        return "**unexercised**"
    n, p = len(d["tests"]), len(d["passing_tests"])
    runs = f"{len(d['statements_run'])}/{len(entry['statements'])} lines"
    return f"{n} tests ({p} passing, {runs})"


def merge_entries(entries: list[list[dict]]) -> list[dict]:
    """Join the hunk coverage of several shard reports (same series): union of tests per device."""
    merged: dict[str, dict] = {}
    for report_entries in entries:
        for e in report_entries:
            m = merged.get(e["key"])
            if m is None:
                merged[e["key"]] = m = {**e, "devices": {}, "proven_on": []}
            for dev, d in e["devices"].items():
                have = m["devices"].get(dev)
                if d["state"] != "measured":
                    if have is None:
                        m["devices"][dev] = dict(d)
                    continue
                if have is None or have["state"] != "measured":
                    have = m["devices"][dev] = {
                        "state": "measured",
                        "statements_run": [],
                        "tests": [],
                        "passing_tests": [],
                    }
                for k in ("statements_run", "tests", "passing_tests"):
                    have[k] = sorted(set(have[k]) | set(d[k]))
    for m in merged.values():
        m["proven_on"] = [dev for dev, d in m["devices"].items() if d.get("passing_tests")]
    return list(merged.values())
