"""``cuda-name``: the value is handed to a slot that asks for CUDA by contract: a keyword of a
call (``SystemEnv(is_cuda_available=...)``, ``f(use_cuda=...)``: the callee documents the slot as
CUDA's) or a ``{"cuda": ...}`` entry (a per-device-type table). The name a value is assigned to
(``use_cuda = ...``, ``all_cuda &= ...``) is the author's own word and no evidence: the code that
reads the name is judged where it runs (``cuda-flow``, ``cuda-branch``). Two exceptions, names
read in other modules, where the name is the readers' contract and its value stays CUDA's: a test
gate bound to a public module-level name that says CUDA (``requires_cuda =
unittest.skipUnless(torch.cuda.is_available(), ...)``) decorates tests elsewhere; a public
module-level flag that says CUDA and that another file of the tree imports (verl's
``is_cuda_available = torch.cuda.is_available()`` in its device module: its readers guard
nvtx, CUDA's capability and a CUDA-only recompute patch with it, round 35)."""

from __future__ import annotations

import ast

from patches.generate.intent.data import is_cuda_word
from patches.generate.intent.nodes import COMPS, SKIP_GATES
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-name"
SUMMARY = "the value is handed to a keyword, table entry or exported name that names CUDA"


def detect(p: Probe) -> list[Evidence]:
    name = _carrier_name(p)
    if name:
        return [Evidence(KIND, p.node.lineno, f"flows into {name}")]
    gate = _named_test_gate(p)
    if gate:
        return [Evidence(KIND, p.node.lineno, f"the test gate {gate}")]
    flag = _exported_flag(p)
    return (
        [Evidence(KIND, p.node.lineno, f"the module's flag {flag}, read elsewhere")] if flag else []
    )


def _public_cuda_target(p: Probe) -> tuple[ast.Assign | None, str]:
    """The module-level ``NAME = ...`` holding the site, its public target naming CUDA."""
    stmt = p.node
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = p.index.parents.get(stmt)
    ok = (
        isinstance(stmt, ast.Assign)
        and p.index.parents.get(stmt) is p.index.ctx.tree
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and not stmt.targets[0].id.startswith("_")
        and is_cuda_word(stmt.targets[0].id)
    )
    return (stmt, stmt.targets[0].id) if ok else (None, "")


def _exported_flag(p: Probe) -> str:
    """``is_cuda_available`` for a site in ``is_cuda_available = torch.cuda.is_available()`` at
    module level that another tree file imports (its name and this module), else ""."""
    stmt, name = _public_cuda_target(p)
    tree = getattr(p.ctx, "tree_index", None)
    if stmt is None or tree is None:
        return ""
    rel = p.ctx.path
    for other in tree.holding(name.encode()):
        if other != rel and tree.imports(other, rel):
            return name
    return ""


def _named_test_gate(p: Probe) -> str:
    """``requires_cuda`` for a site in ``requires_cuda = unittest.skipUnless(<site>, ...)`` at
    module level (a public name: other modules decorate their tests with it), else ""."""
    stmt, _name = _public_cuda_target(p)
    if stmt is None or not isinstance(stmt.value, ast.Call):
        return ""
    func = stmt.value.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return stmt.targets[0].id if called in SKIP_GATES else ""


def _carrier_name(p: Probe) -> str:
    """Climb through the expressions that carry the value: a CUDA keyword or dict key on the
    way, else ""."""
    n = p.node
    while True:
        parent = p.index.parents.get(n)
        if parent is None or isinstance(parent, ast.stmt):
            return ""
        if isinstance(parent, ast.keyword) and parent.arg and is_cuda_word(parent.arg):
            return parent.arg
        if isinstance(parent, ast.Dict) and n in parent.values:
            key = parent.keys[parent.values.index(n)]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                if is_cuda_word(key.value):
                    return repr(key.value)
        if isinstance(parent, (ast.Lambda, *COMPS)) or isinstance(parent, ast.comprehension):
            return ""
        n = parent
