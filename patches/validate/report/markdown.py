"""The Markdown view of a validation report (a PR's test plan): the before/after table per
device, the regressions with the hunks they ran, and per-hunk device coverage."""

from __future__ import annotations

from patches.common.outcome import Comparison, generic_id
from patches.validate import checks
from patches.validate import hunks as hunkcov


def rows(report: dict) -> list[tuple[str, str, dict[str, Comparison]]]:
    """(generic test id, worst change, {device: Comparison}) sorted regressions first."""
    table: dict[str, dict[str, Comparison]] = {}
    for d in report["comparisons"]:
        c = Comparison(**{k: d[k] for k in Comparison.__dataclass_fields__})
        table.setdefault(generic_id(c.test, c.device), {})[c.device] = c
    order = {"regression": 0, "gain": 1, "unchanged": 2}
    out = []
    for test, cells in table.items():
        worst = min((c.change for c in cells.values()), key=order.__getitem__)
        out.append((test, worst, cells))
    out.sort(key=lambda r: (order[r[1]], r[0]))
    return out


def display_id(test: str) -> str:
    """A collection failure reads as such (``test_x.py (collection error)``), not as a test."""
    if test.endswith("::<collection>"):
        return f"{test[: -len('::<collection>')]} (collection error)"
    return test


def cell(report: dict, dev: str, c: Comparison | None) -> str:
    """One device's cell of a test's row: ``absent``, ``-``, ``pass`` or ``pass -> fail``."""
    if not report["devices"][dev]["available"]:
        return "absent"
    if c is None:
        return "-"
    return c.before if c.before == c.after else f"{c.before} -> {c.after}"


def _headline(report: dict) -> list[str]:
    s = report["summary"]
    lines = [
        f"**patches.validate**: {s['regression']} regression(s), {s['gain']} gain(s), "
        f"{s['unchanged']} unchanged; devices: "
        + ", ".join(
            f"{d} ({'absent: ' + i['detail'] if not i['available'] else 'ok'})"
            for d, i in report["devices"].items()
        )
    ]
    if s.get("incomplete"):
        lines += [
            "",
            "**Incomplete** (no verdict: a regression cannot be ruled out where a run did not"
            " finish): " + "; ".join(s["incomplete"]),
        ]
    return lines


def render_markdown(report: dict, hunks: bool = True) -> str:
    devs = list(report["devices"])
    lines = [
        *_headline(report),
        "",
        "| test | change | " + " | ".join(devs) + " |",
        "|---|---|" + "---|" * len(devs),
    ]
    for test, worst, cells in rows(report):
        lines.append(
            f"| `{display_id(test)}` | {worst} | "
            + " | ".join(cell(report, d, cells.get(d)) for d in devs)
            + " |"
        )
    regs = [c for c in report["comparisons"] if c["change"] == "regression"]
    if regs:
        lines += ["", "Regressions:"]
        lines += [
            f"- `{display_id(c['test'])}` on {c['device']}: {c['before']} -> {c['after']}"
            + (f" ({c['message']})" if c["message"] else "")
            + (f"; it ran {', '.join(c['hunks_run'])}" if c.get("hunks_run") else "")
            for c in regs
        ]
    if hunks:
        lines += ["", *render_hunks_markdown(report)]
    return "\n".join(lines) + "\n"


def render_hunks_markdown(report: dict, command=None) -> list[str]:
    """Per-hunk verdicts (checked / unchecked / unexercised per device, patches.validate.checks)
    or, in a report without them, device coverage: which added lines ran where. ``command(device,
    node id)``: the line that reruns one verdict (default: the ``patches.validate`` line)."""
    devs = list(report["devices"])
    cov = report.get("coverage") or {}
    entries = report.get("hunks") or []
    if not cov.get("enabled"):
        return ["Hunk coverage: not measured (`--no-coverage`)."]
    if any("verdicts" in e for e in entries):
        return checks.render_markdown(report, command or checks.validate_rerun(report))
    proven = report["summary"].get("hunks_proven", {})
    lines = [
        f"**Hunk coverage** ({len(entries)} hunks; proven = an added line ran in a test that "
        "passes after the series: "
        + ", ".join(f"{d} {proven.get(d, 0)}/{len(entries)}" for d in devs)
        + ")",
        "",
        "| hunk | file | " + " | ".join(devs) + " |",
        "|---|---|" + "---|" * len(devs),
    ]
    for e in entries:
        lines.append(
            f"| {e['patch']} #{e['hunk']} `{e['header'].split('@@')[1].strip()}` "
            f"| `{e['path']}` | " + " | ".join(hunkcov.cell(e, d) for d in devs) + " |"
        )
    return lines
