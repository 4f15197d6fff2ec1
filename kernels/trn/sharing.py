"""trn tensors across processes (torch.multiprocessing): sent by value.

torch.multiprocessing shares a tensor's storage (CUDA IPC, or a CPU shared-memory file), and
neither exists for a PrivateUse1 storage (`_share_fd_: only available on CPU`). trn memory is host
memory owned by one process, so a trn tensor crosses by value (its bytes, as torch.save writes
them; a shared-memory copy would be freed before a spawned child maps it) and becomes a trn
tensor on the same device index in the receiver, which registers trn on unpickling. Unlike
CUDA IPC, writes in one process are not seen by the other.
"""

from __future__ import annotations

import io

import torch

_installed = False


def rebuild(data: bytes, device: str, requires_grad: bool) -> torch.Tensor:
    # Unpickling finds this function by importing kernels.trn.sharing, whose package
    # (kernels.trn) registers the device in the receiving process first.
    cpu = torch.load(io.BytesIO(data), weights_only=True)
    return cpu.to(device).requires_grad_(requires_grad)


def install(name: str) -> None:
    global _installed
    if _installed:
        return
    from multiprocessing.reduction import ForkingPickler

    from torch.multiprocessing import reductions

    upstream = reductions.reduce_tensor

    def reduce_tensor(t):
        if t.device.type != name:
            return upstream(t)
        buf = io.BytesIO()
        torch.save(t.detach().cpu(), buf)
        return rebuild, (buf.getvalue(), str(t.device), t.requires_grad)

    for cls in (torch.Tensor, torch.nn.parameter.Parameter):
        ForkingPickler.register(cls, reduce_tensor)
    _installed = True
