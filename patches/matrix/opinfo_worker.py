"""Matrix worker: run upstream OpInfo samples on one device and compare each with CPU.

Started by patches.matrix through ``device_boot.py DEVICE -m patches.matrix.opinfo_worker ...`` so the
device is registered before the harness loads. Writes one JSON line per event to ``--out``
(flushed as it goes): ``start`` before each (op, dtype), ``cell`` with its result, ``done`` at the
end; a crash therefore names the op it died in and the parent resumes after it.

Each sample is generated on the device, copied to CPU, run on both (same seed) and compared
with ``torch.testing.assert_close`` (what upstream's ``test_compare_cpu`` does), at the looser of
assert_close's dtype default and upstream's compare-cpu 1e-3, unless the OpInfo declares a
``toleranceOverride``. Upstream's own ``skip``/``expectedFailure`` decorators for
``TestCommon.test_compare_cpu`` are honoured. Random ops (wrapped in ``wrapper_set_seed``) draw
from the device's generator, so only their shape and dtype are compared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import traceback

import torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_device_type import toleranceOverride

COMPARE_CLS, COMPARE_TEST = "TestCommon", "test_compare_cpu"
MIN_TOL = 1e-3  # upstream test_compare_cpu: atol=rtol=1e-3


def op_id(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


def upstream_marks(op, device_type: str, dtype):
    """(skip reason or None, expected failure?, tolerance override (atol, rtol) or None)."""
    skip, xfail, tol = None, False, None
    for info in getattr(op, "decorators", ()) or ():
        decs = getattr(info, "decorators", None)
        if decs is None:
            continue
        try:
            active = info.is_active(COMPARE_CLS, COMPARE_TEST, device_type, dtype, {})
        except Exception:  # noqa: BLE001 - a callable active_if that needs real kwargs
            active = False
        if not active:
            continue
        for d in decs:
            if isinstance(d, toleranceOverride):
                t = d.d.get(dtype)
                tol = (t.atol, t.rtol) if t is not None else tol
                continue
            try:
                probe = d(lambda: None)
            except Exception:  # noqa: BLE001 - decorators that only accept test methods
                continue
            if getattr(probe, "__unittest_skip__", False):
                skip = getattr(probe, "__unittest_skip_why__", "skipped upstream") or "skip"
            if getattr(probe, "__unittest_expecting_failure__", False):
                xfail = True
    return skip, xfail, tol


def is_random(op) -> bool:
    code = getattr(op.op, "__code__", None)
    return bool(code and "wrapper_set_seed" in code.co_names)


def _to_cpu(x):
    return x.to("cpu") if isinstance(x, torch.Tensor) else x


def _meta(x):
    """Shape/dtype structure of an output (for random ops)."""
    if isinstance(x, torch.Tensor):
        return (tuple(x.shape), x.dtype)
    if isinstance(x, (list, tuple)):
        return tuple(_meta(v) for v in x)
    return type(x).__name__


def compare(actual, expected, dtype, tol) -> None:
    if tol is None:
        from torch.testing._comparison import default_tolerances

        rtol, atol = (
            default_tolerances(dtype) if dtype.is_floating_point or dtype.is_complex else (0.0, 0.0)
        )
        if dtype.is_floating_point or dtype.is_complex:
            rtol, atol = max(rtol, MIN_TOL), max(atol, MIN_TOL)
    else:
        atol, rtol = tol
    torch.testing.assert_close(
        actual, expected, rtol=rtol, atol=atol, check_device=False, equal_nan=True, check_dtype=True
    )


def refused(e: BaseException, device_type: str) -> bool:
    """The device's dtype policy refused the sample (kernels/trn/dtype_policy.py's message shape,
    ``"<dtype> is not supported on <device>"``): documented behaviour, not a conformance error."""
    return (
        isinstance(e, TypeError)
        and re.search(rf"\b\w+ is not supported on {re.escape(device_type)}\b", str(e)) is not None
    )


def _record_device_error(
    cell: dict, e: BaseException, device_type: str, where: str, why_refused: str
) -> str:
    """Count a device-side exception as refused (dtype policy) or error; returns the first
    refusal's message, kept apart so a real error's message is never hidden by a refusal."""
    text = f"{where}: {_first_line(e)}"
    if refused(e, device_type):
        cell["refused"] += 1
        return why_refused or text
    cell["errors"] += 1
    cell["message"] = cell["message"] or text
    return why_refused


def run_cell(op, device: str, dtype, max_samples: int) -> dict:
    device_type = torch.device(device).type
    cell = {
        "samples": 0,
        "passed": 0,
        "failed": 0,
        "errors": 0,
        "skipped": 0,
        "refused": 0,
        "message": "",
    }
    if dtype not in op.supported_dtypes(device_type):
        return {**cell, "status": "skip", "message": "dtype not supported by the OpInfo"}
    skip, xfail, tol = upstream_marks(op, device_type, dtype)
    if skip:
        return {**cell, "status": "skip", "message": f"upstream: {skip}"}
    random = is_random(op)
    why_refused = ""  # kept apart so a real failure's message is never hidden by a refusal
    torch.manual_seed(0)
    try:
        samples = op.sample_inputs(device, dtype)
        for i, sample in enumerate(samples):
            if i >= max_samples:
                break
            cell["samples"] += 1
            cpu_sample = sample.transform(_to_cpu)
            try:
                torch.manual_seed(1234)
                expected = cpu_sample.output_process_fn_grad(
                    op(cpu_sample.input, *cpu_sample.args, **cpu_sample.kwargs)
                )
            except Exception:  # noqa: BLE001 - the reference rejects this sample: nothing to compare
                cell["skipped"] += 1
                continue
            try:
                torch.manual_seed(1234)
                actual = sample.output_process_fn_grad(
                    op(sample.input, *sample.args, **sample.kwargs)
                )
                if random:
                    assert _meta(actual) == _meta(expected), (
                        f"random op: {_meta(actual)} != {_meta(expected)}"
                    )
                else:
                    compare(actual, expected, dtype, tol)
                cell["passed"] += 1
            except AssertionError as e:
                cell["failed"] += 1
                cell["message"] = cell["message"] or f"sample {i}: {_first_line(e)}"
            except Exception as e:  # noqa: BLE001 - the device raised where CPU did not
                why_refused = _record_device_error(cell, e, device_type, f"sample {i}", why_refused)
    except Exception as e:  # noqa: BLE001 - sample generation itself failed on the device
        # building the sample on the device can hit the same dtype policy (e.g. a float64 arg)
        why_refused = _record_device_error(cell, e, device_type, "sample_inputs", why_refused)
    if cell["failed"] or cell["errors"]:
        status = "xfail" if xfail else ("fail" if cell["failed"] else "error")
        if xfail:
            cell["message"] = f"expected failure upstream; {cell['message']}"
    elif cell["refused"]:
        status = "refused"  # any refusal is shown, even beside passing samples
        cell["message"] = f"{cell['refused']} refused by the device's dtype policy; {why_refused}"
    else:
        status = "pass" if cell["passed"] else "skip"
        if status == "skip" and not cell["message"]:
            cell["message"] = "no sample ran on the CPU reference"
    if random and status == "pass":
        cell["message"] = "random op: shape/dtype compared"
    return {**cell, "status": status}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="patches.matrix.opinfo_worker")
    ap.add_argument("--device", required=True)
    ap.add_argument("--dtypes", default="float32")
    ap.add_argument("--ops", default="", help="comma list of op ids (name or name.variant)")
    ap.add_argument("--skip", default="", help="file with 'op dtype' lines already done")
    ap.add_argument("--max-samples", type=int, default=1_000_000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--list", action="store_true", help="only list the selected op ids")
    a = ap.parse_args(argv)
    dtypes = [getattr(torch, d) for d in a.dtypes.split(",")]
    wanted = set(a.ops.split(",")) - {""}
    ops = sorted(
        (op for op in op_db if not wanted or op_id(op) in wanted or op.name in wanted), key=op_id
    )
    done = set()
    if a.skip:
        with open(a.skip) as fh:
            done = {tuple(ln.split()) for ln in fh if ln.strip()}
    device = a.device if ":" in a.device else f"{a.device}:0" if a.device != "cpu" else "cpu"
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
                    cell = run_cell(op, device, dtype, a.max_samples)
                except Exception as e:  # noqa: BLE001 - never lose the rest of the matrix
                    cell = {
                        "status": "error",
                        "message": _first_line(e),
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
