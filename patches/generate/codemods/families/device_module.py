"""Device queries of the CUDA module (HN107 ``get_device_properties``, HN108 ``get_device_name``)
-> the same query of the current accelerator's module, ``torch.get_device_module()``::

    device_name = torch.cuda.get_device_name()   ->   device_name = torch.get_device_module().get_device_name()

``torch.get_device_module()`` with no argument is the module of the current accelerator
(``torch.cuda`` on a CUDA machine: the same call), so the arguments stay as they are (an index,
a device). ``torch.accelerator`` has neither query (llm-compressor#2884); upstream's forms are
an internal helper or the device interface (the sparse Triton tuning tables, inductor's bf16
warning). Property objects differ per backend: a ``get_device_properties`` whose result is read
for anything but the fields every backend's properties have (``COMMON_FIELDS``) is left, as is
one whose result goes anywhere else (handed on, returned, kept in a container).

A script that runs on the CPU once ported (``sync_guard.runs_on_cpu``: its device line, a
``"cpu"`` value) reads a name the CPU's module cannot give; there the name is checked first,
as a memory counter is (``idioms_memory``)::

    print(f"GPU: {torch.cuda.get_device_name(0)}")
->  print(f"GPU: {(torch.get_device_module().get_device_name(0) if torch.accelerator.is_available() else 'cpu')}")

On CUDA the same call; the original raised without CUDA. No value stands in for properties on
the CPU: where a script only reports them, ``fact_guard`` checks them with their readers.
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.fact_units import COMMON_FIELDS, PROPERTIES, checked_by_unit
from patches.generate.codemods.families.idioms_common import quoted
from patches.generate.codemods.families.idioms_memory import checked_here, whole_value
from patches.generate.codemods.families.sync_guard import runs_on_cpu

NAME = "torch.cuda.get_device_name"


def _assigned_name(eng, call: cst.Call) -> str | None:
    """``x = <call>``: ``x``."""
    parent = eng.parent(call)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, cst.Name):
            return target.value
    return None


def _common_reads(ctx, line: int, name: str) -> bool:
    """Every read of ``name`` in the scope holding ``line`` is ``name.<common field>``."""
    scope = ctx.scope_at(line).node
    fields, loads = 0, 0
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            loads += 1
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == name:
                if node.attr not in COMMON_FIELDS:
                    return False
                fields += 1
    return loads == fields


def _reads_common_fields(eng, call: cst.Call) -> bool:
    """The properties ``call`` returns are read only for ``COMMON_FIELDS``."""
    parent = eng.parent(call)
    if isinstance(parent, cst.Attribute) and parent.value is call:
        return parent.attr.value in COMMON_FIELDS
    name = _assigned_name(eng, call)
    return name is not None and _common_reads(eng.ctx, eng.line(call), name)


class DeviceModule(Family):
    name = "device-module"
    claims = (PROPERTIES, NAME)

    def on_call(self, eng, original, updated):
        claimed = self.claimed(eng, original)
        if claimed is None:
            return None
        spec, matched = claimed
        if PROPERTIES in matched and not _reads_common_fields(eng, original):
            eng.fail(spec, original, "reads fields only CUDA's device properties have")
            return None
        query = next(iter(matched)).rsplit(".", 1)[1]
        new = device_module_call(eng, spec, original, updated, query)
        if NAME not in matched or not _named_on_cpu(eng, original):
            return new
        bare = whole_value(eng, original)
        return cst.IfExp(
            test=cst.parse_expression("torch.accelerator.is_available()"),
            body=new,
            orelse=cst.SimpleString(quoted(eng, original, "cpu")),
            lpar=[] if bare else [cst.LeftParen()],
            rpar=[] if bare else [cst.RightParen()],
        )


def _named_on_cpu(eng, call: cst.Call) -> bool:
    """``get_device_name`` whose value a ported script reads on a CPU-only machine (``sync_guard.
    runs_on_cpu``), under no availability check: the CPU's module has no such query."""
    line = eng.line(call)
    if isinstance(eng.parent(call), cst.Expr) or not runs_on_cpu(eng.ctx, line):
        return False
    return not (checked_here(eng, call) or checked_by_unit(eng, line))


def device_module_call(eng, spec, original: cst.Call, updated: cst.Call, query: str) -> cst.Call:
    """``updated`` calling ``torch.get_device_module().<query>`` (the current accelerator's
    module), the site done."""
    eng.remove_unused_import_by_node(original.func)
    eng.add_needed_import("torch", node=original)
    eng.done(spec, original)
    return updated.with_changes(func=cst.parse_expression(f"torch.get_device_module().{query}"))
