"""Which dtypes a Trainium preset holds, and what happens to the others.

Strict mode (default) raises a TypeError naming the op and the fix; permissive mode stores the
data in the nearest supported dtype and warns once per (dtype, op). Pure Python; the device
runtime calls :func:`resolve` from its allocation and copy seams.

Env var: HN_TRN_DTYPE_POLICY = strict | permissive.
"""

from __future__ import annotations

import os
import warnings
from typing import Mapping

import torch

ENV_POLICY = "HN_TRN_DTYPE_POLICY"
MODES = ("strict", "permissive")

# No Neuron data-type table lists a 64-bit float (docs/device.md); complex128 is a pair of them.
# The *fnuz float8 variants are AMD's encodings, which no NeuronCore implements.
_ALWAYS = {torch.float64, torch.complex128, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz}
# MX block-scale (e8m0) and FP4 arrive with NeuronCore-v4 (Trainium3).
_MX = {torch.float8_e8m0fnu, torch.float4_e2m1fn_x2}

UNSUPPORTED: dict[str, frozenset[torch.dtype]] = {
    "trn1": frozenset(_ALWAYS | _MX),
    "trn2": frozenset(_ALWAYS | _MX),
    "trn3": frozenset(_ALWAYS),
}

# Where permissive mode puts data of an unsupported dtype.
FALLBACK: dict[torch.dtype, torch.dtype] = {
    torch.float64: torch.float32,
    torch.complex128: torch.complex64,
    torch.float8_e4m3fnuz: torch.float8_e4m3fn,
    torch.float8_e5m2fnuz: torch.float8_e5m2,
    torch.float8_e8m0fnu: torch.float32,
    torch.float4_e2m1fn_x2: torch.uint8,
}

_FIX = {
    torch.float64: ".float()",
    torch.complex128: ".to(torch.complex64)",
    torch.float8_e4m3fnuz: ".to(torch.float8_e4m3fn)",
    torch.float8_e5m2fnuz: ".to(torch.float8_e5m2)",
}


class DtypePolicy:
    """A preset's dtype table plus the strict/permissive mode."""

    def __init__(self, preset: str = "trn2", mode: str = "strict") -> None:
        if preset not in UNSUPPORTED:
            raise ValueError(
                f"unknown trn preset {preset!r}; choose one of {', '.join(UNSUPPORTED)}"
            )
        if mode not in MODES:
            raise ValueError(f"{ENV_POLICY}={mode!r}: choose 'strict' or 'permissive'")
        self.preset = preset
        self.mode = mode
        self.unsupported = UNSUPPORTED[preset]
        self._warned: set[tuple[torch.dtype, str]] = set()

    @classmethod
    def from_env(cls, preset: str, env: Mapping[str, str] | None = None) -> "DtypePolicy":
        env = os.environ if env is None else env
        return cls(preset, env.get(ENV_POLICY, "").strip().lower() or "strict")

    def supports(self, dtype: torch.dtype) -> bool:
        return dtype not in self.unsupported

    def supported_dtypes(self, candidates) -> tuple[torch.dtype, ...]:
        """Filter an OpInfo-style dtype set down to what this preset holds."""
        return tuple(d for d in candidates if d not in self.unsupported)

    def error(self, dtype: torch.dtype, op: str) -> TypeError:
        name = str(dtype).removeprefix("torch.")
        fix = _FIX.get(dtype, f".to({FALLBACK[dtype]})")
        return TypeError(
            f"{op}: {name} is not supported on trn ({self.preset} has no {name} datapath). "
            f"Convert before moving to the device, e.g. tensor{fix}, "
            f"or set {ENV_POLICY}=permissive to downcast to {str(FALLBACK[dtype]).removeprefix('torch.')} "
            "with a warning."
        )

    def resolve(self, dtype: torch.dtype, op: str) -> torch.dtype:
        """The dtype the device stores for a request of ``dtype`` by ``op``; raise in strict mode."""
        if dtype not in self.unsupported:
            return dtype
        if self.mode == "strict":
            raise self.error(dtype, op)
        target = FALLBACK[dtype]
        key = (dtype, op)
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(
                f"trn: {op} downcasts {str(dtype).removeprefix('torch.')} to "
                f"{str(target).removeprefix('torch.')} (permissive dtype policy; "
                f"{self.preset} has no {str(dtype).removeprefix('torch.')})",
                UserWarning,
                stacklevel=3,
            )
        return target
