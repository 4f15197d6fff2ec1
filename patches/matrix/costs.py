"""The matrix's shard cost table: seconds per OpInfo op id, measured and committed.

Refresh it from a (full) run: ``python -m patches.matrix costs matrix-out/matrix.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

COSTS = Path(__file__).with_name("costs.json")


def load_costs(path: Path = COSTS) -> dict[str, float]:
    if not path.is_file():
        return {}
    return {str(k): float(v) for k, v in json.loads(path.read_text())["seconds"].items()}


def cost_table(matrix: dict) -> dict:
    """The cost table of one matrix run: seconds per op id over all its cells."""
    seconds: dict[str, float] = {}
    for c in matrix["cells"]:
        seconds[c["op"]] = seconds.get(c["op"], 0.0) + float(c.get("duration") or 0.0)
    return {
        "about": "seconds per OpInfo op id (all dtypes and devices of one run); "
        "refresh: python -m patches.matrix costs MATRIX.json",
        "torch": matrix.get("torch", ""),
        "devices": sorted(matrix["devices"]),
        "dtypes": matrix.get("dtypes", []),
        "seconds": {k: round(v, 3) for k, v in sorted(seconds.items())},
    }
