"""``unguarded``: a plain rename of a ``guard: true`` rule (``empty_cache``: a no-op without CUDA,
the neutral one raises without an accelerator) with no availability check around the site: an
enclosing test, an earlier operand of its ``and`` chain, or an earlier ``if not ...: return`` of
its block that names ``is_available`` (an imported alias of it too), a ``TEST_*`` gate or a device
count (``intent.counts``: ``if n_gpu:``, ``for i in range(n_gpu):``). Also a device literal
rewritten to the current accelerator's type with no fallback (``[import_time] rules``:
``torch.device("cuda:0")`` -> ``torch.device(...current_accelerator().type, 0)``) where it runs
at import in a test module (module or class level, no function or lambda around it) and nothing
checks first: the original only named CUDA, the rewrite raises without an accelerator and the
module no longer collects (liger-kernel's host-side selector tests keep a CUDA descriptor, round
35); so does one in a default argument of a function the module defines, in any module (round
37). A script's top level takes the device line it writes (``script_device``), with its
fallback. Not about CUDA but safety, so asked only when no kind before it answered, and a site
left for it keeps no other site CUDA."""

from __future__ import annotations

import ast

from patches.generate.intent.counts import count_names, count_test, counted_loop
from patches.generate.intent.data import data
from patches.generate.intent.nodes import exits
from patches.generate.intent.paths import is_test_file
from patches.generate.intent.probe import Evidence, Probe

KIND = "unguarded"
SUMMARY = (
    "the neutral API raises without an accelerator where CUDA's did not, and nothing checks for "
    "one first"
)
NEEDS_NODE = False
ALONE = True


def detect(p: Probe) -> list[Evidence]:
    if p.f.rule in p.options.unguarded and not checked(p):
        return [Evidence(KIND, p.f.line, "no is_available() check around it")]
    if p.f.rule in data()["import_time"]["rules"] and _at_import(p) and not checked(p):
        return [Evidence(KIND, p.f.line, "it runs at import, and no is_available() check is there")]
    return []


def _at_import(p: Probe) -> bool:
    """The site runs at import: in a test module, where no function or lambda holds it (it runs
    when tests collect); in any module, in a default or a decorator of a ``def`` that no other
    function holds (nnU-Net's ``device=torch.device('cuda', 0)``, round 37)."""
    if p.node is None:
        return False
    child, n, at_def = p.node, p.index.parents.get(p.node), False
    while n is not None:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if child is not n.args and child not in getattr(n, "decorator_list", ()):
                return False
            at_def = True  # evaluated where the ``def`` runs
        child, n = n, p.index.parents.get(n)
    return at_def or is_test_file(p.ctx.path)


def _checks(test, p: Probe) -> bool:
    """``test`` names ``is_available`` (or a ``TEST_*`` gate), directly or through an imported
    alias (``from torch.cuda import is_available as cuda_available``), or tests a device count."""
    if count_test(test, count_names(p.ctx.tree)) is not None:
        return True
    for x in ast.walk(test):
        if isinstance(x, ast.Attribute) and x.attr == "is_available":
            return True
        if isinstance(x, ast.Name) and (
            x.id.startswith("TEST_")
            or (p.ctx.qualify(x.lineno, x.id) or "").endswith(".is_available")
        ):
            return True
    return False


def checked(p: Probe) -> bool:
    """An availability check around the site: an enclosing test, an earlier operand of its
    ``and`` chain, an earlier ``if not ...: return`` of its block, a loop over a device count."""
    n, it = p.node, p.index
    counts = count_names(it.ctx.tree)
    while n is not None:
        parent = it.parents.get(n)
        if counted_loop(parent, counts) and n in parent.body:
            return True
        if (
            isinstance(parent, (ast.If, ast.While, ast.IfExp))
            and n is not parent.test
            and _checks(parent.test, p)
        ):
            return True
        if isinstance(parent, ast.BoolOp) and any(
            _checks(v, p) for v in parent.values[: parent.values.index(n)]
        ):
            return True
        if isinstance(n, ast.stmt):
            block = it.block_of(n) or []
            for prev in block[: block.index(n)] if n in block else []:
                if isinstance(prev, ast.If) and exits(prev.body) and _checks(prev.test, p):
                    return True
        n = parent
    return False
