"""Upstream's test harness on trn: instantiate_device_type_tests creates trn variants, and the
OpInfo conformance run compares op_db samples on trn against CPU (float32 and bfloat16) with the
comparison patches.matrix uses (patches/matrix/compare.py) and the skips trn declares in
kernels/trn/opinfo_skips.yaml.

The default run (part of `make test`) is a fixed, deterministic subset: every
HN_TRN_OPINFO_STRIDE-th (3) op of op_db, first HN_TRN_OPINFO_SAMPLES (2) samples each.
HN_TRN_OPINFO=full runs every op and every sample (time recorded in docs/performance.md).
"""

import os
from pathlib import Path

import pytest
import torch
from torch.testing._internal.common_device_type import instantiate_device_type_tests
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase

from patches.matrix.compare import declared_skips, op_id, run_cell

SKIPS_FILE = Path(__file__).resolve().parents[2] / "kernels" / "trn" / "opinfo_skips.yaml"
FULL = os.environ.get("HN_TRN_OPINFO") == "full"
MAX_SAMPLES = None if FULL else int(os.environ.get("HN_TRN_OPINFO_SAMPLES", "2"))
STRIDE = 1 if FULL else int(os.environ.get("HN_TRN_OPINFO_STRIDE", "3"))
DTYPES = (torch.float32, torch.bfloat16)


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


DECLARED = declared_skips("trn")


def _cases():
    for op in op_db[::STRIDE]:
        for dtype in DTYPES:
            if dtype in op.supported_dtypes("cpu"):
                yield pytest.param(op, dtype, id=f"{op_id(op)}-{str(dtype)[6:]}")


def test_declared_skips_are_the_devices_file():
    # the matrix worker reads the same file, found through the plugin package
    assert Path(DECLARED.source) == SKIPS_FILE
    assert DECLARED.rng_matches_cpu
    assert DECLARED.skip_reason(next(o for o in op_db if o.name == "empty"), torch.float32)


@pytest.mark.parametrize("op,dtype", list(_cases()))
def test_opinfo_matches_cpu(op, dtype):
    """Like upstream's test_compare_cpu, through the comparison patches.matrix uses: samples made
    on trn, the reference is the same sample copied to CPU; every sample must match CPU within
    tolerance, or be the dtype policy's refusal of a dtype the sample asks for."""
    cell = run_cell(op, "trn:0", dtype, MAX_SAMPLES, DECLARED)
    where = f"{op_id(op)} {str(dtype)[6:]}: {cell['message']}"
    if cell["status"] == "xfail":
        pytest.xfail(where)
    assert cell["status"] not in ("fail", "error"), where
    assert cell["failed"] == cell["errors"] == 0, where
    if cell["status"] == "skip":
        pytest.skip(cell["message"])
    assert cell["passed"] + cell["refused"] > 0, where
