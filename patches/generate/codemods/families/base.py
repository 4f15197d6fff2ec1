"""The family protocol (``Family``) and what several families share.

Which family fixes a rule follows from the catalogue (``fix.style`` and the match type, see
``patches/generate/targets.py``); the names, the replacement and ``fix.args`` come from the
catalogue too, and argument shapes from the real signatures, so a new rule of an existing shape
needs no code here. A new shape is a module of this package with one ``Family`` subclass, added
to ``codemods/registry.py``.
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.context import param_defaults
from patches.generate.intent.paths import (  # noqa: F401 (re-exported for the families)
    is_test_file,
    placed_as_test,
)


class Family:
    """A rewrite shape. One instance per file (``registry.new_families``), so a family may keep
    per-file state. Every site a family is offered has passed the intent gate (``patches/generate/intent/``):
    the family decides only *how* to rewrite, never *whether* the code is about CUDA.

    ``claims``: the matched names whose rules this family fixes instead of the one their
    catalogue style names (``targets.family_of``). ``prepare`` may add lines the family
    rewrites with a site in the same step, and statements it rewrites whole to
    ``ctx.blocks`` (each then one region: ``on_node`` sees the whole ``if``, not its header);
    ``companions`` names spans it rewrites together with a site (they count as fixed with it,
    see ``intent.Gate``). ``serves``: other families whose specs this one also prepares (it
    rewrites some of their sites, and needs lines of its own in their step).
    """

    name = ""
    claims: tuple[str, ...] = ()
    serves: tuple[str, ...] = ()

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        return lines

    def companions(self, ctx, spec, lines: frozenset[int]) -> dict[tuple[str, int], list]:
        return {}

    def renames_plainly(self, ctx) -> bool:
        """This family's fix of a site in ``ctx`` is the plain rename: the gate's ``redundant``
        kind asks whether that rename would only repeat the line before."""
        return self.name == "call"

    def claimed(self, eng, call: cst.Call):
        """(this family's first spec at ``call``, the names of ``claims`` it calls), or None
        where the family has no spec there or the call is none of its claims."""
        specs = eng.specs_for(self.name, call)
        matched = eng.qualnames(call.func) & set(self.claims) if specs else set()
        return (specs[0], matched) if matched else None

    def on_call(self, eng, original: cst.Call, updated: cst.Call):
        return None

    def on_ref(self, eng, original, updated):
        return None

    def on_literal(self, eng, original, updated):
        return None


def device_type_expr(eng, node: cst.CSTNode) -> cst.BaseExpression | None:
    """The device type to thread into an API that needs one: a ``device_type`` in scope, else
    ``torch.device(device).type`` for a ``device`` in scope (str or torch.device), else None."""
    if eng.in_scope(node, "device_type"):
        return cst.Name("device_type")
    if eng.in_scope(node, "device"):
        eng.add_needed_import("torch", node=node)
        return cst.parse_expression("torch.device(device).type")
    return None


def is_int_param(ctx, line: int, name: str) -> bool:
    """``name`` is a parameter of the function resolving it at ``line`` annotated ``int`` or with
    an int default (a device index: ``torch.get_device_module`` takes no int)."""
    b = ctx.binding(line, name)
    fn = b[0].node if b else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    a = fn.args
    defaults = param_defaults(fn)
    for p in a.posonlyargs + a.args + a.kwonlyargs:
        if p.arg != name:
            continue
        ann = ast.unparse(p.annotation) if p.annotation is not None else ""
        d = defaults.get(name)
        is_int = isinstance(d, ast.Constant) and type(d.value) is int
        return ann in ("int", "Optional[int]", "int | None") or is_int
    return False


COMMON_UTILS = "torch.testing._internal.common_utils"
