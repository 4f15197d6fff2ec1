"""Capability predicates that pick bf16 (HN112 ``torch.cuda.is_bf16_supported()``, HN109
``torch.cuda.get_device_capability() >= (8, 0)``) -> the current device module's own query.

``torch.get_device_module()`` is the current accelerator's module (``torch.cuda`` on a CUDA
machine, so the call is the same function), ``torch.cpu`` when there is none; ``torch.cpu`` has
no ``is_bf16_supported``, and ``torch.cuda.is_bf16_supported()`` is False without CUDA, so the
query is guarded by ``torch.accelerator.is_available()`` unless an ``and`` chain already starts
with the availability check. ``get_device_capability() >= (8, 0)`` is ``major >= 8``, which is
``is_bf16_supported(including_emulation=False)`` on CUDA; it is rewritten only where it picks
bf16 (assigned to a bf16-named target, or the test of an IfExp choosing bfloat16), since an SM
check elsewhere is about CUDA itself.

In a script (``script_plan.is_script``), any other ``get_device_capability()`` (an unpacked
``major, minor``, ``[0]``, another SM check) stays CUDA's where CUDA is; elsewhere it is
``(0, 0)``, an SM version below every real one, so what the script enables by SM version stays
off, as the bf16 pick above is False without an accelerator::

    major, minor = torch.cuda.get_device_capability()
    ->  major, minor = torch.cuda.get_device_capability() if torch.cuda.is_available() else (0, 0)

Left: library code, a call already under a CUDA test.
"""

from __future__ import annotations

import re

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import (
    after_availability,
    api_target,
    specs_at,
)
from patches.generate.codemods.families.idioms_memory import whole_value
from patches.generate.codemods.families.own_effect import cuda_or, under_cuda_test
from patches.generate.codemods.families.script_plan import is_script

BF16 = "torch.cuda.is_bf16_supported"
CAPABILITY = "torch.cuda.get_device_capability"
_QUERY = "torch.get_device_module().is_bf16_supported"
_BF16_NAME = re.compile(r"(?i)bf16|bfloat16")
NO_SM = "(0, 0)"  # the SM version where CUDA is not: below every real one


class Capability(Family):
    name = "capability"

    def on_call(self, eng, original, updated):
        if eng.qualnames(original.func) == {CAPABILITY}:
            return self._capability(eng, original, updated)
        specs = specs_at(eng, original, self.name, (BF16,))
        if not specs or eng.qualnames(original.func) != {BF16}:
            return None
        spec = specs[0]
        eng.remove_unused_import_by_node(original.func)
        chained = after_availability(eng, original)
        if chained and api_target(spec):
            eng.add_needed_import("accelerator_api", node=original)
            eng.done(spec, original)
            return updated.with_changes(
                func=cst.parse_expression("accelerator_api.is_bf16_supported")
            )
        eng.add_needed_import("torch", node=original)
        eng.done(spec, original)
        call = updated.with_changes(func=cst.parse_expression(_QUERY))
        return call if chained else _guarded(call)

    def _capability(self, eng, original, updated):
        """A bf16 pick is ``on_node``'s; in a script, any other use is CUDA's or ``(0, 0)``."""
        specs = specs_at(eng, original, self.name, (CAPABILITY,))
        parent = eng.parent(original)
        compared = isinstance(parent, cst.Comparison) and parent.left is original
        if not specs or (compared and self._why_not(eng, parent) is None):
            return None
        script = is_script(eng.ctx)
        if script and not under_cuda_test(eng, original):
            eng.add_needed_import("torch", node=original)
            eng.done(specs[0], original)
            return cuda_or(updated, NO_SM, bare=whole_value(eng, original))
        if script:
            eng.fail(specs[0], original, "under a CUDA check already")
        elif compared:
            eng.fail(specs[0], original, self._why_not(eng, parent))
        elif not isinstance(parent, cst.Comparison):
            eng.fail(specs[0], original, "(major, minor) used as such: about CUDA")
        return None

    def _why_not(self, eng, node: cst.Comparison) -> str | None:
        """Why the SM check ``node`` is not a bf16 pick (None: it is one)."""
        if len(node.comparisons) != 1:
            return "an SM-version check other than >= (8, 0): about CUDA"
        call, target = node.left, node.comparisons[0]
        if (
            call.args
            or not isinstance(target.operator, cst.GreaterThanEqual)
            or not _is_sm80(target.comparator)
        ):
            return "an SM-version check other than >= (8, 0): about CUDA"
        if not self._picks_bf16(eng, node):
            return "an SM-version check that does not pick bf16: about CUDA"
        return None

    def on_node(self, eng, original, updated):
        if not isinstance(original, cst.Comparison) or len(original.comparisons) != 1:
            return None
        call = original.left
        if not (isinstance(call, cst.Call) and eng.qualnames(call.func) == {CAPABILITY}):
            return None
        specs = specs_at(eng, original, self.name, (CAPABILITY,))
        if not specs or self._why_not(eng, original) is not None:
            return None  # on_call's
        eng.remove_unused_import_by_node(call.func)
        eng.add_needed_import("torch", node=original)
        eng.done(specs[0], original)
        return _guarded(cst.parse_expression(f"{_QUERY}(including_emulation=False)"))

    def _picks_bf16(self, eng, node) -> bool:
        parent = eng.parent(node)
        if isinstance(parent, cst.IfExp) and parent.test is node:
            return bool(_BF16_NAME.search(cst.Module([]).code_for_node(parent.body)))
        if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is node:
            targets = parent.targets if isinstance(parent, cst.Assign) else [parent]
            return any(_BF16_NAME.search(cst.Module([]).code_for_node(t.target)) for t in targets)
        return False


def _is_sm80(node) -> bool:
    if not isinstance(node, cst.Tuple):
        return False
    vals = [e.value for e in node.elements]
    return all(isinstance(v, cst.Integer) for v in vals) and [int(v.value) for v in vals] in (
        [8],
        [8, 0],
    )


def _guarded(call: cst.BaseExpression) -> cst.BaseExpression:
    """``(torch.accelerator.is_available() and <call>)``: False without an accelerator, as the
    CUDA query is without CUDA."""
    return cst.BooleanOperation(
        left=cst.parse_expression("torch.accelerator.is_available()"),
        operator=cst.And(),
        right=call,
        lpar=[cst.LeftParen()],
        rpar=[cst.RightParen()],
    )
