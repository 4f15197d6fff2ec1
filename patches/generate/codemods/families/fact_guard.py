"""A device fact a script only reports: the query and the statements that read it, under one
availability check, where the script runs on the CPU once ported (``sync_guard.runs_on_cpu``)::

    props = torch.cuda.get_device_properties(0)       if torch.accelerator.is_available():
    print(f"GPU: {props.name}")                  ->       props = torch.get_device_module().get_device_properties(0)
                                                          print(f"GPU: {props.name}")

The facts: ``get_device_properties`` (HN107, fixed by ``device_module``) and ``mem_get_info``
(HN303, ``torch.accelerator.get_memory_info``). Both raise without an accelerator, and no value
stands in for them on the CPU (a total memory of 0 divides by zero), so the unit is the
assignment and the simple statements right after it that read what it binds (and what those
bind): a log, a derived number. Nothing after the unit, nor anything else in its scope, may read
those names; where something does (``use_flash = major >= 8`` read later), there is no unit.

This family owns HN303: a ``mem_get_info`` already under an ``is_available()`` check is the
plain rename, one heading a unit is renamed with the unit checked, any other is left (nothing
checks for an accelerator first). The ``accelerator_api`` target's ``get_memory_info`` answers
on the CPU (host memory): the plain rename everywhere.
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.call_rename import CallRename
from patches.generate.codemods.families.fact_units import (
    MEMORY_INFO,
    checked_by_unit,
    unit_at,
    units,
)
from patches.generate.codemods.families.idioms_common import under_availability_check
from patches.generate.codemods.families.idioms_memory import checked_here


class GuardedFacts(CallRename):
    name = "facts"
    claims = MEMORY_INFO
    serves = ("device-module",)

    def __init__(self) -> None:
        self.held: list[cst.BaseStatement] = []  # the unit's statements rewritten so far

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        mine = [u for u in units(ctx).values() if u.head in lines and u.query in spec.names]
        ctx.blocks.update((u.head, u.end) for u in mine)
        return lines | frozenset(ln for u in mine for ln in range(u.head, u.end + 1))

    def on_call(self, eng, original, updated):
        claimed = self.claimed(eng, original)
        if claimed is None:
            return None
        spec = claimed[0]
        line = eng.line(original)
        unit = units(eng.ctx).get(line)
        checked = checked_here(eng, original)
        ours = spec.new_for(next(iter(claimed[1]))).startswith("accelerator_api.")
        if not (checked or ours or (unit is not None and self._is_query(eng, original))):
            eng.fail(spec, original, "no is_available() check around it")
            return updated
        return super().on_call(eng, original, updated)

    def _after(self, eng, original, updated):
        """``updated`` as the families after this one rewrite the statement (those before it
        have declined it: the engine asked them first)."""
        families = list(eng.families.values())
        for fam in families[families.index(self) + 1 :]:
            hook = getattr(fam, "on_node", None)
            new = hook(eng, original, updated) if hook is not None else None
            if new is not None:
                return new
        return updated

    @staticmethod
    def _is_query(eng, call: cst.Call) -> bool:
        """``call`` is the whole value of its unit's assignment."""
        parent = eng.parent(call)
        return isinstance(parent, cst.Assign) and parent.value is call

    def on_node(self, eng, original, updated):
        if not isinstance(original, cst.SimpleStatementLine):
            return None
        line = eng.line(original)
        unit = units(eng.ctx).get(line)
        if unit is not None:
            self.held = []
            if not checked_by_unit(eng, line) or updated.deep_equals(original):
                return None  # not this step's, or the query was left
            if "accelerator_api." in cst.Module([]).code_for_node(updated):
                return None  # answers on the CPU
        elif not self.held or not (unit := unit_at(eng.ctx, line)) or unit.head == line:
            return None
        new = self._after(eng, original, updated)
        if isinstance(new, cst.FlattenSentinel):
            self.held.extend(new.nodes)
        elif isinstance(new, cst.BaseStatement):
            self.held.append(new)
        if eng.end_line(original) < unit.end:
            return cst.RemovalSentinel.REMOVE
        body, self.held = self.held, []
        if not body:
            return cst.RemovalSentinel.REMOVE  # a later family removed every statement
        return under_availability_check(eng, original, body)
