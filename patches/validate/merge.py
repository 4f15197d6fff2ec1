"""Shard reports joined into one.

    python -m patches.validate merge SHARD.json ... [-o merged.json] [--junit FILE]
        [--markdown FILE] [--format json|markdown]

Shards must be of one validation: the same series, devices and split (``I/N``, each index once).
Comparisons and outcomes are the union (a test file runs in exactly one shard); hunk coverage
is the union of tests per hunk and device; the summary is recomputed.
"""

from __future__ import annotations

import json
from pathlib import Path

from patches.common.outcome import CHANGES
from patches.validate import checks
from patches.validate import hunks as hunkcov


class MergeError(ValueError):
    pass


def load(paths: list[str]) -> list[dict]:
    out = []
    for p in paths:
        try:
            data = json.loads(Path(p).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise MergeError(f"{p}: not a patches.validate JSON report ({e})") from None
        if not isinstance(data, dict) or data.get("tool") != "patches.validate":
            raise MergeError(f"{p}: not a patches.validate JSON report")
        out.append(data)
    if not out:
        raise MergeError("merge: give the JSON report of every shard")
    return out


def check_shards(reports: list[dict]) -> list[str | None]:
    """The shards' ``I/N`` specs; raises MergeError unless they are of one validation and split
    (each index once)."""
    first = reports[0]
    for r in reports[1:]:
        for key in ("series", "touched"):
            if r.get(key) != first.get(key):
                raise MergeError(f"shards of different validations: {key} differs")
        if list(r["devices"]) != list(first["devices"]):
            raise MergeError("shards of different validations: devices differ")
    shards = [r["selection"].get("shard") for r in reports]
    if all(shards):
        counts = {s.split("/")[1] for s in shards}
        if len(counts) != 1:
            raise MergeError(f"shards of different splits: {sorted(shards)}")
        n = int(counts.pop())
        idx = sorted(int(s.split("/")[0]) for s in shards)
        if idx != list(range(1, n + 1)):
            raise MergeError(f"need shards 1..{n} once each, got {', '.join(shards)}")
    return shards


def _devices(reports: list[dict]) -> dict:
    devices = dict(reports[0]["devices"])
    for r in reports[1:]:  # a device absent in one shard but present in another: present
        for d, info in r["devices"].items():
            if info["available"] and not devices[d]["available"]:
                devices[d] = info
    return devices


def _summary(reports: list[dict], comps: list[dict], entries: list[dict], devices) -> dict:
    summary = {c: sum(1 for x in comps if x["change"] == c) for c in CHANGES}
    summary["by_device"] = {
        d: {c: sum(1 for x in comps if x["device"] == d and x["change"] == c) for c in CHANGES}
        for d in devices
    }
    summary["incomplete"] = [x for r in reports for x in r["summary"].get("incomplete", ())]
    summary["hunks"] = len(entries)
    summary["hunks_proven"] = {d: sum(1 for h in entries if d in h["proven_on"]) for d in devices}
    if any("verdicts" in h for h in entries):
        summary.update(checks.tally(entries, list(devices)))
    return summary


def _coverage(reports: list[dict], devices) -> dict:
    first = reports[0]
    cov = dict(first.get("coverage") or {})
    cov["devices"] = {
        d: next(
            (
                r["coverage"]["devices"].get(d)
                for r in reports
                if (r.get("coverage") or {}).get("devices", {}).get(d) == "measured"
            ),
            (first.get("coverage") or {}).get("devices", {}).get(d, "not measured"),
        )
        for d in devices
    }
    return cov


def merge(reports: list[dict]) -> dict:
    first = reports[0]
    shards = check_shards(reports)
    devices = _devices(reports)
    comps = [c for r in reports for c in r["comparisons"]]
    entries = hunkcov.merge_entries([r.get("hunks") or [] for r in reports])
    checks.merge([r.get("hunks") or [] for r in reports], entries)
    sel = {
        "tests": [t for r in reports for t in r["selection"]["tests"]],
        "reasons": {k: v for r in reports for k, v in r["selection"]["reasons"].items()},
        "node_ids": {k: v for r in reports for k, v in r["selection"].get("node_ids", {}).items()},
        "unreadable": {k: v for r in reports for k, v in r["selection"]["unreadable"].items()},
        "shard": None,
        "merged_from": shards,
        "all_tests": first["selection"].get("all_tests", []),
    }
    return {
        **first,
        "devices": devices,
        "selection": sel,
        "coverage": _coverage(reports, devices),
        "hunks": entries,
        "warnings": sorted({w for r in reports for w in r["warnings"]}),
        "summary": _summary(reports, comps, entries, devices),
        "comparisons": comps,
        "outcomes": [o for r in reports for o in r["outcomes"]],
        "runs": [x for r in reports for x in r["runs"]],
        "duration_s": round(sum(r["duration_s"] for r in reports), 2),
        "work": None,
    }
