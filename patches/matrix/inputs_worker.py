"""Inputs worker: the sample and error inputs of chosen OpInfos, on one device, from one or more
copies of a module of upstream's op database (``common_methods_invocations.py``, an
``opinfo/definitions`` file: before and after a series).

    python patches/common/device_boot.py DEVICE -m patches.matrix.inputs_worker \\
        --device DEVICE --module NAME --db before=PATH --db after=PATH --funcs f,g \\
        [--dtypes ...] --out FILE

Each copy is loaded in turn under the module's own name, so the harness's other modules see it.
Its OpInfos are those of every module-level list of OpInfos (``op_db``, ``python_ref_db``,
``njt_op_db``); one is chosen when its sample, reference or error input function is one of
``--funcs``.
Samples are compared with CPU exactly as the matrix does (``patches.matrix.compare.run_cell``);
each ``ErrorInput`` must raise its ``error_type`` with a message matching ``error_regex``, as
upstream's ``TestCommon.test_errors`` asks. Writes one JSON object to ``--out``.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import re
import sys

import torch

from patches.matrix.compare import declared_skips, first_line, op_id, refused, run_cell

DB_MODULE = "torch.testing._internal.common_methods_invocations"
_FUNCS = ("sample_inputs_func", "reference_inputs_func", "error_inputs_func")


def load_db(path: str, name: str = DB_MODULE):
    """The module of the op database at ``path``, registered under its own ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def opinfos(module) -> list:
    """The OpInfos of every module-level list of them, each once, in order."""
    from torch.testing._internal.opinfo.core import OpInfo

    seen, out = set(), []
    for value in vars(module).values():
        if isinstance(value, list) and value and isinstance(value[0], OpInfo):
            for op in value:
                if isinstance(op, OpInfo) and id(op) not in seen:
                    seen.add(id(op))
                    out.append(op)
    return out


def input_functions(op) -> set[str]:
    """The names of ``op``'s input functions (a ``functools.partial`` is its function)."""
    names = set()
    for attr in _FUNCS:
        fn = getattr(op, attr, None)
        while isinstance(fn, functools.partial):
            fn = fn.func
        if getattr(fn, "__name__", None):
            names.add(fn.__name__)
    return names


def error_cell(op, device: str) -> dict:
    """Each ``ErrorInput`` of ``op`` on ``device``: raised as expected, refused by the device's
    dtype policy, raised otherwise (``wrong``) or not at all (``none``)."""
    cell = {"inputs": 0, "raised": 0, "refused": 0, "wrong": 0, "none": 0, "message": ""}
    if getattr(op, "error_inputs_func", None) is None:
        return cell
    device_type = torch.device(device).type
    try:
        inputs = list(op.error_inputs(device))
    except Exception as e:  # noqa: BLE001 - building the inputs failed on the device
        outcome = "refused" if refused(e, device_type) else "wrong"
        cell[outcome] += 1
        cell["message"] = f"error_inputs: {first_line(e)}"
        return cell
    for i, ei in enumerate(inputs):
        cell["inputs"] += 1
        s = ei.sample_input
        try:
            op(s.input, *s.args, **s.kwargs)
        except Exception as e:  # noqa: BLE001 - judged below
            if isinstance(e, ei.error_type) and re.search(ei.error_regex, str(e)):
                cell["raised"] += 1
                continue
            outcome = "refused" if refused(e, device_type) else "wrong"
            text = f"error input {i}: {first_line(e)} (expected {ei.error_regex!r})"
        else:
            outcome, text = "none", f"error input {i}: nothing raised ({ei.error_regex!r})"
        cell[outcome] += 1
        cell["message"] = cell["message"] or text
    return cell


def run_db(path: str, name: str, funcs: set[str], device: str, dtypes: list) -> dict:
    """op id -> {"samples": {dtype: cell}, "errors": cell} for the chosen OpInfos of one copy."""
    module = load_db(path, name)
    declared = declared_skips(torch.device(device).type)
    out = {}
    for op in opinfos(module):
        if not input_functions(op) & funcs:
            continue
        samples = {
            str(d).removeprefix("torch."): run_cell(op, device, d, None, declared) for d in dtypes
        }
        out[op_id(op)] = {"samples": samples, "errors": error_cell(op, device)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="patches.matrix.inputs_worker")
    ap.add_argument("--device", required=True)
    ap.add_argument("--module", default=DB_MODULE, help="the copies' module name")
    ap.add_argument("--db", action="append", required=True, metavar="LABEL=PATH")
    ap.add_argument("--funcs", required=True, help="comma list of input function names")
    ap.add_argument("--dtypes", default="float32")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    device = a.device if ":" in a.device or a.device == "cpu" else f"{a.device}:0"
    dtypes = [getattr(torch, d) for d in a.dtypes.split(",")]
    funcs = set(a.funcs.split(",")) - {""}
    result = {"device": a.device, "dbs": {}}
    for item in a.db:
        label, path = item.split("=", 1)
        result["dbs"][label] = run_db(path, a.module, funcs, device, dtypes)
    with open(a.out, "w") as fh:
        json.dump(result, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
