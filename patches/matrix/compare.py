"""The one OpInfo-vs-CPU comparison: an upstream ``op_db`` op's samples on a device against CPU.

Used by the matrix worker (``patches.matrix.opinfo_worker``, every device) and by the device's own
OpInfo test (``tests/kernels/test_device_harness.py``), so both judge a sample the same way:

* each sample is generated on the device, copied to CPU, run on both from the same seed and
  compared with ``torch.testing.assert_close`` (what upstream's ``TestCommon.test_compare_cpu``
  does) at the looser of assert_close's dtype default and upstream's compare-cpu 1e-3, unless the
  OpInfo declares a ``toleranceOverride`` for the device type;
* upstream's ``skip``/``expectedFailure`` decorators for ``test_compare_cpu`` are honoured;
* the device declares its own skips once, with a reason each, in ``opinfo_skips.yaml`` next to its
  plugin package (``declared_skips``); the same file says whether its generators replay the CPU
  stream (``rng: cpu``), in which case random ops are compared by value, else by shape and dtype;
* a ``TypeError`` of the device's dtype policy (``"<dtype> is not supported on <device>"``) is a
  *refusal*, documented behaviour, only when the sample asks for that dtype: the CPU result, the
  sample's tensors or a ``dtype=`` argument hold it. A refusal of a dtype nobody asked for (a
  kernel allocating float64 internally) is an error.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import torch
from torch.testing._internal.common_device_type import toleranceOverride

from audits.vocabulary import DEVICE_PLUGINS

COMPARE_CLS, COMPARE_TEST = "TestCommon", "test_compare_cpu"
MIN_TOL = 1e-3  # upstream test_compare_cpu: atol=rtol=1e-3
SKIPS_FILE = "opinfo_skips.yaml"


def op_id(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


class DeviceDeclarations:
    """What a device declares about its OpInfo comparison: skips (op id, dtype) -> reason, and
    whether its seeded generators replay CPU's stream."""

    def __init__(self, skips: dict | None = None, rng_matches_cpu: bool = False, source: str = ""):
        self.skips = skips or {}
        self.rng_matches_cpu = rng_matches_cpu
        self.source = source

    def skip_reason(self, op, dtype) -> str | None:
        name, dname = op_id(op), str(dtype).removeprefix("torch.")
        return self.skips.get((name, dname)) or self.skips.get((name, "*"))


def load_declarations(path: Path) -> DeviceDeclarations:
    import yaml

    data = yaml.safe_load(Path(path).read_text()) or {}
    skips = {}
    for entry in data.get("skips", []):
        if not entry.get("reason"):
            raise ValueError(f"{path}: skip of {entry.get('op')!r} has no reason")
        for d in entry.get("dtypes") or ["*"]:
            skips[(entry["op"], d)] = entry["reason"]
    rng = data.get("rng", "own")
    if rng not in ("cpu", "own"):
        raise ValueError(f"{path}: rng must be 'cpu' or 'own', got {rng!r}")
    return DeviceDeclarations(skips, rng == "cpu", str(path))


def declared_skips(device_type: str, package: str | None = None) -> DeviceDeclarations:
    """The declarations of ``device_type``: ``opinfo_skips.yaml`` in its plugin package (none for
    cpu/cuda or a package without the file)."""
    package = package or DEVICE_PLUGINS.get(device_type)
    if not package:
        return DeviceDeclarations()
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return DeviceDeclarations()
    for folder in spec.submodule_search_locations:
        path = Path(folder) / SKIPS_FILE
        if path.is_file():
            return load_declarations(path)
    return DeviceDeclarations()


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


def tolerance(dtype, override=None) -> tuple[float, float]:
    """(atol, rtol) for ``dtype``: the OpInfo's override, else the looser of assert_close's
    default and upstream's compare-cpu 1e-3 (exact for integers and bools)."""
    if override is not None:
        return override
    if not (dtype.is_floating_point or dtype.is_complex):
        return 0.0, 0.0
    from torch.testing._comparison import default_tolerances

    rtol, atol = default_tolerances(dtype)
    return max(atol, MIN_TOL), max(rtol, MIN_TOL)


def compare(actual, expected, dtype, tol=None) -> None:
    atol, rtol = tolerance(dtype, tol)
    torch.testing.assert_close(
        actual, expected, rtol=rtol, atol=atol, check_device=False, equal_nan=True, check_dtype=True
    )


_POLICY = re.compile(r"\b(\w+) is not supported on (\w+)\b")


def refused(e: BaseException, device_type: str) -> bool:
    """The device's dtype policy refused (kernels/trainium/dtype_policy.py's message shape,
    ``"<dtype> is not supported on <device>"``)."""
    if not isinstance(e, TypeError):
        return False
    m = _POLICY.search(str(e))
    return m is not None and m.group(2) == device_type


def _holds_dtype(obj, dtype) -> bool:
    if isinstance(obj, torch.Tensor):
        return obj.dtype == dtype
    if isinstance(obj, torch.dtype):
        return obj == dtype
    if isinstance(obj, (list, tuple)):
        return any(_holds_dtype(o, dtype) for o in obj)
    if isinstance(obj, dict):
        return any(_holds_dtype(o, dtype) for o in obj.values())
    return False


