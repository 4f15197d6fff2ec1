"""Matrix worker: run upstream OpInfo samples on one device and compare each with CPU.

Started by patches.matrix through ``device_boot.py DEVICE -m patches.matrix.opinfo_worker ...`` so the
device is registered before the harness loads. Writes one JSON line per event to ``--out``
(flushed as it goes): ``start`` before each (op, dtype), ``cell`` with its result, ``done`` at the
end; a crash therefore names the op it died in and the parent resumes after it.

The comparison itself (tolerances, upstream's marks, the device's declared skips, dtype-policy
refusals, random ops) is ``patches.matrix.compare``, shared with the device's own OpInfo test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

import torch
from torch.testing._internal.common_methods_invocations import op_db

from patches.common import shard
from patches.matrix.compare import declared_skips, first_line, op_id, refused, run_cell
from patches.matrix.costs import load_costs

__all__ = ["main", "op_id", "refused", "run_cell"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="patches.matrix.opinfo_worker")
    ap.add_argument("--device", required=True)
    ap.add_argument("--dtypes", default="float32")
    ap.add_argument("--ops", default="", help="comma list of op ids (name or name.variant)")
    ap.add_argument("--skip", default="", help="file with 'op dtype' lines already done")
    ap.add_argument("--max-samples", type=int, default=1_000_000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--list", action="store_true", help="only list the selected op ids")
    ap.add_argument("--package", help="package declaring the device's opinfo_skips.yaml")
    ap.add_argument("--shard", action="append", default=[], metavar="I/N", help="nested shards")
    a = ap.parse_args(argv)
    dtypes = [getattr(torch, d) for d in a.dtypes.split(",")]
    wanted = set(a.ops.split(",")) - {""}
    ops = sorted(
        (op for op in op_db if not wanted or op_id(op) in wanted or op.name in wanted), key=op_id
    )
    if a.shard:
        mine = set(shard.select([op_id(o) for o in ops], a.shard, load_costs()))
        ops = [o for o in ops if op_id(o) in mine]
    done = set()
    if a.skip:
        with open(a.skip) as fh:
            done = {tuple(ln.split()) for ln in fh if ln.strip()}
    device = a.device if ":" in a.device else f"{a.device}:0" if a.device != "cpu" else "cpu"
    declared = declared_skips(torch.device(device).type, a.package)
    with open(a.out, "a", buffering=1) as out:
        if a.list:
            out.write(json.dumps({"event": "ops", "ops": [op_id(o) for o in ops]}) + "\n")
        for op in ops if not a.list else ():
            for dtype in dtypes:
                dname = str(dtype).removeprefix("torch.")
                if (op_id(op), dname) in done:
                    continue
                out.write(json.dumps({"event": "start", "op": op_id(op), "dtype": dname}) + "\n")
                if os.environ.get("HN_MATRIX_CRASH_AT") == op_id(op):
                    os.abort()  # fault injection: proves the parent resumes past a dead worker
                t0 = time.perf_counter()
                try:
                    cell = run_cell(op, device, dtype, a.max_samples, declared)
                except Exception as e:  # noqa: BLE001 - never lose the rest of the matrix
                    cell = {
                        "status": "error",
                        "message": first_line(e),
                        "trace": traceback.format_exc(limit=3),
                    }
                cell.update(
                    event="cell",
                    op=op_id(op),
                    dtype=dname,
                    duration=round(time.perf_counter() - t0, 4),
                )
                out.write(json.dumps(cell) + "\n")
        out.write(json.dumps({"event": "done"}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
