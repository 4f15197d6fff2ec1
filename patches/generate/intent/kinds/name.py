"""``cuda-name``: the value is handed to a slot that asks for CUDA by contract: a keyword of a
call (``SystemEnv(is_cuda_available=...)``, ``f(use_cuda=...)``: the callee documents the slot as
CUDA's) or a ``{"cuda": ...}`` entry (a per-device-type table). The name a value is assigned to
(``use_cuda = ...``, ``all_cuda &= ...``) is the author's own word and no evidence: the code that
reads the name is judged where it runs (``cuda-flow``, ``cuda-branch``). One exception: a test
gate bound to a public module-level name that says CUDA (``requires_cuda =
unittest.skipUnless(torch.cuda.is_available(), ...)``) is read where the tests it decorates
are, in other modules; the name is their contract, so its condition stays CUDA's."""

from __future__ import annotations

import ast

from patches.generate.intent.data import is_cuda_word
from patches.generate.intent.nodes import COMPS
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-name"
SUMMARY = "the value is handed to a keyword or table entry that names CUDA"


_GATES = ("skipIf", "skipUnless", "skipif")  # unittest's and pytest.mark's skip decorators


def detect(p: Probe) -> list[Evidence]:
    name = _carrier_name(p)
    if name:
        return [Evidence(KIND, p.node.lineno, f"flows into {name}")]
    gate = _named_test_gate(p)
    return [Evidence(KIND, p.node.lineno, f"the test gate {gate}")] if gate else []


def _named_test_gate(p: Probe) -> str:
    """``requires_cuda`` for a site in ``requires_cuda = unittest.skipUnless(<site>, ...)`` at
    module level (a public name: other modules decorate their tests with it), else ""."""
    stmt = p.node
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = p.index.parents.get(stmt)
    if not (
        isinstance(stmt, ast.Assign)
        and p.index.parents.get(stmt) is p.index.ctx.tree
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and not stmt.targets[0].id.startswith("_")
        and is_cuda_word(stmt.targets[0].id)
        and isinstance(stmt.value, ast.Call)
    ):
        return ""
    func = stmt.value.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return stmt.targets[0].id if called in _GATES else ""


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
