"""Eager device initialisation (HN113 ``torch.cuda.init()``) behind an availability check -> the
current accelerator's module's ``init()``::

    if torch.cuda.is_available() and devices:          if torch.accelerator.is_available() and devices:
        torch.cuda.init()                        ->        torch.get_device_module(
                                                               torch.accelerator.current_accelerator()
                                                           ).init()

Upstream's shape (the RPC agent's device setup, torch 2.14). ``torch.cpu`` and ``torch.mps``
have no ``init``, so only the body of an ``if`` whose test is an ``is_available()`` check of CUDA
or of the accelerator, alone or as one term of an ``and`` chain (the check the availability
family rewrites beside it): there ``current_accelerator()`` is never None, and on a CUDA machine
the module is ``torch.cuda``, the same call. Left: a call outside such a check, a check that is
one side of an ``or``, an ``is_available`` of anything else (``dist.is_available()``), and an
``init`` whose result is used (CUDA's returns None; another module's need not).
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import (
    AVAILABLE,
    block_lines,
    conjuncts,
    known_blocks,
)

INIT = "torch.cuda.init"
_MODULE = "torch.get_device_module(torch.accelerator.current_accelerator())"


def _asks_availability(ctx, test: ast.expr) -> bool:
    """``test`` is ``<check>()`` or an ``and`` chain with one such term."""
    for t in conjuncts(test):
        if isinstance(t, ast.Call) and not t.args and not t.keywords:
            dotted = ast.unparse(t.func)
            if ctx.qualify(t.lineno, dotted) in AVAILABLE:
                return True
    return False


def _guarded_lines(ctx) -> frozenset[int]:
    """Lines of the body (not the ``else``) of an ``if`` that asks for an accelerator."""
    return block_lines(
        known_blocks(ctx.tree, lambda test, taken: taken and _asks_availability(ctx, test) or None)
    )


def _guarded(eng, call: cst.Call) -> bool:
    """``call`` is in the body of an ``if`` that asks for an accelerator (the whole file's tree:
    the engine may see only the statement)."""
    return eng.line(call) in _guarded_lines(eng.ctx)


class GuardedInit(Family):
    name = "guarded-init"
    claims = (INIT,)

    def on_call(self, eng, original, updated):
        claimed = self.claimed(eng, original)
        if claimed is None:
            return None
        spec, _ = claimed
        parent = eng.parent(original)
        if not isinstance(parent, cst.Expr):
            eng.fail(spec, original, "its result is used")
            return None
        if not _guarded(eng, original):
            eng.fail(spec, original, "no accelerator is_available() check around it")
            return None
        eng.remove_unused_import_by_node(original.func)
        eng.add_needed_import("torch", node=original)
        eng.done(spec, original)
        return updated.with_changes(func=cst.parse_expression(f"{_MODULE}.init"))
