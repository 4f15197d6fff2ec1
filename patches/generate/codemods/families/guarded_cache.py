"""Releasing the allocator's cache (HN302 ``torch.cuda.empty_cache()``) -> the accelerator's,
with the catalogue's ``guard: true`` honoured at the statement::

    torch.cuda.empty_cache()    ->    if torch.accelerator.is_available():
                                          torch.accelerator.empty_cache()

Without CUDA ``torch.cuda.empty_cache()`` is a no-op; ``torch.accelerator.empty_cache()`` raises
without an accelerator. A bare statement (its value unused) therefore gets the check that makes
it the same no-op on a CPU-only machine and the same call on CUDA (upstream's memory tracker
releases the cache of whatever device module it runs on). A call already behind an
``is_available()`` check is the plain rename; one whose value is used, or that sits in an
expression, is left (``unguarded``: nothing checks for an accelerator first).
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.call_rename import CallRename
from patches.generate.codemods.families.idioms_common import under_availability_check
from patches.generate.codemods.families.idioms_memory import checked_here

NAMES = ("torch.cuda.empty_cache", "torch.cuda.memory.empty_cache")


class GuardedCache(CallRename):
    name = "cache"
    claims = NAMES

    @staticmethod
    def _checked(eng, node) -> bool:
        return checked_here(eng, node)

    def on_call(self, eng, original, updated):
        specs = eng.specs_for(self.name, original)
        if not specs or not eng.qualnames(original.func) & set(NAMES):
            return None
        if not self._checked(eng, original) and not isinstance(eng.parent(original), cst.Expr):
            eng.fail(specs[0], original, "no is_available() check around it")
            return updated
        return super().on_call(eng, original, updated)

    def on_node(self, eng, original, updated):
        """The bare statement: wrapped in the availability check (its call is renamed above)."""
        if not isinstance(original, cst.SimpleStatementLine) or len(original.body) != 1:
            return None
        expr = original.body[0]
        if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
            return None
        if not eng.specs_for(self.name, original) or self._checked(eng, expr.value):
            return None
        if not eng.qualnames(expr.value.func) & set(NAMES) or updated.deep_equals(original):
            return None  # not ours, or the rename was declined
        return under_availability_check(eng, original, updated)
