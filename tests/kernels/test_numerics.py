"""Tensor-engine numerics as pure functions over CPU tensors (no device)."""

import pytest
import torch

from kernels.trainium.numerics import StochasticRounding, fp32_accumulate, stochastic_round_bf16

BF16_STEP_AT_1 = 2.0**-7


def test_sr_is_unbiased_where_rne_is_not():
    x = torch.full((200_000,), 1.0 + BF16_STEP_AT_1 / 4)  # a quarter step above 1.0
    sr = stochastic_round_bf16(x, torch.Generator().manual_seed(0)).float()
    assert set(sr.unique().tolist()) == {1.0, 1.0 + BF16_STEP_AT_1}  # only the two neighbours
    # mean of Bernoulli(1/4) steps: std of the mean is ~ step * 0.43 / sqrt(n) ~ 7.6e-6
    assert abs(sr.mean().item() - x[0].item()) < 5e-5
    assert x.to(torch.bfloat16).float().mean().item() == 1.0  # RNE always rounds down here


def test_sr_unbiased_over_random_values_and_both_signs():
    g = torch.Generator().manual_seed(1)
    x = (torch.rand(4096, generator=g) - 0.5) * 10
    reps = torch.stack([stochastic_round_bf16(x, g).float() for _ in range(400)])
    err = (reps.mean(0) - x).abs() / x.abs().clamp_min(1e-3)
    assert err.mean().item() < 2e-4  # a one-sided rounding bias would be ~1e-3 relative


def test_sr_reproducible_from_seed():
    x = torch.randn(1000)
    a, b, c = (StochasticRounding(True, s) for s in (7, 7, 8))
    assert torch.equal(a.to_bf16(x), b.to_bf16(x))
    assert not torch.equal(a.to_bf16(x), c.to_bf16(x))
    a.reseed()
    assert torch.equal(a.to_bf16(x), StochasticRounding(True, 7).to_bf16(x))


def test_sr_keeps_specials_and_exact_values():
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -2.0, 1.5])
    out = stochastic_round_bf16(x).float()
    assert out[0].isnan() and out[1] == float("inf") and out[2] == -float("inf")
    assert out[3:].tolist() == [0.0, -2.0, 1.5]


def test_sr_lets_small_increments_accumulate():
    acc_rne = torch.ones(2000, dtype=torch.bfloat16)
    acc_sr = torch.ones(2000, dtype=torch.bfloat16)
    sr = StochasticRounding(True, 0)
    for _ in range(64):
        acc_rne = (acc_rne.float() + 2**-9).to(torch.bfloat16)
        acc_sr = sr.round(acc_sr.float() + 2**-9, torch.bfloat16)
    assert acc_rne.float().mean().item() == 1.0  # every increment lost
    assert abs(acc_sr.float().mean().item() - 1.125) < 0.01  # 1 + 64 * 2^-9


def test_sr_env_parsing():
    sr = StochasticRounding.from_env(
        {"NEURON_RT_STOCHASTIC_ROUNDING_EN": "1", "NEURON_RT_STOCHASTIC_ROUNDING_SEED": "42"}
    )
    assert sr.enabled and sr.seed == 42
    assert not StochasticRounding.from_env({}).enabled and StochasticRounding.from_env({}).seed == 0
    with pytest.raises(ValueError, match="expected an integer seed"):
        StochasticRounding.from_env({"NEURON_RT_STOCHASTIC_ROUNDING_SEED": "x"})
    with pytest.raises(ValueError, match="expected 0/1"):
        StochasticRounding.from_env({"NEURON_RT_STOCHASTIC_ROUNDING_EN": "maybe"})


def _naive_low_precision_dot(a_row, b_col, dtype):
    acc = torch.zeros((), dtype=dtype)
    for x, y in zip(a_row, b_col):
        acc = (acc + x * y).to(dtype)
    return acc


@pytest.mark.parametrize("dtype, small", [(torch.bfloat16, 2.0**-9), (torch.float16, 2.0**-12)])
def test_mm_accumulates_in_fp32(dtype, small):
    a = torch.tensor([[1.0] + [small] * 256], dtype=dtype)
    b = torch.ones(257, 1, dtype=dtype)
    out = fp32_accumulate(torch.mm, (a, b))
    assert out.dtype == dtype and out.item() == 1.0 + 256 * small
    assert _naive_low_precision_dot(a[0], b[:, 0], dtype).item() == 1.0  # the failure we avoid


def test_addmm_rounds_once():
    a = torch.tensor([[1.0, 2.0**-8]], dtype=torch.bfloat16)
    b = torch.ones(2, 1, dtype=torch.bfloat16)
    bias = torch.tensor([2.0**-8], dtype=torch.bfloat16)
    once = fp32_accumulate(torch.addmm, (bias, a, b))
    twice = (torch.mm(a.float(), b.float()).to(torch.bfloat16).float() + bias.float()).to(
        torch.bfloat16
    )
    assert once.item() == 1.0 + 2.0**-7 and twice.item() == 1.0


def test_conv_and_bmm_match_fp32_reference_bitwise():
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(2, 3, 8, 8, generator=g), torch.randn(4, 3, 3, 3, generator=g)
    ref = torch.nn.functional.conv2d(x, w).to(torch.bfloat16)
    got = fp32_accumulate(torch.nn.functional.conv2d, (x.bfloat16(), w.bfloat16()))
    assert torch.equal(
        got, torch.nn.functional.conv2d(x.bfloat16().float(), w.bfloat16().float()).bfloat16()
    )
    assert (got.float() - ref.float()).abs().max() < 0.1
    p, q = torch.randn(3, 5, 7, generator=g).half(), torch.randn(3, 7, 2, generator=g).half()
    assert torch.equal(fp32_accumulate(torch.bmm, (p, q)), torch.bmm(p.float(), q.float()).half())


def test_fp32_through_bf16_autocast_is_opt_in():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(16, 32, generator=g), torch.randn(32, 8, generator=g)
    assert torch.equal(fp32_accumulate(torch.mm, (a, b)), a @ b)
    via = fp32_accumulate(torch.mm, (a, b), fp32_via_bf16=True)
    assert via.dtype == torch.float32
    assert torch.equal(via, a.bfloat16().float() @ b.bfloat16().float())
    assert not torch.equal(via, a @ b)


def test_matmul_output_can_round_stochastically():
    x = torch.full((4000, 1), 1.0, dtype=torch.bfloat16)
    y = torch.full((1, 1), 1.0 + 2.0**-7, dtype=torch.bfloat16)
    sr = StochasticRounding(True, 3)
    # 1+2^-7 (exact) plus a bias of 2^-9: the fp32 sum lies a quarter step above a bf16 value
    out = fp32_accumulate(
        torch.addmm, (torch.full((4000, 1), 2.0**-9, dtype=torch.bfloat16), x, y), rounding=sr
    )
    mean = out.float().mean().item()
    assert abs(mean - (1.0 + 2.0**-7 + 2.0**-9)) < 1e-3 and len(out.unique()) == 2
