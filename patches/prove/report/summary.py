"""SUMMARY.md of a prove run: one row per subsystem, then the absent devices and regressions."""

from __future__ import annotations

from patches.prove.report.bundle import torch_version

NO_CHANGE = "no change needed"  # status of a subsystem whose series is empty


def _row(r: dict, devices: list[str]) -> str:
    if r["status"] == NO_CHANGE:
        return (
            f"| {r['subsystem']} | 0 | - | - | - | - | - | {r['seconds']} | "
            f"{NO_CHANGE} ({r['findings']} findings, all left with reasons) |"
        )
    proven = " / ".join(str(r["hunks_proven"].get(d, 0)) for d in devices)
    return (
        f"| {r['subsystem']} | {r['patches']} | {r['hunks']} | {proven} | {r['tests']} | "
        f"{r['gains']} | {r['regressions']} | {r['seconds']} | {r['status']} |"
    )


def summary_markdown(rows: list[dict], devices: list[str], seconds: float, xdist: int) -> str:
    lines = [
        "# patches.prove: summary",
        "",
        f"torch {torch_version()}; devices {', '.join(devices)}; pytest-xdist processes "
        f"{xdist or 1}; {seconds:.0f}s in all.",
        "",
        "| subsystem | patches | hunks | hunks proven on "
        + " / ".join(devices)
        + " | tests run | gains | regressions | seconds | status |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_row(r, devices) for r in rows]
    absent = {
        d: w for r in rows for d, w in (r.get("devices") or {}).items() if w.startswith("absent")
    }
    for d, why in absent.items():
        lines.append(f"\n{d}: {why}")
    bad = [r for r in rows if r.get("regressed")]
    if bad:
        lines += ["", "## Regressions", ""]
        for r in bad:
            lines.append(f"- **{r['subsystem']}** (series `{r['subsystem']}/series/`):")
            lines += [f"  - {x}" for x in r["regressed"]]
    return "\n".join(lines) + "\n"
