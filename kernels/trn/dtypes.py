"""Dtype policy of the device: which dtypes autocast may use, and whether bf16 is supported.

The seam for a stricter device (e.g. no float64): `set_amp_dtypes` changes what autocast accepts;
everything reads from here rather than hard-coding its own list.
"""

from __future__ import annotations

import torch

_AMP_DTYPES: list[torch.dtype] = [torch.bfloat16, torch.float16]


def get_amp_supported_dtype() -> list[torch.dtype]:
    return list(_AMP_DTYPES)


def set_amp_dtypes(dtypes) -> None:
    _AMP_DTYPES[:] = list(dtypes)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return torch.bfloat16 in _AMP_DTYPES
