"""Dtype tables and strict/permissive decisions (pure Python, no device)."""

import warnings

import pytest
import torch

from kernels.trainium.dtype_policy import UNSUPPORTED, DtypePolicy


@pytest.mark.parametrize("preset", ["trn1", "trn2", "trn3"])
def test_no_preset_holds_float64(preset):
    assert torch.float64 in UNSUPPORTED[preset] and torch.complex128 in UNSUPPORTED[preset]
    for ok in (torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.bool):
        assert ok not in UNSUPPORTED[preset]


def test_mx_types_only_on_trn3():
    assert (
        torch.float8_e8m0fnu in UNSUPPORTED["trn2"]
        and torch.float8_e8m0fnu not in UNSUPPORTED["trn3"]
    )


def test_strict_error_names_op_dtype_and_fix():
    with pytest.raises(TypeError) as info:
        DtypePolicy("trn2", "strict").resolve(torch.float64, "aten::_to_copy")
    msg = str(info.value)
    assert "aten::_to_copy: float64 is not supported on trn" in msg
    assert "tensor.float()" in msg and "HN_TRN_DTYPE_POLICY=permissive" in msg


def test_permissive_downcasts_and_warns_once_per_op():
    policy = DtypePolicy("trn1", "permissive")
    with pytest.warns(UserWarning, match="downcasts float64 to float32"):
        assert policy.resolve(torch.float64, "aten::empty") == torch.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert policy.resolve(torch.float64, "aten::empty") == torch.float32
        assert policy.resolve(torch.float32, "aten::empty") == torch.float32


def test_other_unsupported_dtype_has_its_own_fix():
    with pytest.raises(TypeError, match=r"float8_e4m3fnuz.*\.to\(torch\.float8_e4m3fn\)"):
        DtypePolicy("trn3").resolve(torch.float8_e4m3fnuz, "aten::empty")


def test_supported_dtypes_filters_opinfo_sets():
    policy = DtypePolicy("trn2")
    assert policy.supported_dtypes({torch.float32, torch.float64}) == (torch.float32,)


@pytest.mark.parametrize(
    "preset, mode, message",
    [("trn7", "strict", "unknown trn preset"), ("trn2", "lax", "choose 'strict' or 'permissive'")],
)
def test_bad_config_is_rejected(preset, mode, message):
    with pytest.raises(ValueError, match=message):
        DtypePolicy(preset, mode)


def test_from_env_reads_the_mode():
    assert DtypePolicy.from_env("trn2", {"HN_TRN_DTYPE_POLICY": "permissive"}).mode == "permissive"
    assert DtypePolicy.from_env("trn2", {}).mode == "strict"
