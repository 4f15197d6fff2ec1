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


def _refused_dtypes(obj) -> bool:
    """Does the CPU result hold a dtype the Trainium preset refuses (kernels/trn/dtype_policy.py)?"""
    from kernels.trn import trainium

    unsupported = trainium.state().dtypes.unsupported if trainium._state is not None else ()
    if isinstance(obj, torch.Tensor):
        return obj.dtype in unsupported
    if isinstance(obj, (list, tuple)):
        return any(_refused_dtypes(o) for o in obj)
    return False


_POLICY_ERROR = "is not supported on trn"


def _samples(op, dtype):
    """op's samples on trn; a generator that builds e.g. float64 tensors on the device is refused
    by the dtype policy part way, and its remaining samples cannot exist on trn."""
    it = iter(op.sample_inputs("trn", dtype, requires_grad=False))
    while True:
        try:
            yield next(it)
        except StopIteration:
            return
        except TypeError as e:
            if _POLICY_ERROR not in str(e):
                raise
            return


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
    for i, sample in enumerate(_samples(op, dtype)):
        if MAX_SAMPLES is not None and i >= MAX_SAMPLES:
            break
        cpu_sample = sample.transform(lambda t: t.to("cpu") if isinstance(t, torch.Tensor) else t)
        try:
            expected = _run(op, cpu_sample)
        except Exception:
            continue  # the CPU sample itself does not run: nothing to compare against
        try:
            got = _run(op, sample)
        except TypeError as e:
            # a sample asking for e.g. dtype=float64 on the device: refused, as Trainium would,
            # which is right only when the CPU result holds such a dtype
            if _POLICY_ERROR in str(e) and _refused_dtypes(expected):
                ran += 1
                continue
            raise
        torch.testing.assert_close(
            _to(got, "cpu"),
            expected,
            equal_nan=True,
            check_device=False,
            **TOLERANCE.get(dtype, {}),
            msg=lambda m, i=i: f"{_opid(op)} sample {i}: {m}",
        )
        ran += 1
    if ran == 0:
        pytest.skip("no CPU sample of this op runs")
