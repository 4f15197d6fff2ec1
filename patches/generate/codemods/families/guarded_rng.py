"""Device RNG state (HN313 ``torch.cuda.get_rng_state`` / ``set_rng_state``) behind an
availability check -> the same call on the current accelerator's module::

    if torch.cuda.is_available():                  if torch.accelerator.is_available():
        state = torch.cuda.get_rng_state()   ->        state = torch.get_device_module().get_rng_state()

``torch.get_device_module()`` with no argument is the current accelerator's module (``torch.cuda``
on a CUDA machine: the same call, the same default device), so the arguments stay. Only where
the line is reached with an accelerator (the body of an ``if ...is_available():``, the value of
``... if ...is_available() else ...``): without one ``torch.get_device_module()`` is ``torch.cpu``,
which has no ``get_rng_state``. The save/restore pair of a ``freeze_rng_state``-style context
manager is upstream's shape (torch.testing's own). Left: the ``*_all`` variants (not every device
module has them), an argument that names CUDA itself (``device="cuda:1"``), and a call outside
such a check (the catalogue's ``guard: true``: ``unguarded``).
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.device_module import device_module_call
from patches.generate.codemods.families.idioms_memory import checked_here

_ONE = ("get_rng_state", "set_rng_state")
_ALL = ("get_rng_state_all", "set_rng_state_all")
_PREFIXES = ("torch.cuda.", "torch.cuda.random.")


def _names_cuda(node: cst.CSTNode) -> bool:
    """A string in ``node`` says "cuda" (``"cuda:1"``, ``f"cuda:{i}"``)."""
    found = []

    class _V(cst.CSTVisitor):
        def visit_SimpleString(self, n):
            found.append("cuda" in n.value)

        def visit_FormattedStringText(self, n):
            found.append("cuda" in n.value)

    node.visit(_V())
    return any(found)


class GuardedRng(Family):
    name = "guarded-rng"
    claims = tuple(p + n for p in _PREFIXES for n in _ONE + _ALL)

    def on_call(self, eng, original, updated):
        claimed = self.claimed(eng, original)
        if claimed is None:
            return None
        spec, matched = claimed
        query = next(iter(matched)).rsplit(".", 1)[1]
        if query in _ALL:
            eng.fail(spec, original, f"{query}: not every device module has it")
            return None
        if any(_names_cuda(a.value) for a in original.args):
            eng.fail(spec, original, "an argument names CUDA itself")
            return None
        if not checked_here(eng, original):
            eng.fail(spec, original, "no is_available() check around it")
            return None
        return device_module_call(eng, spec, original, updated, query)
