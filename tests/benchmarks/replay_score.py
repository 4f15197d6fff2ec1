"""Score a rewrite of torch 2.4.1 against upstream's own neutralisation (the replay benchmark).

Pure functions, no torch and no git: ``parse_diff`` reads ``git diff -U0`` output,
``rewrite_at`` finds what a series did to one labelled span of the old file, ``families`` and
``agrees`` compare a rewrite with upstream's new text through the equivalences of
``replay_equivalences.yaml``, and ``score`` turns labels plus a diff into one record per label.
The driver is ``replay.py``; docs/replay.md explains the figures.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from audits.catalog import expand_vocabulary

EQUIVALENCES = Path(__file__).with_name("replay_equivalences.yaml")


@dataclass
class Hunk:
    """One ``@@ -a,b +c,d @@`` block of a zero-context diff: old lines a..a+b-1 became new."""

    old_start: int
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    new_start: int = 0  # set by apply_hunks

    def touches(self, first: int, last: int) -> bool:
        """Whether this hunk replaces or deletes any old line in first..last (pure inserts
        touch nothing)."""
        return bool(self.old) and self.old_start <= last and first < self.old_start + len(self.old)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def parse_diff(text: str) -> dict[str, list[Hunk]]:
    """path (the ``b/`` side) -> hunks, from ``git diff -U0`` output."""
    out: dict[str, list[Hunk]] = {}
    hunks: list[Hunk] = []
    for line in text.splitlines():
        if line.startswith("+++ "):
            hunks = out.setdefault(line[6:] if line.startswith("+++ b/") else line[4:], [])
        elif line.startswith("@@"):
            m = _HUNK.match(line)
            start = int(m.group(1))
            # `-a,0` is an insertion after line a: it replaces no old line
            hunks.append(Hunk(start if m.group(2) != "0" else start + 1))
        elif hunks and line.startswith("-") and not line.startswith("--- "):
            hunks[-1].old.append(line[1:])
        elif hunks and line.startswith("+"):
            hunks[-1].new.append(line[1:])
    return out


def apply_hunks(old_lines: list[str], hunks: list[Hunk]) -> list[str]:
    """The new file: ``old_lines`` with every hunk applied (a zero-context diff holds all the
    changes). Sets each hunk's ``new_start``, the first line its new text takes."""
    out: list[str] = []
    n = 1
    for h in sorted(hunks, key=lambda h: h.old_start):
        out += old_lines[n - 1 : h.old_start - 1]
        h.new_start = len(out) + 1
        out += h.new
        n = h.old_start + len(h.old)
    return out + old_lines[n - 1 :]


def _header_end(node: ast.stmt) -> int:
    """The last line of a compound statement's header (``if a and\n b:`` -> the ``b:`` line)."""
    end = node.lineno
    for name, value in ast.iter_fields(node):
        if name in ("body", "orelse", "finalbody", "handlers", "cases", "decorator_list"):
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST) and hasattr(child, "end_lineno"):
                end = max(end, child.end_lineno)
    return end


def units(lines: list[str]) -> list[tuple[int, int]]:
    """For every line (index n-1 for line n), the lines of the statement it belongs to: a simple
    statement whole, a compound statement's header, a decorator; any other line (a comment, a
    blank, ``else:``, a file that does not parse) is a unit of its own."""
    out = [(n, n) for n in range(1, len(lines) + 1)]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return out
    for node in ast.walk(tree):  # outer statements first: inner ones overwrite their lines
        if not isinstance(node, ast.stmt):
            continue
        compound = any(isinstance(getattr(node, f, None), list) for f in ("body", "handlers"))
        spans = [(node.lineno, _header_end(node) if compound else node.end_lineno)]
        spans += [(d.lineno, d.end_lineno) for d in getattr(node, "decorator_list", [])]
        for first, last in spans:
            for n in range(first, min(last, len(lines)) + 1):
                out[n - 1] = (first, last)
    return out


