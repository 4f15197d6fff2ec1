"""The matrix as Markdown (``matrix.md``): status counts per device, then one row per op."""

from __future__ import annotations

from patches.matrix.report.grid import pivot


def _cell(c: dict | None) -> str:
    if c is None:
        return ""
    return f"{c['status']} ({c['passed']}/{c['samples']})" if c["samples"] else c["status"]


def to_markdown(data: dict) -> str:
    cols, rows = pivot(data)
    statuses = sorted({s for v in data["summary"].values() for s in v})
    lines = [
        "# OpInfo conformance matrix",
        "",
        "Each OpInfo sample run on the device and compared with CPU. Cell: status "
        "(passed/samples).",
        "",
    ]
    if "refused" in statuses:
        lines += [
            "`refused`: the device's dtype policy declined the sample's dtype "
            "(documented behaviour, not a conformance error).",
            "",
        ]
    lines += ["| device | " + " | ".join(statuses) + " |", "|---|" + "---|" * len(statuses)]
    for dev, cnt in data["summary"].items():
        info = data["devices"][dev]
        label = dev if info["available"] else f"{dev} (absent: {info['detail']})"
        lines.append(f"| {label} | " + " | ".join(str(cnt.get(s, 0)) for s in statuses) + " |")
    lines += [
        "",
        "| op | " + " | ".join(f"{d} {t}" for d, t in cols) + " |",
        "|---|" + "---|" * len(cols),
    ]
    for op, cells in rows.items():
        lines.append(f"| `{op}` | " + " | ".join(_cell(cells.get(k)) for k in cols) + " |")
    if data["tests"]:
        lines += ["", "| test | device | status |", "|---|---|---|"]
        lines += [f"| `{o['test']}` | {o['device']} | {o['status']} |" for o in data["tests"]]
    return "\n".join(lines) + "\n"
