"""The terminal view of a validation report (rich tables): before -> after per device, then
per-hunk device coverage."""

from __future__ import annotations

from patches.validate import hunks as hunkcov
from patches.validate.report.markdown import cell, rows

STYLE = {"regression": "bold red", "gain": "green", "unchanged": ""}


def _styled(report: dict, dev: str, cells: dict) -> str:
    c = cells.get(dev)
    text = cell(report, dev, c)
    return f"[{STYLE[c.change]}]{text}[/]" if c is not None and STYLE[c.change] else text


def render_table(report: dict, console) -> None:
    from rich.table import Table

    devs = list(report["devices"])
    t = Table(title="patches.validate: before -> after per device")
    t.add_column("test", overflow="fold")
    t.add_column("change")
    for d in devs:
        info = report["devices"][d]
        t.add_column(d if info["available"] else f"{d} (absent)")
    for test, worst, cells in rows(report):
        t.add_row(
            test,
            f"[{STYLE[worst]}]{worst}[/]" if STYLE[worst] else worst,
            *[_styled(report, d, cells) for d in devs],
        )
    console.print(t)
    for d, info in report["devices"].items():
        if not info["available"]:
            console.print(f"[dim]{d}: absent: {info['detail']}[/]")
    if report.get("hunks"):
        h = Table(title="hunk coverage: tests that ran an added line, per device")
        h.add_column("hunk")
        h.add_column("file", overflow="fold")
        for d in devs:
            h.add_column(d)
        for e in report["hunks"]:
            h.add_row(
                f"{e['patch']} #{e['hunk']}",
                e["path"],
                *[hunkcov.cell(e, d).replace("**", "") for d in devs],
            )
        console.print(h)
