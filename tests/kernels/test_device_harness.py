"""Upstream's test harness on trn: instantiate_device_type_tests creates trn variants, and the
OpInfo conformance run compares op_db samples on trn against CPU (float32 and bfloat16).

The default run (part of `make test`) is a fixed, deterministic subset: every
HN_TRN_OPINFO_STRIDE-th (3) op of op_db, first HN_TRN_OPINFO_SAMPLES (2) samples each.
HN_TRN_OPINFO=full runs every op and every sample (time recorded in docs/performance.md).
"""

import os
from pathlib import Path

import pytest
import torch
import yaml
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase

SKIPS_FILE = Path(__file__).resolve().parents[2] / "kernels" / "trn" / "opinfo_skips.yaml"
FULL = os.environ.get("HN_TRN_OPINFO") == "full"
MAX_SAMPLES = None if FULL else int(os.environ.get("HN_TRN_OPINFO_SAMPLES", "2"))
STRIDE = 1 if FULL else int(os.environ.get("HN_TRN_OPINFO_STRIDE", "3"))
DTYPES = (torch.float32, torch.bfloat16)
# bf16: upstream's rtol plus one bf16 ulp at |x| <= 0.5 as atol, because a decomposition may round
# an intermediate once more (e.g. linear_cross_entropy.chunked_none).
TOLERANCE = {torch.bfloat16: {"rtol": 1.6e-2, "atol": 4e-3}}


class TestOnDevice(TestCase):
    def test_device_is_trn(self, device):
        self.assertTrue(device.startswith("trn"))
        x = torch.arange(4.0, device=device)
        self.assertEqual((x * 2).cpu(), torch.arange(4.0) * 2)

    def test_all_devices_listed(self, device):
        self.assertEqual(len(self.get_all_devices()), torch.trn.device_count())


instantiate_device_type_tests(TestOnDevice, globals(), only_for=("trn",))


def test_instantiation_created_trn_variants():
    # The first class instantiated for PrivateUse1 is suffixed PRIVATEUSE1, later ones with the name.
    names = [n for n in globals() if n.startswith("TestOnDevice")]
    assert any(n.endswith(("PRIVATEUSE1", "TRN")) for n in names), names
    assert not any(n.endswith("CPU") for n in names)


def _load_skips():
    data = yaml.safe_load(SKIPS_FILE.read_text()) or {}
    skips = {}
    for entry in data.get("skips", []):
        if not entry.get("reason"):
            raise ValueError(f"{SKIPS_FILE}: skip of {entry.get('op')!r} has no reason")
        dtypes = entry.get("dtypes") or [str(d).removeprefix("torch.") for d in DTYPES]
        for d in dtypes:
            skips[(entry["op"], d)] = entry["reason"]
    return skips


SKIPS = _load_skips()


def _opid(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _cases():
    for op in op_db[::STRIDE]:
        for dtype in DTYPES:
            if dtype in op.supported_dtypes("cpu"):
                yield pytest.param(op, dtype, id=f"{_opid(op)}-{str(dtype)[6:]}")


def _to(obj, device):
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _to(v, device) for k, v in obj.items()}
    return obj


def _run(op, sample):
    torch.manual_seed(0)  # seeds the CPU and the trn generators alike: random ops compare too
    return op(sample.input, *sample.args, **sample.kwargs)


@pytest.mark.parametrize("op,dtype", list(_cases()))
def test_opinfo_matches_cpu(op, dtype):
    """Like upstream's test_compare_cpu: samples made on trn, the reference is the same sample
    copied to CPU (tensors the op wants on CPU, e.g. tensor_split's indices, stay there)."""
    reason = SKIPS.get((_opid(op), str(dtype)[6:]))
    if reason:
        pytest.skip(reason)
    ran = 0
    for i, sample in enumerate(op.sample_inputs("trn", dtype, requires_grad=False)):
        if MAX_SAMPLES is not None and i >= MAX_SAMPLES:
            break
        cpu_sample = sample.transform(lambda t: t.to("cpu") if isinstance(t, torch.Tensor) else t)
        try:
            expected = _run(op, cpu_sample)
        except Exception:
            continue  # the CPU sample itself does not run: nothing to compare against
        got = _run(op, sample)
        torch.testing.assert_close(_to(got, "cpu"), expected, equal_nan=True, check_device=False,
                                   **TOLERANCE.get(dtype, {}), msg=lambda m: f"{_opid(op)} sample {i}: {m}")
        ran += 1
    if ran == 0:
        pytest.skip("no CPU sample of this op runs")
