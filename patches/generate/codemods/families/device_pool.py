"""CUDA's private memory pools (HN115 ``torch.cuda.MemPool(...)``, ``torch.cuda.use_mem_pool(pool)``)
-> the same call of the module of the device the code already holds, upstream's form (symmetric
memory and FSDP's symmetric-memory allocator, torch 2.14 -> 2.15)::

    def allocate(self, size, *, dtype, device):
        mempool = symm_mem.get_mem_pool(device)
        with torch.cuda.use_mem_pool(mempool):                 ->   with torch.get_device_module(device).use_mem_pool(mempool):
            return torch.empty(size, dtype=dtype, device=device)

A pool belongs to a device's caching allocator; ``torch.xpu`` has ``MemPool`` and
``use_mem_pool`` beside ``torch.cuda`` (2.13 on), so the device's own module makes the pool the
code meant. Only a call, and only where a ``device`` (a parameter or a local assigned before the
call, in the scope that resolves it, not an ``int`` index) is there to name the module: the
literal family's rule for ``device="cuda"``. On CUDA the module is ``torch.cuda`` and the call is
the one it was.

Left: a call with no ``device`` in scope (the pool of "the current device": which accelerator's
is not the code's to say), an index, and every reference that is not a call (``isinstance(p,
torch.cuda.MemPool)``, an annotation, dynamo's tables of CUDA's own functions).
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family, is_int_param

NAMES = ("torch.cuda.MemPool", "torch.cuda.use_mem_pool")
DEVICE = "device"


class DevicePool(Family):
    name = "device-pool"
    claims = NAMES

    def on_call(self, eng, original, updated):
        claimed = self.claimed(eng, original)
        if claimed is None:
            return None
        spec, matched = claimed
        line = eng.line(original)
        if not eng.ctx.bound_before(line, DEVICE):
            eng.fail(spec, original, "no `device` bound before the call in scope: whose pool?")
            return None
        if is_int_param(eng.ctx, line, DEVICE):
            eng.fail(spec, original, "`device` is an int index: torch.get_device_module takes none")
            return None
        eng.remove_unused_import_by_node(original.func)
        eng.add_needed_import("torch", node=original)
        eng.done(spec, original)
        attr = next(iter(matched)).rsplit(".", 1)[1]
        return updated.with_changes(
            func=cst.parse_expression(f"torch.get_device_module({DEVICE}).{attr}")
        )
