"""trn tensors across processes (torch.multiprocessing): sent by value.

torch.multiprocessing shares a tensor's storage (CUDA IPC, or a CPU shared-memory file), and
neither exists for a PrivateUse1 storage (`_share_fd_: only available on CPU`). trn memory is host
memory owned by one process, so a trn tensor crosses by value (its bytes, as torch.save writes
them; a shared-memory copy would be freed before a spawned child maps it) and becomes a trn
tensor on the same device index in the receiver, which registers trn on unpickling. The whole
storage travels with the view's sizes, strides and offset, so a view arrives as the same view
(`t[::2]` keeps stride 2), as with CUDA IPC. Unlike CUDA IPC, writes in one process are not seen
by the other, and two views of one storage sent separately arrive as two storages.
"""

from __future__ import annotations

import io

import torch

_installed = False


def rebuild(data: bytes, device: str, requires_grad: bool, view=None) -> torch.Tensor:
    # Unpickling finds this function by importing kernels.trn.sharing, whose package
    # (kernels.trn) registers the device in the receiving process first.
    cpu = torch.load(io.BytesIO(data), weights_only=True)
    moved = cpu.to(device)
    if view is not None:  # (size, stride, storage offset) over the whole storage sent in `data`
        size, stride, offset = view
        moved = torch.empty(0, dtype=moved.dtype, device=device).set_(
            moved.untyped_storage(), offset, size, stride
        )
    return moved.requires_grad_(requires_grad)


def _whole_storage(t: torch.Tensor) -> torch.Tensor:
    """t's storage as a flat tensor of t's dtype (what the receiver rebuilds the view over)."""
    n = t.untyped_storage().nbytes() // t.element_size()
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage(), 0, (n,), (1,))


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
        if t.is_quantized:  # its quantizer travels with the tensor itself
            torch.save(t.detach().cpu(), buf)
            return rebuild, (buf.getvalue(), str(t.device), t.requires_grad)
        torch.save(_whole_storage(t.detach()).cpu(), buf)
        view = (tuple(t.size()), tuple(t.stride()), t.storage_offset())
        return rebuild, (buf.getvalue(), str(t.device), t.requires_grad, view)

    for cls in (torch.Tensor, torch.nn.parameter.Parameter):
        ForkingPickler.register(cls, reduce_tensor)
    _installed = True
