"""The matrix as a grid: (device, dtype) columns and one row per op, for every view."""

from __future__ import annotations


def pivot(data: dict) -> tuple[list[tuple[str, str]], dict[tuple[str, str], dict[str, dict]]]:
    """Columns (device, dtype) and rows op -> {(device, dtype): cell}."""
    cols = [(d, t) for d in data["devices"] for t in data["dtypes"]]
    rows: dict = {}
    for c in data["cells"]:
        rows.setdefault(c["op"], {})[(c["device"], c["dtype"])] = c
    return cols, dict(sorted(rows.items()))
