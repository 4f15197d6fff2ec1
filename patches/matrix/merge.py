"""Join the matrix.json of every shard of one run into the matrix of the whole run.

The shards must come from one run: the same torch, dtypes, op selection, devices and shard count,
each index present exactly once. Anything else is a :class:`ShardError` naming what is wrong;
nothing is written then.
"""

from __future__ import annotations

import json
from pathlib import Path

from patches.common.shard import ShardError

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


def _check_runs(shards: list[tuple[str, dict]]) -> int:
    """The shard count; raises ShardError unless the shards are of one run, each device set
    complete (every shard index once)."""
    first_path, first = shards[0]
    for path, data in shards[1:]:
        for key in _SAME:
            if first.get(key) != data.get(key):
                raise ShardError(
                    f"shards from different runs: {key} {first.get(key)!r} ({first_path}) "
                    f"vs {data.get(key)!r} ({path})"
                )
    counts = {(d.get("shard") or {"count": 1})["count"] for _, d in shards}
    if len(counts) != 1:
        raise ShardError(f"shards of different splits: counts {sorted(counts)}")
    count = counts.pop()
    groups: dict[tuple[str, ...], dict[int, str]] = {}
    for path, d in shards:
        devs = tuple(sorted(d["devices"]))
        seen = groups.setdefault(devs, {})
        i = _index((path, d))
        if i in seen:
            raise ShardError(
                f"shard {i}/{count} of {','.join(devs)} given twice: {seen[i]} and {path}"
            )
        seen[i] = path
    for devs, seen in groups.items():
        missing = sorted(set(range(1, count + 1)) - set(seen))
        if missing:
            raise ShardError(
                f"missing shard(s) {', '.join(f'{i}/{count}' for i in missing)}"
                + (f" of {','.join(devs)}" if len(groups) > 1 else "")
            )
    return count


def _cells(shards: list[tuple[str, dict]]) -> list[dict]:
    cells, keys = [], {}
    for path, d in shards:
        for c in d["cells"]:
            k = (c["op"], c["dtype"], c["device"])
            if k in keys:
                raise ShardError(f"cell {k} in two shards: {keys[k]} and {path}")
            keys[k] = path
            cells.append(c)
    return cells


def _devices(shards: list[tuple[str, dict]]) -> dict[str, dict]:
    devices: dict[str, dict] = {}
    for _, d in shards:
        for dev, info in d["devices"].items():
            if dev not in devices or (info.get("available") and not devices[dev].get("available")):
                devices[dev] = info
    return devices


def _fill_absent(cells: list[dict], devices: dict[str, dict]) -> None:
    """A device absent in its own job has no (op, dtype) keys there: give it the others' keys."""
    have = {(c["op"], c["dtype"], c["device"]) for c in cells}
    keys = sorted({(c["op"], c["dtype"]) for c in cells})
    for dev, info in devices.items():
        if not info.get("available"):
            cells += [
                _absent(op, dt, dev, info.get("detail", ""))
                for op, dt in keys
                if (op, dt, dev) not in have
            ]


def merge(shards: list[tuple[str, dict]]) -> dict:
    """The whole run's matrix data from its shards (order of the inputs does not matter).

    Shards may also split the devices (one job per device and shard, as in CI): each device set
    must then be complete (every shard index once); their columns are joined."""
    _check_runs(shards)
    cells = _cells(shards)
    devices = _devices(shards)
    _fill_absent(cells, devices)
    summary = {dev: {} for dev in devices}
    for c in cells:
        summary[c["device"]][c["status"]] = summary[c["device"]].get(c["status"], 0) + 1
    seconds: dict[str, float] = {}
    for _, d in shards:
        for dev, s in d.get("device_seconds", {}).items():
            seconds[dev] = round(seconds.get(dev, 0.0) + s, 2)
    merged = {k: shards[0][1].get(k) for k in ("schema", "tool") + _SAME}
    merged.update(
        devices=devices,
        summary=summary,
        device_seconds=seconds,
        cells=sorted(cells, key=lambda c: (c["op"], c["dtype"], c["device"])),
        tests=[t for _, d in sorted(shards, key=_index) for t in d.get("tests", [])],
        runs=[r for _, d in sorted(shards, key=_index) for r in d.get("runs", [])],
        worker_failures={
            f"{dev} ({path})": why
            for path, d in sorted(shards, key=_index)
            for dev, why in d.get("worker_failures", {}).items()
        },
        duration_s=max(d.get("duration_s", 0.0) for _, d in shards),
        shard=None,
        merged_from=len(shards),
    )
    return merged


def _absent(op: str, dtype: str, device: str, detail: str) -> dict:
    return {
        "op": op,
        "device": device,
        "dtype": dtype,
        "status": "absent",
        "samples": 0,
        "passed": 0,
        "failed": 0,
        "errors": 0,
        "skipped": 0,
        "refused": 0,
        "duration": 0.0,
        "message": detail,
    }


def _index(item: tuple[str, dict]) -> int:
    return (item[1].get("shard") or {"index": 1})["index"]
