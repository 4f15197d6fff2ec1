"""Tensor-engine numerics as pure functions over CPU tensors.

* Matmul-class ops in bf16/fp16 accumulate in fp32 and round once (the tensor engine's PSUM
  accumulates in FP32); :func:`fp32_accumulate` computes the op on fp32 copies and rounds once.
* Optional fp32-through-bf16 (the Neuron compiler's default auto-cast of fp32 matmuls):
  inputs are rounded to bf16, the product accumulates in fp32, the result stays fp32.
* Stochastic rounding fp32 -> bf16 (NEURON_RT_STOCHASTIC_ROUNDING_EN=1, seeded by
  NEURON_RT_STOCHASTIC_ROUNDING_SEED, default 0): rounds up with probability equal to the
  discarded fraction, so the expectation equals the input.

Env vars: NEURON_RT_STOCHASTIC_ROUNDING_EN, NEURON_RT_STOCHASTIC_ROUNDING_SEED,
HN_TRN_MATMUL_BF16 (1 = compute fp32 matmuls through bf16 inputs; default 0).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping

import torch

ENV_SR = "NEURON_RT_STOCHASTIC_ROUNDING_EN"
ENV_SR_SEED = "NEURON_RT_STOCHASTIC_ROUNDING_SEED"
ENV_MATMUL_BF16 = "HN_TRN_MATMUL_BF16"

LOW_PRECISION = (torch.bfloat16, torch.float16)

# The aten ops that run on the tensor engine. linear and matmul are CompositeImplicit upstream and
# reach the device as mm/addmm/bmm/..., so covering these covers them too.
MATMUL_OPS = (
    "mm",
    "bmm",
    "addmm",
    "baddbmm",
    "addbmm",
    "addmv",
    "mv",
    "dot",
    "vdot",
    "convolution",
    "_convolution",
    "convolution_overrideable",
    "linear",
    "matmul",
)


def env_flag(env: Mapping[str, str], name: str) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw in ("", "0", "false", "no", "off"):
        return False
    if raw in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{name}={raw!r}: expected 0/1 or true/false")


class StochasticRounding:
    """The SR switch and its own generator, so results repeat for the same seed and op sequence."""

    def __init__(self, enabled: bool = False, seed: int = 0) -> None:
        self.enabled = enabled
        self.seed = seed
        self.generator = torch.Generator(device="cpu")
        self.generator.manual_seed(seed)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "StochasticRounding":
        env = os.environ if env is None else env
        raw_seed = env.get(ENV_SR_SEED, "").strip() or "0"
        try:
            seed = int(raw_seed, 0)
        except ValueError:
            raise ValueError(f"{ENV_SR_SEED}={raw_seed!r}: expected an integer seed") from None
        return cls(env_flag(env, ENV_SR), seed)

    def reseed(self, seed: int | None = None) -> None:
        self.seed = self.seed if seed is None else seed
        self.generator.manual_seed(self.seed)

    def to_bf16(self, x: torch.Tensor) -> torch.Tensor:
        return stochastic_round_bf16(x, self.generator)

    def round(self, x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """Round fp32 ``x`` to ``dtype``: stochastically for bf16 when enabled, else RNE."""
        if self.enabled and dtype == torch.bfloat16 and x.dtype == torch.float32:
            return self.to_bf16(x)
        return x.to(dtype)


def stochastic_round_bf16(
    x: torch.Tensor, generator: torch.Generator | None = None
) -> torch.Tensor:
    """fp32 -> bf16, rounding away from zero with probability = the dropped 16-bit fraction.

    Adds a uniform 16-bit integer to the fp32 bit pattern (sign-magnitude, so this works on the
    magnitude for either sign) and truncates; NaN/Inf are converted with ordinary rounding.
    """
    if x.dtype != torch.float32:
        raise TypeError(f"stochastic_round_bf16 expects float32, got {x.dtype}")
    x = x.contiguous()
    noise = torch.randint(
        0, 1 << 16, x.shape, dtype=torch.int32, generator=generator, device=x.device
    )
    bits = x.view(torch.int32)
    rounded = ((bits + noise) & ~0xFFFF).view(torch.float32)
    # Truncated patterns are exact in bf16, so this conversion adds no second rounding.
    out = rounded.to(torch.bfloat16)
    finite = torch.isfinite(x)
    if not bool(finite.all()):
        out = torch.where(finite, out, x.to(torch.bfloat16))
    return out


def _upcast(value: Any, dtypes: tuple[torch.dtype, ...]) -> Any:
    if isinstance(value, torch.Tensor) and value.dtype in dtypes:
        return value.float()
    if isinstance(value, (list, tuple)):
        return type(value)(_upcast(v, dtypes) for v in value)
    return value


def _bf16_inputs(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and value.dtype == torch.float32:
        return value.to(torch.bfloat16).float()
    if isinstance(value, (list, tuple)):
        return type(value)(_bf16_inputs(v) for v in value)
    return value


def low_precision_dtype(args: tuple, kwargs: Mapping[str, Any]) -> torch.dtype | None:
    """The bf16/fp16 dtype of the op's floating tensor inputs, if any."""
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, torch.Tensor) and v.dtype in LOW_PRECISION:
            return v.dtype
    return None


def fp32_accumulate(
    fn: Callable[..., torch.Tensor],
    args: tuple,
    kwargs: Mapping[str, Any] | None = None,
    *,
    rounding: StochasticRounding | None = None,
    fp32_via_bf16: bool = False,
) -> torch.Tensor:
    """Run a matmul-class ``fn`` the way the tensor engine does.

    bf16/fp16 inputs: compute in fp32 and round the result once to the input dtype (RNE, or SR
    for bf16 when ``rounding`` is enabled). fp32 inputs with ``fp32_via_bf16``: round the
    inputs to bf16, accumulate in fp32, return fp32. Anything else: ``fn`` unchanged.
    """
    kwargs = dict(kwargs or {})
    low = low_precision_dtype(args, kwargs)
    if low is not None:
        out = fn(
            *_upcast(args, LOW_PRECISION),
            **{k: _upcast(v, LOW_PRECISION) for k, v in kwargs.items()},
        )
        return (rounding or _RNE).round(out, low)
    if fp32_via_bf16:
        return fn(*_bf16_inputs(args), **{k: _bf16_inputs(v) for k, v in kwargs.items()})
    return fn(*args, **kwargs)


_RNE = StochasticRounding(enabled=False)
