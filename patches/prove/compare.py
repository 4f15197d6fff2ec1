"""Do two ``patches.prove`` outputs prove the same thing? (``python -m patches.prove.compare A B``)

For checking that a change to how prove runs (speed, reuse) keeps what it proves: per bundle,
each hunk's verdict per device, the devices it is proven on, its CPU behaviour differences, the
mutants tried and the tests that killed them, the bundle's summary counts; SUMMARY.md's table
without its seconds column; the series, byte for byte (use ``--reproducible`` for both runs).
Prints one line per item and exits 0 when everything is the same, 1 otherwise.
"""

from __future__ import annotations

import filecmp
import json
import sys
from pathlib import Path

SUMMARY_KEYS = ("regression", "gain", "hunks", "hunks_proven", "verdicts", "behaviour_changed")


def _table(out: Path) -> list[str]:
    """SUMMARY.md's rows without the seconds column (the header names it)."""
    rows = [ln for ln in (out / "SUMMARY.md").read_text().splitlines() if ln.startswith("| ")]
    if not rows:
        return []
    cells = rows[0].split("|")
    drop = next((i for i, c in enumerate(cells) if c.strip() == "seconds"), -1)
    return ["|".join(c for i, c in enumerate(r.split("|")) if i != drop) for r in rows]


def _mutants(h: dict) -> dict:
    return {
        dev: [(x["operator"], x["line"], x.get("killed_by")) for x in m.get("mutants", [])]
        for dev, m in h.get("mutation", {}).items()
    }


def verdicts(out: Path) -> dict:
    """{(bundle, hunk key or "summary"): what it proves}."""
    found: dict = {}
    for path in sorted(out.glob("*/validation.json")):
        report = json.loads(path.read_text())
        bundle = path.parent.name
        for h in report.get("hunks", []):
            found[(bundle, h["key"])] = {
                "verdicts": h.get("verdicts"),
                "proven_on": h.get("proven_on"),
                "behaviour": len(h.get("oracle", {}).get("differences", [])),
                "mutants": _mutants(h),
            }
        s = report.get("summary")
        found[(bundle, "summary")] = {k: s.get(k) for k in SUMMARY_KEYS} if s else None
    return found


def compare(a: Path, b: Path, log=print) -> bool:
    va, vb = verdicts(a), verdicts(b)
    same = True
    for key in sorted(set(va) | set(vb)):
        ok = va.get(key) == vb.get(key)
        same &= ok
        log(
            f"{'same' if ok else 'DIFFERENT'} {key[0]} {key[1]}"
            + ("" if ok else f": {va.get(key)} / {vb.get(key)}")
        )
    ok = _table(a) == _table(b)
    same &= ok
    log(f"{'same' if ok else 'DIFFERENT'} SUMMARY.md table (seconds column left out)")
    for series in sorted(a.glob("*/series")):
        other = b / series.parent.name / "series"
        d = filecmp.dircmp(series, other) if other.is_dir() else None
        ok = d is not None and not (d.diff_files or d.left_only or d.right_only)
        same &= ok
        log(f"{'same' if ok else 'DIFFERENT'} {series.parent.name}/series")
    log("identical" if same else "NOT identical")
    return same


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or not all((Path(x) / "SUMMARY.md").is_file() for x in args):
        print(
            "usage: python -m patches.prove.compare OUT_A OUT_B (two prove --out folders)",
            file=sys.stderr,
        )
        return 2
    return 0 if compare(Path(args[0]), Path(args[1])) else 1


if __name__ == "__main__":
    sys.exit(main())
