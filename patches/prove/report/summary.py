"""SUMMARY.md of a prove run: one row per subsystem, then the absent devices and regressions."""

from __future__ import annotations

from patches.common.runpool import AUTO_XDIST
from patches.prove.report.bundle import torch_version

NO_CHANGE = "no change needed"  # status of a subsystem whose series is empty


VERDICTS = ("checked", "unchecked", "unexercised")


def _verdicts(r: dict, dev: str) -> str:
    """``checked / unchecked / unexercised`` counts of one device, or why there are none."""
    where = (r.get("devices") or {}).get(dev, "")
    if where.startswith("absent"):
        return "absent"
    counts = (r.get("verdicts") or {}).get(dev)
    if not counts:
        return "-"
    return " / ".join(str(counts.get(v, 0)) for v in VERDICTS)


def _row(r: dict, devices: list[str]) -> str:
    if r["status"] == NO_CHANGE:
        dashes = " - |" * (len(devices) + 6)
        return (
            f"| {r['subsystem']} | 0 |{dashes} {r['seconds']} | "
            f"{NO_CHANGE} ({r['findings']} findings, all left with reasons) |"
        )
    cells = " | ".join(_verdicts(r, d) for d in devices)
    proven = " / ".join(str(r["hunks_proven"].get(d, 0)) for d in devices)
    return (
        f"| {r['subsystem']} | {r['patches']} | {r['hunks']} | {cells} | {proven} | "
        f"{r.get('behaviour_changed', 0)} | {r['tests']} | {r['gains']} | {r['regressions']} | "
        f"{r['seconds']} | {r['status']} |"
    )


def _workers(rows: list[dict], xdist: int) -> str:
    """pytest-xdist processes per run: the number given, or what ``auto`` made of it."""
    if xdist != AUTO_XDIST:
        return str(xdist or 1)
    made = {r["subsystem"]: r["xdist"] or 1 for r in rows if "xdist" in r}
    if len(set(made.values())) == 1:
        return f"{next(iter(made.values()))} (auto)"
    return "auto: " + ", ".join(f"{k} {n}" for k, n in made.items()) if made else "auto"


def summary_markdown(rows: list[dict], devices: list[str], seconds: float, xdist: int) -> str:
    lines = [
        "# patches.prove: summary",
        "",
        f"torch {torch_version()}; devices {', '.join(devices)}; pytest-xdist processes per run "
        f"{_workers(rows, xdist)}; {seconds:.0f}s in all.",
        "",
        "Hunks per device: **checked** (a mutant of the hunk's added lines was killed by a test "
        "that ran it on that device) / **unchecked** (it ran, every mutant survived) / "
        "**unexercised** (no test ran it there). Proven = checked, with no CPU behaviour change "
        "(the oracle compares what the changed functions return before and after on cpu).",
        "",
        "| subsystem | patches | hunks | "
        + " | ".join(f"{d}: checked / unchecked / unexercised" for d in devices)
        + " | proven on "
        + " / ".join(devices)
        + " | cpu behaviour changed | tests run | gains | regressions | seconds | status |",
        "|---|---|---|" + "---|" * len(devices) + "---|---|---|---|---|---|---|",
    ]
    lines += [_row(r, devices) for r in rows]
    bounds = sorted({r["bound"] for r in rows if r.get("bound")})
    if bounds:
        lines.append(f"\nMutation check bound: {'; '.join(bounds)}.")
    absent = {
        d: w for r in rows for d, w in (r.get("devices") or {}).items() if w.startswith("absent")
    }
    for d, why in absent.items():
        lines.append(f"\n{d}: {why}")
    changed = [r for r in rows if r.get("behaviour")]
    if changed:
        lines += ["", "## CPU behaviour changed", ""]
        for r in changed:
            lines.append(f"- **{r['subsystem']}**:")
            lines += [f"  - {x}" for x in r["behaviour"][:20]]
    bad = [r for r in rows if r.get("regressed")]
    if bad:
        lines += ["", "## Regressions", ""]
        for r in bad:
            lines.append(f"- **{r['subsystem']}** (series `{r['subsystem']}/series/`):")
            lines += [f"  - {x}" for x in r["regressed"]]
    return "\n".join(lines) + "\n"
