"""Upstream's harness sees the dtype policy: no float64 variants are generated for trn."""

import torch
from torch.testing._internal.common_device_type import (
    OpDTypes,
    dtypes,
    instantiate_device_type_tests,
    ops,
)
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase

from kernels.trainium.harness import apply_dtype_policy

OPS = [op for op in op_db if op.name in ("add", "mul", "sum") and not op.variant_test_name]


class TestPolicyVariants(TestCase):
    @ops(OPS, dtypes=OpDTypes.supported)
    def test_supported(self, device, dtype, op):
        sample = next(iter(op.sample_inputs(device, dtype)))
        op(sample.input, *sample.args, **sample.kwargs)

    @ops(OPS, dtypes=OpDTypes.unsupported)
    def test_unsupported(self, device, dtype, op):
        pass

    @dtypes(torch.float64, torch.float32, torch.complex128)
    def test_explicit(self, device, dtype):
        torch.ones(2, dtype=dtype, device=device)


instantiate_device_type_tests(TestPolicyVariants, globals(), only_for=("trn",))


def _variants():
    cls = next(
        v
        for k, v in globals().items()
        if k.startswith("TestPolicyVariants") and k != "TestPolicyVariants"
    )
    return [n for n in dir(cls) if n.startswith("test_")]


def test_policy_applied_when_the_harness_was_imported():
    from kernels.trainium import harness

    assert harness._applied is not None and torch.float64 in harness._applied  # by the import hook
    assert apply_dtype_policy() == harness._applied  # idempotent


def test_no_float64_variants_for_trn():
    names = _variants()
    assert [n for n in names if "float64" in n or "complex128" in n] == []
    assert "test_explicit_trn_float32" in names or "test_explicit_privateuse1_float32" in names
    assert any(n.startswith("test_supported_add_") and n.endswith("_float32") for n in names)
    assert any(n.endswith("_bfloat16") for n in names)
    # CPU still lists float64 for these ops: the filter, not the OpInfo, removed it
    assert all(torch.float64 in op.supported_dtypes("cpu") for op in OPS)
