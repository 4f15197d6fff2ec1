"""``replay.py --compare BASE.json``: what changed since an earlier run's ``--json``.

Per mode present in both: the totals before and after, then every label whose outcome changed:
newly rewritten, no longer rewritten (a lost rewrite), agreement gained or lost, and kept sites
newly rewritten or no longer rewritten. Labels are matched by id, so both runs must come from
the same label list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the scorer's record; this module is also imported as tests.benchmarks.*
    from replay_score import Record


def _state(rec: dict) -> tuple[bool, bool]:
    return bool(rec["rewritten"]), bool(rec["agrees"])


def changes(before: list[dict], after: list[Record]) -> dict[str, list[Record]]:
    """Labels whose outcome differs, by what changed."""
    old = {r["id"]: _state(r) for r in before}
    out: dict[str, list[Record]] = {
        k: [] for k in ("rewritten", "lost", "agrees", "disagrees", "kept+", "kept-")
    }
    for r in after:
        if r.id not in old:
            continue
        was_rewritten, was_agreeing = old[r.id]
        if r.status != "neutralized":
            if r.rewritten != was_rewritten:
                out["kept+" if r.rewritten else "kept-"].append(r)
        elif r.rewritten != was_rewritten:
            out["rewritten" if r.rewritten else "lost"].append(r)
        elif r.rewritten and r.agrees != was_agreeing:
            out["agrees" if r.agrees else "disagrees"].append(r)
    return out


TITLES = {
    "rewritten": "newly rewritten",
    "lost": "no longer rewritten (lost)",
    "agrees": "now agree with upstream",
    "disagrees": "no longer agree with upstream",
    "kept+": "kept sites newly rewritten",
    "kept-": "kept sites no longer rewritten",
}


def _totals(records) -> tuple[int, int, int]:
    get = (lambda r, k: r[k]) if records and isinstance(records[0], dict) else getattr
    neut = [r for r in records if get(r, "status") == "neutralized"]
    kept = [r for r in records if get(r, "status") != "neutralized"]
    return (
        sum(bool(get(r, "rewritten")) for r in neut),
        sum(bool(get(r, "agrees")) for r in neut),
        sum(bool(get(r, "rewritten")) for r in kept),
    )


def show(base: Path, results: list) -> None:
    data = json.loads(base.read_text())
    modes = {m["mode"]: m for m in data["modes"]}
    for res in results:
        if res.mode not in modes:
            print(f"\n[{res.mode}] not in {base}: nothing to compare")
            continue
        ids = {r.id for r in res.records}  # a --files run compares its own labels only
        before = [r for r in modes[res.mode]["records"] if r["id"] in ids]
        (r0, a0, k0), (r1, a1, k1) = _totals(before), _totals(res.records)
        print(
            f"\n[{res.mode}] against {base.name}: rewritten {r0} -> {r1}, agree {a0} -> {a1}, "
            f"kept sites rewritten {k0} -> {k1}"
        )
        for key, recs in changes(before, res.records).items():
            if not recs:
                continue
            print(f"  {TITLES[key]}: {len(recs)}")
            for r in recs:
                text = f"+ {r.ours}" if r.rewritten else f"- {r.old_text}"
                print(f"    {r.path}:{r.line}  {r.kind or 'kept'}  {' '.join(text.split())[:100]}")