def _cuts(unit: list[tuple[int, int]], first: int, last: int) -> list[tuple[int, int]]:
    """The statements of lines first..last, clipped to them and relative to ``first``."""
    seen = []
    for n in range(first, last + 1):
        a, b = unit[n - 1]
        cut = (max(a, first) - first, min(b, last) - first)
        if cut not in seen:
            seen.append(cut)
    return seen


def _mapped(h: Hunk, n: int, old_unit, new_unit) -> tuple[int, int]:
    """The new lines that old line n of hunk h became. Line for line where both sides split
    into the same statements over the same lines; statement for statement where they have as
    many statements; else the whole of the hunk's new text."""
    ol, nl = h.old_start + len(h.old) - 1, h.new_start + len(h.new) - 1
    old_cuts, new_cuts = _cuts(old_unit, h.old_start, ol), _cuts(new_unit, h.new_start, nl)
    if new_cuts and old_cuts == new_cuts:
        return h.new_start + n - h.old_start, h.new_start + n - h.old_start
    if new_cuts and len(old_cuts) == len(new_cuts):
        i = next(i for i, (a, b) in enumerate(old_cuts) if a <= n - h.old_start <= b)
        a, b = new_cuts[i]
        return h.new_start + a, h.new_start + b
    return h.new_start, max(h.new_start, nl)


@dataclass
class Sides:
    """One file's new text and both sides' statements, computed once for all its labels."""

    new_lines: list[str]
    old_unit: list[tuple[int, int]]
    new_unit: list[tuple[int, int]]

    @classmethod
    def of(cls, old_lines: list[str], hunks: list[Hunk], new_lines: list[str] | None = None):
        applied = apply_hunks(old_lines, hunks)  # also sets each hunk's new_start
        new_lines = applied if new_lines is None else new_lines
        return cls(new_lines, units(old_lines), units(new_lines))


def rewrite_at(
    hunks: list[Hunk],
    first: int,
    last: int,
    old_lines: list[str],
    new_lines: list[str] | None = None,
    sides: Sides | None = None,
) -> tuple[str, str] | None:
    """(before, after) for old lines first..last of ``old_lines`` (the old file, 1-based
    lines), or None when no hunk touches them.

    ``after`` is what those lines became in the new file (``new_lines``; by default the old
    file with the hunks applied): untouched lines as they are, a touched line as its hunk maps
    it (``_mapped``), widened to the whole statement on each side where the old span begins or
    ends one; so a statement rewritten over other lines than before (a wrapped one-line
    rewrite of an ``if``/``else`` pair) is read whole, not by its first line."""
    touching = [h for h in hunks if h.touches(first, last)]
    if not touching:
        return None
    sides = sides or Sides.of(old_lines, hunks, new_lines)
    new_lines, old_unit, new_unit = sides.new_lines, sides.old_unit, sides.new_unit
    spans = []
    for n in range(first, last + 1):
        h = next((h for h in touching if h.old_start <= n < h.old_start + len(h.old)), None)
        if h is not None:
            spans.append(_mapped(h, n, old_unit, new_unit))
            continue
        before = [g for g in hunks if g.old_start + len(g.old) <= n]
        m = n + sum(len(g.new) - len(g.old) for g in before)
        spans.append((m, m))
    a, b = min(s[0] for s in spans), max(s[1] for s in spans)
    if a <= len(new_lines) and first <= len(old_lines) and old_unit[first - 1][0] == first:
        a = min(a, new_unit[a - 1][0])
    if 1 <= b <= len(new_lines) and last <= len(old_lines) and old_unit[last - 1][1] == last:
        b = max(b, new_unit[b - 1][1])
    return "\n".join(old_lines[first - 1 : last]), "\n".join(new_lines[a - 1 : b])


