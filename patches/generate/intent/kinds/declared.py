"""``cuda-declared``: the site is in a CUDA-or-CPU device pick (``"cuda" if
torch.cuda.is_available() else "cpu"``) stored in a name whose declared values are CUDA's and
the CPU's: a parameter or variable annotated ``Literal["cuda", "cpu"]``, or a parameter so
annotated of the function (of the file or the tree) the name is handed to by keyword. The
declaration is the contract of the code that reads the name (fairchem's ``load_predict_unit(...,
device: Literal["cuda", "cpu"] | None = None)`` picks the device when none is given, and its
predict units ``assert device in ["cpu", "cuda"]``, round 41); made neutral, an XPU or a Mac
picks a value the contract refuses, where the original ran on the CPU."""

from __future__ import annotations

import ast

from patches.generate.intent.index import OTHER_DEVICE
from patches.generate.intent.nodes import last_name
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-declared"
SUMMARY = "the pick is stored where the declared values are only 'cuda' and 'cpu'"


def detect(p: Probe) -> list[Evidence]:
    if p.cpu_pick is None:
        return []
    stmt = p.stmt
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    names = {t.id for t in targets if isinstance(t, ast.Name)}
    if not names:
        return []
    fn = p.functions[0] if p.functions else None
    for where, ann in _annotations(p, fn, names):
        if _cuda_and_cpu(ann):
            return [Evidence(KIND, ann.lineno, f"{where}: {ast.unparse(ann)[:60]}")]
    return []


def _annotations(p: Probe, fn, names: set[str]):
    """(where, annotation) of the names: the function's parameters, annotated assignments of its
    body, and the parameters of the same name of a function it hands the name to by keyword."""
    if fn is not None:
        for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
            if a.arg in names and a.annotation is not None:
                yield f"parameter {a.arg}", a.annotation
    scope = fn if fn is not None else p.ctx.tree
    for node in ast.walk(scope):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.target.id in names:
                yield f"variable {node.target.id}", node.annotation
        if isinstance(node, ast.Call):
            for k in node.keywords:
                if isinstance(k.value, ast.Name) and k.value.id in names and k.arg:
                    for ann in _callee_params(p, node, k.arg):
                        yield f"{last_name(node.func)}({k.arg}=...)", ann


def _callee_params(p: Probe, call: ast.Call, arg: str) -> list[ast.AST]:
    """Annotations of parameter ``arg`` of the functions named like ``call``'s callee, in the
    file or the tree (one definition only: a common name says nothing)."""
    name = last_name(call.func)
    if not name:
        return []
    index = getattr(p.ctx, "tree_index", None)
    if index is not None and hasattr(index, "named"):
        defs = [d.node for d in index.named(name)]
    else:
        defs = [
            n
            for n in ast.walk(p.ctx.tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name
        ]
    if len(defs) != 1:
        return []
    a = defs[0].args
    return [
        x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg == arg and x.annotation
    ]


def _cuda_and_cpu(ann: ast.AST) -> bool:
    """A ``Literal[...]`` in ``ann`` lists "cuda" and no other accelerator."""
    for n in ast.walk(ann):
        if isinstance(n, ast.Subscript) and last_name(n.value) == "Literal":
            values = [
                c.value
                for c in ast.walk(n.slice)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
            others = [v for v in values if OTHER_DEVICE.fullmatch(v) and v not in ("cpu", "meta")]
            if "cuda" in values and not others:
                return True
    return False
