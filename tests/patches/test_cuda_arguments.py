"""``[arguments]`` of ``cuda_intent.toml`` against the installed torch: each call, passed the
argument the table lists, does not run on the CPU as it does on CUDA (it raises, or autocast
disables itself), and each name is torch's. A check that selects such a call stays CUDA's
(``remaining.argument_hit``)."""

from __future__ import annotations

import functools
import warnings

import pytest
import torch

from patches.generate.intent.data import data

TABLE = data()["arguments"]


def _resolve(name: str):
    return functools.reduce(getattr, name.split(".")[1:], torch)


def _call(name: str, keyword: str):
    a = torch.randn(3, 3, dtype=torch.float16)
    b = torch.randn(2, 3, 3, dtype=torch.float16)
    value = {"driver": "gesvd", "out_dtype": torch.float32}.get(keyword)
    args = {
        "torch.linalg.svd": (torch.randn(3, 3),),
        "torch.linalg.svdvals": (torch.randn(3, 3),),
        "torch.mm": (a, a),
        "torch.bmm": (b, b),
        "torch.addmm": (a, a, a),
        "torch.baddbmm": (b, b, b),
    }[name]
    return _resolve(name)(*args, **{keyword: value})


@pytest.mark.parametrize("name", sorted(TABLE))
def test_each_name_is_torch_s(name):
    assert callable(_resolve(name))


@pytest.mark.parametrize(
    "name,keyword",
    [(n, k) for n, kws in sorted(TABLE.items()) for k in kws if "autocast" not in n],
)
def test_the_cpu_refuses_the_argument(name, keyword):
    with pytest.raises((RuntimeError, NotImplementedError)):
        _call(name, keyword)


@pytest.mark.parametrize("name", [n for n in sorted(TABLE) if "autocast" in n])
def test_autocast_to_float32_is_cuda_s_alone(name):
    assert set(TABLE[name]["dtype"]) == {"torch.float32", "torch.float"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _resolve(name)(device_type="cpu", dtype=torch.float32):
            enabled = torch.is_autocast_enabled("cpu")
    assert not enabled
    assert any("not supported" in str(w.message) for w in caught)
    with _resolve(name)(device_type="cpu", dtype=torch.bfloat16):  # a dtype the CPU takes
        assert torch.is_autocast_enabled("cpu")