def touched_lines(hunks: dict[str, list[Hunk]]) -> list[str]:
    """``path:line`` of every old line a diff replaces or deletes."""
    return [
        f"{path}:{n}"
        for path, hs in sorted(hunks.items())
        for h in hs
        for n in range(h.old_start, h.old_start + len(h.old))
    ]


@dataclass
class Equivalences:
    canonical: list[tuple[re.Pattern, str]]
    families: list[tuple[re.Pattern, str]]
    aliases: dict[str, str]


def load_equivalences(path: Path = EQUIVALENCES) -> Equivalences:
    data = expand_vocabulary(yaml.safe_load(path.read_text()))
    return Equivalences(
        canonical=[(re.compile(p), r) for p, r in data["canonical"]],
        families=[(re.compile(p), r) for p, r in data["families"]],
        aliases=dict(data.get("aliases") or {}),
    )


def _code(text: str) -> str:
    """The statement without trailing ``#`` comments (a ``#`` inside a string is kept)."""
    out = []
    for line in text.splitlines():
        quote = ""
        for i, ch in enumerate(line):
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch == "#":
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


def families(text: str, eq: Equivalences) -> set[str]:
    """The API families a statement uses (see replay_equivalences.yaml)."""
    text = _code(text)
    for pat, repl in eq.canonical:
        text = pat.sub(repl, text)
    found = set()
    for pat, name in eq.families:
        for m in pat.finditer(text):
            fam = m.expand(name)
            found.add(eq.aliases.get(fam, fam))
    return found


def _cuda(fams: set[str]) -> set[str]:
    return {f for f in fams if f.startswith("cuda:")}


def _neutral(fams: set[str]) -> set[str]:
    return {f for f in fams if f.startswith("neutral:")}


def agrees(old: str, ours: str, upstream: str, form: str, eq: Equivalences) -> bool:
    """Whether our rewrite of ``old`` does what upstream's does, up to an equivalent spelling.

    It must drop every CUDA-only family that upstream dropped and use every neutral family
    upstream introduced. Where upstream named another backend beside CUDA (form ``alongside``)
    a neutral rewrite covers that backend too: it agrees when it drops a CUDA-only family of the
    old text and introduces a neutral one."""
    f_old, f_ours, f_up = families(old, eq), families(ours, eq), families(upstream, eq)
    if form == "alongside":
        return bool(_cuda(f_old) - f_ours) and bool(_neutral(f_ours) - f_old)
    removed = _cuda(f_old) - f_up
    introduced = _neutral(f_up) - f_old
    return removed.isdisjoint(f_ours) and introduced <= f_ours


def _tree(text: str) -> str | None:
    """The statement's syntax tree (``ast.dump``), or None when it is not whole Python. Each line
    is stripped of its indent (a label's text is), and a compound statement's header gets a
    ``pass`` body."""
    flat = "\n".join(line.strip() for line in text.splitlines())
    for candidate in (flat, flat + " pass"):
        try:
            return ast.dump(ast.parse(candidate))
        except SyntaxError:
            continue
    return None


def same_text(ours: str, upstream: str) -> bool:
    """Equal as Python (the same syntax tree: layout, parentheses, trailing commas, comments
    and the choice of quote do not count); for text that does not parse alone (a line out of a
    longer statement), equal after dropping comments, whitespace and the choice of quote."""
    a, b = _tree(ours), _tree(upstream)
    if a is not None and b is not None:
        return a == b

    def norm(t: str) -> str:
        return re.sub(r"\s+", "", _code(t)).replace("'", '"').rstrip(",")

    return norm(ours) == norm(upstream)


@dataclass
class Record:
    """One label's outcome in one mode."""

    id: str
    path: str
    line: int
    span: tuple[int, int]
    status: str
    kind: str
    form: str
    old_text: str
    upstream: str
    rewritten: bool = False
    ours: str = ""
    agrees: bool = False
    same: bool = False
    why: str = ""  # generate --explain's answer, for a miss (replay.py --why)


