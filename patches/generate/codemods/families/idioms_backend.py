"""The distributed backend (HN601 ``"nccl"``) -> the backend registered for the device.

* where the process group is created (``init_process_group(backend="nccl")``, first argument
  of ``init_process_group``/``new_group``): ``torch.distributed.get_default_backend_for_device``
  of the ``device`` bound before the call, else of the current accelerator (``or "cpu"`` in a
  script that runs on the CPU once ported, ``sync_guard.runs_on_cpu``: a CPU-only machine has
  no current accelerator, and its backend is gloo);
* a configured default (``backend = "nccl"``, ``add_argument("--dist-backend",
  default="nccl")``), evaluated on every run, distributed or not, before any device is known:
  ``torch.distributed.Backend.default_device_backend_map.get(<accelerator type or "cpu">)``,
  the table ``get_default_backend_for_device`` reads, which answers None instead of raising for
  a device no c10d backend is registered for (a single-process run on such a device keeps
  working; ``init_process_group(backend=None)`` then picks its own default).

On CUDA both give "nccl"; on CPU "gloo"; on XPU "xccl".
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import (
    CURRENT,
    CURRENT_OR_CPU,
    TYPE_OR_CPU,
    specs_at,
    string_value,
)
from patches.generate.codemods.families.sync_guard import runs_on_cpu

_DEFAULT_KEYWORDS = frozenset({"default"})
_GROUP_CALLS = frozenset(
    {
        "torch.distributed.init_process_group",
        "torch.distributed.new_group",
        "torch.distributed.distributed_c10d.init_process_group",
        "torch.distributed.distributed_c10d.new_group",
    }
)


class Backend(Family):
    name = "backend"

    def on_literal(self, eng, original, updated):
        if string_value(original) != "nccl":
            return None
        specs = specs_at(eng, original, self.name)
        if not specs:
            return None
        spec = specs[0]
        parent = eng.parent(original)
        eng.add_needed_import("torch", node=original)
        if (
            isinstance(parent, (cst.Assign, cst.AnnAssign))
            and parent.value is original
            or (
                isinstance(parent, cst.Arg)
                and parent.keyword is not None
                and parent.keyword.value in _DEFAULT_KEYWORDS
            )
        ):
            eng.done(spec, original)
            return cst.parse_expression(
                f"torch.distributed.Backend.default_device_backend_map.get({TYPE_OR_CPU})"
            )
        call = eng.parent(parent) if isinstance(parent, cst.Arg) else None
        if not isinstance(call, cst.Call) or not eng.qualnames(call.func) & _GROUP_CALLS:
            eng.fail(spec, original, "not a process-group backend argument or default")
            return None
        line = eng.line(original)
        if eng.ctx.bound_before(line, "device"):
            device = "device"
        else:
            device = CURRENT_OR_CPU if runs_on_cpu(eng.ctx, line) else CURRENT
        eng.done(spec, original)
        return cst.parse_expression(f"torch.distributed.get_default_backend_for_device({device})")