def asked_for(e: BaseException, sample, expected) -> bool:
    """Does the sample ask for the dtype the policy refused (CPU result, inputs, dtype args)?"""
    m = _POLICY.search(str(e))
    dtype = getattr(torch, m.group(1), None) if m else None
    if not isinstance(dtype, torch.dtype):
        return False
    return any(_holds_dtype(x, dtype) for x in (expected, sample.input, sample.args, sample.kwargs))


def new_cell() -> dict:
    return {
        "samples": 0,
        "passed": 0,
        "failed": 0,
        "errors": 0,
        "skipped": 0,
        "refused": 0,
        "message": "",
    }


class _Tally:
    """The counts of one cell as its samples run; a refusal's reason kept apart, so that a real
    failure's message is never hidden by a refusal."""

    def __init__(self, device_type: str) -> None:
        self.device_type = device_type
        self.cell = new_cell()
        self.why_refused = ""

    def device_error(self, e: BaseException, where: str, legit: bool) -> None:
        text = f"{where}: {first_line(e)}"
        if refused(e, self.device_type) and legit:
            self.cell["refused"] += 1
            self.why_refused = self.why_refused or text
            return
        if refused(e, self.device_type):
            text += " (a dtype the sample does not ask for)"
        self.cell["errors"] += 1
        self.cell["message"] = self.cell["message"] or text

    def sample(self, op, sample, i: int, check) -> None:
        """Run one sample on CPU and on the device; ``check(actual, expected)`` compares."""
        cell = self.cell
        cell["samples"] += 1
        cpu_sample = sample.transform(_to_cpu)
        try:
            torch.manual_seed(1234)
            expected = cpu_sample.output_process_fn_grad(
                op(cpu_sample.input, *cpu_sample.args, **cpu_sample.kwargs)
            )
        except Exception:  # noqa: BLE001 - the reference rejects this sample: nothing to compare
            cell["skipped"] += 1
            return
        try:
            torch.manual_seed(1234)
            actual = sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs))
            check(actual, expected)
            cell["passed"] += 1
        except AssertionError as e:
            cell["failed"] += 1
            cell["message"] = cell["message"] or f"sample {i}: {first_line(e)}"
        except Exception as e:  # noqa: BLE001 - the device raised where CPU did not
            self.device_error(e, f"sample {i}", legit=asked_for(e, cpu_sample, expected))

    def result(self, xfail) -> dict:
        cell = self.cell
        if cell["failed"] or cell["errors"]:
            status = "xfail" if xfail else ("fail" if cell["failed"] else "error")
            if xfail:
                cell["message"] = f"expected failure upstream; {cell['message']}"
        elif cell["refused"]:
            status = "refused"  # any refusal is shown, even beside passing samples
            cell["message"] = (
                f"{cell['refused']} refused by the device's dtype policy; {self.why_refused}"
            )
        else:
            status = "pass" if cell["passed"] else "skip"
            if status == "skip" and not cell["message"]:
                cell["message"] = "no sample ran on the CPU reference"
        return {**cell, "status": status}


def _not_run(op, device_type: str, dtype, declared: DeviceDeclarations):
    """(why the cell is skipped before any sample: the OpInfo, the device, upstream; or "",
    upstream's marks when it was asked)."""
    if dtype not in op.supported_dtypes(device_type):
        return "dtype not supported by the OpInfo", None
    reason = declared.skip_reason(op, dtype)
    if reason:
        return f"device: {reason}", None
    marks = upstream_marks(op, device_type, dtype)
    return (f"upstream: {marks[0]}" if marks[0] else ""), marks


def _checker(by_value: bool, dtype, tol):
    def check(actual, expected) -> None:
        if by_value:
            compare(actual, expected, dtype, tol)
        else:
            assert _meta(actual) == _meta(expected), (
                f"random op: {_meta(actual)} != {_meta(expected)}"
            )

    return check


def run_cell(
    op, device: str, dtype, max_samples: int | None = None, declared: DeviceDeclarations = None
) -> dict:
    """Compare ``op``'s samples on ``device`` with CPU in ``dtype``: a dict with ``status`` (pass,
    fail, error, refused, skip, xfail), sample counts and the first failure's message."""
    device_type = torch.device(device).type
    declared = declared or DeviceDeclarations()
    why, marks = _not_run(op, device_type, dtype, declared)
    if why:
        return {**new_cell(), "status": "skip", "message": why}
    _, xfail, tol = marks
    random = is_random(op)
    by_value = not random or declared.rng_matches_cpu
    check = _checker(by_value, dtype, tol)
    tally = _Tally(device_type)
    torch.manual_seed(0)
    samples = None
    i = -1
    while max_samples is None or i + 1 < max_samples:
        try:
            samples = samples or iter(op.sample_inputs(device, dtype))
            sample = next(samples)
        except StopIteration:
            break
        except Exception as e:  # noqa: BLE001 - making the sample on the device failed
            # e.g. a generator building float64 tensors on the device: the policy's refusal,
            # and the generator cannot go on after it
            tally.device_error(e, "sample_inputs", legit=True)
            break
        i += 1
        tally.sample(op, sample, i, check)
    out = tally.result(xfail)
    if random and out["status"] == "pass" and not by_value:
        out["message"] = "random op: shape/dtype compared"
    return out