def score(
    labels: list[dict], hunks: dict[str, list[Hunk]], old: dict[str, list[str]], eq: Equivalences
) -> list[Record]:
    """One Record per label: whether the series touched its old span, and if so how.
    ``old``: path -> the old file's lines."""
    out = []
    sides: dict[str, Sides] = {}  # path -> its new text and statements, once per file
    for lab in labels:
        first, last = lab.get("old_span") or (lab["old_line"], lab["old_line"])
        rec = Record(
            id=lab["id"],
            path=lab["path"],
            line=lab["old_line"],
            span=(first, last),
            status=lab["status"],
            kind=lab.get("kind", ""),
            form=lab.get("form", ""),
            old_text=lab.get("old_text", ""),
            upstream=lab.get("new_text", ""),
        )
        path_hunks, old_lines = hunks.get(lab["path"], []), old.get(lab["path"], [])
        if lab["path"] not in sides and any(h.touches(first, last) for h in path_hunks):
            sides[lab["path"]] = Sides.of(old_lines, path_hunks)
        hit = rewrite_at(path_hunks, first, last, old_lines, sides=sides.get(lab["path"]))
        if hit is not None:
            rec.rewritten = True
            before, rec.ours = hit
            if rec.status == "neutralized":
                rec.agrees = agrees(before, rec.ours, rec.upstream, rec.form, eq)
                rec.same = same_text(rec.ours, rec.upstream)
        out.append(rec)
    return out


@dataclass
class Tally:
    sites: int = 0
    rewritten: int = 0
    agree: int = 0
    same: int = 0

    def add(self, r: Record) -> None:
        self.sites += 1
        self.rewritten += r.rewritten
        self.agree += r.agrees
        self.same += r.same


def summarize(records: list[Record]) -> dict[str, dict[str, Tally]]:
    """Tallies of the neutralized labels by kind, by form and overall; and of the kept ones."""
    out: dict[str, dict[str, Tally]] = {"kind": {}, "form": {}, "all": {}, "kept": {}}
    for r in records:
        if r.status != "neutralized":
            out["kept"].setdefault("kept", Tally()).add(r)
            continue
        for group, key in (("kind", r.kind), ("form", r.form), ("all", "all")):
            out[group].setdefault(key, Tally()).add(r)
    for group in ("kind", "form"):
        order = Counter({k: t.sites for k, t in out[group].items()})
        out[group] = {k: out[group][k] for k, _ in order.most_common()}
    return out


def reason_keys(why: str) -> list[str]:
    """``HN201 LEFT: unguarded (the neutral ...): no ...`` -> ``HN201 unguarded``: the rule and
    the head of its reason, once per finding, for counting misses by what stops them."""
    keys = set()
    for part in why.split("; "):
        rule, _, verdict = part.partition(" ")
        verdict = re.sub(r"^(LEFT|left)(, the code is about CUDA itself)?:\s*", "", verdict)
        head = re.split(r" \(|: ", verdict, maxsplit=1)[0]
        keys.add(f"{rule} {head}".strip() if rule.startswith("HN") else part)
    return sorted(keys)


STOPS = ("gate", "declined", "no codemod", "no finding")


def stop(why: str) -> str:
    """What stops a miss: the step nearest a rewrite among its findings. ``gate``: the intent
    gate's evidence (a ``cuda-*`` kind) holds back an existing rewrite; ``declined``: the codemod
    declines the site (no device in scope, unguarded, a parameter default, no rewrite
    matched, ...); ``no codemod``: its rules are manual or report-only; ``no finding``: the
    audit has nothing there."""
    if why.startswith("explain failed"):
        return "declined"
    best = len(STOPS) - 1
    for key in reason_keys(why):
        rule, _, head = key.partition(" ")
        if not rule.startswith("HN"):
            continue
        if head.startswith("cuda-"):
            best = min(best, 0)
        elif head == "manual rule" or head.startswith("fix style"):
            best = min(best, 2)
        else:
            best = min(best, 1)
    return STOPS[best]
