"""The PrivateUse1 contract as PyTorch's reference backend (OpenReg) tests it (issue 12 part 3)."""

from __future__ import annotations

import torch

DEV = "trn"


def test_accelerator_device_capability_lists_the_policy_dtypes():
    cap = torch.accelerator.get_device_capability()
    assert cap == torch.accelerator.get_device_capability(f"{DEV}:1")
    dtypes = cap["supported_dtypes"]
    assert {torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.bool} <= dtypes
    from kernels.trn import trainium

    for dt in trainium.state().dtypes.unsupported:  # float64 & co on every preset
        assert dt not in dtypes
    assert torch.float64 not in dtypes and torch.qint8 not in dtypes
