"""Join the matrix.json of every shard of one run into the matrix of the whole run.

The shards must come from one run: the same torch, dtypes, op selection, devices and shard count,
each index present exactly once. Anything else is a :class:`ShardError` naming what is wrong;
nothing is written then.
"""

from __future__ import annotations

import json
from pathlib import Path

from patches.matrix.shard import ShardError

_SAME = ("schema", "torch", "dtypes", "ops", "max_samples")


def load(dirs: list[str]) -> list[tuple[str, dict]]:
    out = []
    for d in dirs:
        p = Path(d)
        p = p / "matrix.json" if p.is_dir() else p
        if not p.is_file():
            raise ShardError(f"{d}: no matrix.json (give the --out folder of a shard run)")
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ShardError(f"{p}: not a matrix.json ({e})") from None
        if not isinstance(data, dict) or "cells" not in data or "devices" not in data:
            raise ShardError(f"{p}: not a matrix.json (no cells/devices)")
        out.append((str(p), data))
    if not out:
        raise ShardError("merge: give at least one shard folder")
    return out


def merge(shards: list[tuple[str, dict]]) -> dict:
    """The whole run's matrix data from its shards (order of the inputs does not matter)."""
    first_path, first = shards[0]
    for path, data in shards[1:]:
        for key in _SAME + ("devices",):
            a = first.get(key) if key != "devices" else sorted(first["devices"])
            b = data.get(key) if key != "devices" else sorted(data["devices"])
            if a != b:
                raise ShardError(
                    f"shards from different runs: {key} {a!r} ({first_path}) vs {b!r} ({path})"
                )
    counts = {(d.get("shard") or {"count": 1})["count"] for _, d in shards}
    if len(counts) != 1:
        raise ShardError(f"shards of different splits: counts {sorted(counts)}")
    count = counts.pop()
    seen: dict[int, str] = {}
    for path, d in shards:
        i = (d.get("shard") or {"index": 1})["index"]
        if i in seen:
            raise ShardError(f"shard {i}/{count} given twice: {seen[i]} and {path}")
        seen[i] = path
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise ShardError(f"missing shard(s) {', '.join(f'{i}/{count}' for i in missing)}")
    cells, keys = [], {}
    for path, d in shards:
        for c in d["cells"]:
            k = (c["op"], c["dtype"], c["device"])
            if k in keys:
                raise ShardError(f"cell {k} in two shards: {keys[k]} and {path}")
            keys[k] = path
            cells.append(c)
    devices = {}
    for dev in first["devices"]:
        infos = [d["devices"][dev] for _, d in shards]
        devices[dev] = next((i for i in infos if i.get("available")), infos[0])
    summary = {dev: {} for dev in devices}
    for c in cells:
        summary[c["device"]][c["status"]] = summary[c["device"]].get(c["status"], 0) + 1
    seconds: dict[str, float] = {}
    for _, d in shards:
        for dev, s in d.get("device_seconds", {}).items():
            seconds[dev] = round(seconds.get(dev, 0.0) + s, 2)
    merged = {k: first.get(k) for k in ("schema", "tool") + _SAME}
    merged.update(
        devices=devices,
        summary=summary,
        device_seconds=seconds,
        cells=sorted(cells, key=lambda c: (c["op"], c["dtype"], c["device"])),
        tests=[t for _, d in sorted(shards, key=_index) for t in d.get("tests", [])],
        runs=[r for _, d in sorted(shards, key=_index) for r in d.get("runs", [])],
        duration_s=max(d.get("duration_s", 0.0) for _, d in shards),
        shard=None,
        merged_from=count,
    )
    return merged


def _index(item: tuple[str, dict]) -> int:
    return (item[1].get("shard") or {"index": 1})["index"]
