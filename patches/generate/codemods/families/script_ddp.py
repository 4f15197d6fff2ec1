"""DistributedDataParallel's ``device_ids`` and ``output_device`` in a script that runs on the
CPU once ported (``sync_guard.runs_on_cpu``), rewritten with its process group's backend (HN601,
the ``backend-pick`` family's step: the port's backend is gloo on a CPU-only machine)::

    dist.init_process_group("nccl")
    model = torch.nn.Linear(4, 2).cuda(local_rank)
    ddp = DDP(model, device_ids=[local_rank], output_device=local_rank)
->  ...
    ddp = DDP(
        model,
        device_ids=[local_rank] if torch.accelerator.is_available() else None,
        output_device=local_rank if torch.accelerator.is_available() else None,
    )

DDP takes device ids for a module on one accelerator device only: for a CPU module it raises
("device_ids and output_device arguments only work with single-device/multiple-device GPU modules
or CPU modules"). The port puts the model on the CPU where there is no accelerator, so the ids
go there; on CUDA the call is exactly the original (DDP moves the inputs to ``device_ids[0]``).
Left: a list of several ids (a multi-device module), a value that is no list display (already a
pick: ``[rank] if torch.cuda.is_available() else None``), a call under a device test or after the
author's ``assert torch.cuda.is_available()``, in a file whose process group is created only
there (nanoGPT's ``assert torch.cuda.is_available()`` before ``init_process_group``: the DDP
branch needs CUDA), a library, a file with no CPU path, a step whose backend site the gate
keeps. There is no finding of its own: the call names no CUDA, and is
right on every accelerator; only the port's CPU path makes it wrong.
"""

from __future__ import annotations

import ast

import libcst as cst
import libcst.matchers as m

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.sync_guard import runs_on_cpu

DDP = frozenset(
    {
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
        "torch.nn.DistributedDataParallel",
    }
)
INIT = frozenset(
    {
        "torch.distributed.init_process_group",
        "torch.distributed.distributed_c10d.init_process_group",
    }
)
SERVED = ("backend-pick", "backend")  # HN601's family (idioms_backend, backend_pick)
KEYWORDS = ("device_ids", "output_device")  # DDP's parameters after the module, in order
TEST = "torch.accelerator.is_available()"


def _ids(value) -> bool:
    """A list display of one plain id (``[local_rank]``, ``[args.gpu]``)."""
    if isinstance(value, ast.List):
        return len(value.elts) == 1 and not isinstance(value.elts[0], ast.Starred)
    if isinstance(value, cst.List):
        return len(value.elements) == 1 and not isinstance(value.elements[0], cst.StarredElement)
    return False


def _device_args(call) -> dict[str, object] | None:
    """``device_ids``/``output_device`` of a DDP call (by keyword or position) -> value, where
    the ids are one plain id and the output device is no ``None``; None where the call is left."""
    if isinstance(call, ast.Call):
        pos = call.args[1:3]
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            return None
        given = dict(zip(KEYWORDS, pos)) | {k.arg: k.value for k in call.keywords if k.arg}
    else:
        if any(a.star for a in call.args):
            return None
        pos = [a.value for a in call.args[1:3] if a.keyword is None]
        given = dict(zip(KEYWORDS, pos))
        given |= {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    ids, out = given.get("device_ids"), given.get("output_device")
    if ids is None or not _ids(ids):
        return None  # no ids, several, or already a pick
    if isinstance(out, ast.Constant) and out.value is None:
        out = None
    elif isinstance(out, cst.Name) and out.value == "None":
        out = None
    return {k: v for k, v in (("device_ids", ids), ("output_device", out)) if v is not None}


def _slot(i: int, arg: cst.Arg) -> str | None:
    """The parameter ``arg`` (the ``i``-th argument of a DDP call) is given for."""
    if arg.keyword is not None:
        return arg.keyword.value
    return KEYWORDS[i - 1] if 1 <= i <= len(KEYWORDS) else None


def _ddp_calls(ctx) -> list[ast.Call]:
    """The DDP calls of the file whose ids go to the CPU once ported: each runs on the CPU
    (``runs_on_cpu``), and so does a process group's creation of the file (one after the
    author's ``assert torch.cuda.is_available()`` or under a device test gives DDP a CUDA
    model only)."""
    calls, inits = [], []
    for node in ctx.nodes:
        if isinstance(node, ast.Call):
            name = ctx.qualify(node.lineno, ast.unparse(node.func))
            if name in DDP and _device_args(node) is not None:
                calls.append(node)
            elif name in INIT:
                inits.append(node)
    if not any(runs_on_cpu(ctx, n.lineno) for n in inits):
        return []
    return [c for c in calls if runs_on_cpu(ctx, c.lineno)]


class ScriptDdp(Family):
    name = "script-ddp"
    serves = SERVED

    def __init__(self) -> None:
        self.sites: dict[str, set[int]] = {}  # HN601's rule -> its site lines (before prepare)
        self.calls: frozenset[int] | None = None  # first lines of the DDP calls it rewrites

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        """The DDP calls join the step of the process group's backend."""
        if spec.family not in SERVED:
            return lines
        self.sites.setdefault(spec.rule, set()).update(lines)
        calls = _ddp_calls(ctx)
        self.calls = frozenset(c.lineno for c in calls)
        return lines | {n for c in calls for n in range(c.lineno, c.end_lineno + 1)}

    def on_call(self, eng, original, updated):
        specs = [s for fam in SERVED for s in eng.specs_for(fam, original)]
        if not specs or not eng.qualnames(original.func) & DDP:
            return None
        if not any(eng.fixes(s.rule, ln) for s in specs for ln in self.sites.get(s.rule, ())):
            return None  # the gate keeps the backend: the script has no CPU path here
        if eng.line(original) not in (self.calls or ()) or _device_args(original) is None:
            return None
        eng.add_needed_import("torch", node=original)
        args = list(updated.args)
        for i, arg in enumerate(args):
            if _slot(i, arg) not in KEYWORDS or m.matches(arg.value, m.Name("None")):
                continue
            code = cst.Module([]).code_for_node(arg.value)
            args[i] = arg.with_changes(value=cst.parse_expression(f"{code} if {TEST} else None"))
        return updated.with_changes(args=args)
