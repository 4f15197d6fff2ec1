"""Which rewrites of ``kept`` sites upstream made in a later release (``replay.py --later``).

A ``kept`` label means only "not changed by the pair's new release". Given the label lists of
the releases after it, in order (``--later`` once per pair: 2.13.0 -> 2.14.1, then 2.14.1 ->
2.15.0), each rewritten kept site is followed release by release, starting at the kept label's
``new_lines``:

1. a ``neutralized`` label of that pair whose old span meets the lines: upstream made the change
   in that release, and the site stops there;
2. else a ``kept`` label of that pair meeting them gives the lines in the next release;
3. else (the drafted lists cover only files with a neutralisation) the lines are carried through
   a line diff of the file's two texts (``text(release, path)``, read from the wheels): lines in an
   unchanged block move with it. A site whose lines do not all survive is ``changed``: upstream
   edited or removed it without a neutralisation the list names (read it by hand).

What is left is still CUDA at the last release. The figures are reported beside the kept-site
rewrites, never instead of them (the target counts every kept rewrite of the pair's own list).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from patches.generate.linediff import opcodes  # noqa: E402

Text = Callable[[str, str], "str | None"]  # (release, path) -> the file's text, None if absent


@dataclass
class Later:
    """The later pairs' verdict on one mode's kept-site rewrites."""

    releases: list[str]  # each later pair's new release, in order
    rewritten: int = 0  # kept sites the mode rewrote
    made: list[tuple[str, str, str]] = field(default_factory=list)  # (site, release, new text)
    changed: list[tuple[str, str]] = field(default_factory=list)  # (site, release)

    @property
    def still_kept(self) -> int:
        return self.rewritten - len(self.made) - len(self.changed)


def chain(data: dict, later: list[dict]) -> None:
    """Refuse lists that do not follow ``data``'s pair release by release."""
    prev = data["pair"]["new"]
    for lst in later:
        old, new = lst["pair"]["old"], lst["pair"]["new"]
        if old != prev:
            raise ValueError(f"--later pairs {old} -> {new}, not from {prev}")
        prev = new


def _span(lab: dict) -> tuple[int, int]:
    lo, hi = lab.get("old_span") or (lab["old_line"], lab["old_line"])
    return lo, hi


def _lines(spans) -> list[int]:
    return [n for lo, hi in spans for n in range(lo, hi + 1)]


def _carried(lines: list[int], ops) -> list[int]:
    """``lines`` of the old text in the new one when each sits in an unchanged block; else []."""
    out = []
    for n in lines:
        hit = next((j1 + n - i1 for t, i1, i2, j1, _ in ops if t == "equal" and i1 < n <= i2), None)
        if hit is None:
            return []
        out.append(hit)
    return out


class Texts:
    """Line diffs of one file between two releases, each computed once."""

    def __init__(self, text: Text):
        self.text, self._ops = text, {}

    def ops(self, path: str, old: str, new: str):
        key = (path, old, new)
        if key not in self._ops:
            a, b = self.text(old, path), self.text(new, path)
            self._ops[key] = (
                [] if a is None or b is None else opcodes(a.splitlines(), b.splitlines())
            )
        return self._ops[key]


def _step(path: str, lines: list[int], lst: dict, texts: Texts):
    """('made', new text) | ('kept', lines in the list's new release) | ('changed', None)."""
    labs = [lab for lab in lst["labels"] if lab["path"] == path]
    meets = [lab for lab in labs if set(_lines([_span(lab)])) & set(lines)]
    made = next((lab for lab in meets if lab["status"] == "neutralized"), None)
    if made is not None:
        return "made", made.get("new_text", "")
    kept = [lab for lab in meets if lab["status"] == "kept" and lab.get("new_lines")]
    if kept:
        return "kept", sorted({n for lab in kept for n in _lines(lab["new_lines"])})
    old, new = lst["pair"]["old"], lst["pair"]["new"]
    moved = _carried(lines, texts.ops(path, old, new))
    return ("kept", moved) if moved else ("changed", None)


def check(data: dict, later: list[dict], records, text: Text) -> Later:
    """``records``: one mode's replay_score.Records for the label list ``data``."""
    chain(data, later)
    res = Later([lst["pair"]["new"] for lst in later])
    by_id = {lab["id"]: lab for lab in data["labels"]}
    texts = Texts(text)
    for r in records:
        if r.status == "neutralized" or not r.rewritten:
            continue
        res.rewritten += 1
        site, lines = f"{r.path}:{r.line}", _lines(by_id[r.id].get("new_lines", []))
        for lst in later:
            how, what = _step(r.path, lines, lst, texts)
            if how == "made":
                res.made.append((site, lst["pair"]["new"], what))
                break
            if how == "changed":
                res.changed.append((site, lst["pair"]["new"]))
                break
            lines = what
    return res


def show(mode: str, res: Later, kept_labels: int) -> None:
    by = Counter(rel for _, rel, _ in res.made)
    per = ", ".join(f"{rel}: {by[rel]}" for rel in res.releases)
    last = res.releases[-1]
    pct = f" ({100 * res.still_kept / kept_labels:.1f} % of {kept_labels:,} kept labels)"
    print(
        f"[{mode}] kept-site rewrites upstream made later: {len(res.made)} of {res.rewritten}"
        f" ({per}); still CUDA at {last}: {res.still_kept}{pct if kept_labels else ''}"
        + (f"; changed otherwise (read by hand): {len(res.changed)}" if res.changed else "")
    )
    for site, rel, text in res.made:
        print(f"  {site}  ->  {rel}: {text.splitlines()[0][:100] if text else ''}")
    for site, rel in res.changed:
        print(f"  {site}  ->  {rel}: changed, no neutralised label")
