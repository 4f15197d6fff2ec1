"""``cuda-parallel``: the site decides whether a module is wrapped in ``DataParallel`` (or
replicated with ``torch.nn.parallel``'s scatter and gather), whose multi-device work only CUDA
implements (``[parallel]`` in ``cuda_intent.toml``). Directly (``if torch.cuda.device_count() >
1: model = nn.DataParallel(model)``) or through what it is stored in: a local name of the same
scope, or an attribute (``args.n_gpu = torch.cuda.device_count()`` ... ``if args.n_gpu > 1:``,
Hugging Face's scripts) tested anywhere in the file. A neutral count would wrap the model on an
accelerator with several devices that are not CUDA's (Trainium, Intel GPUs), and its first
forward stops there (``torch._C`` has no ``_scatter``); CUDA's count leaves it unwrapped there."""

from __future__ import annotations

import ast

from patches.generate.intent.data import calls
from patches.generate.intent.nodes import span_of
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-parallel"
SUMMARY = "it decides a DataParallel wrap, whose scatter only CUDA implements"


def _wraps(p: Probe, arms) -> tuple[int, str] | None:
    """(line, name) of the first replication call in ``arms`` (statements or expressions)."""
    wanted = calls("parallel")
    for arm in arms:
        for n in ast.walk(arm):
            if isinstance(n, ast.Call):
                name = p.ctx.qualify(n.lineno, ast.unparse(n.func)) or ""
                if name in wanted:
                    return n.lineno, name.rsplit(".", 1)[-1]
    return None


def _evidence(hit: tuple[int, str] | None, how: str) -> list[Evidence]:
    if hit is None:
        return []
    line, name = hit
    return [Evidence(KIND, line, f"{how}{name} (line {line})")]


def _stored(p: Probe) -> tuple[str, ast.AST] | None:
    """(the text of what ``x = <site>`` binds, the scope to search) for a name or an attribute
    (``args.n_gpu``: the whole file, where the namespace travels)."""
    stmt = p.stmt
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    if not any(x is p.node for x in ast.walk(stmt.value)):
        return None
    target = stmt.targets[0]
    if isinstance(target, ast.Name):
        return target.id, p.ctx.scope_at(stmt.lineno).node
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
        return ast.unparse(target), p.ctx.tree
    return None


def detect(p: Probe) -> list[Evidence]:
    if "arallel" not in p.ctx.source:  # each such call is spelled or imported with its name
        return []  # (DataParallel, torch.nn.parallel.*): no file scan for the rest
    body, orelse = p.arms
    direct = _wraps(p, body + orelse)
    if direct is not None:
        return _evidence(direct, "the branch it selects calls ")
    stored = _stored(p)
    if stored is None:
        return []
    text, scope = stored
    # a local is read after it is bound; an attribute wherever its namespace goes (a function
    # defined above the assignment runs after it: Hugging Face's train(args) below main())
    after = span_of(p.stmt)[1] if scope is not p.ctx.tree else (0, 0)
    for n in ast.walk(scope):
        if not isinstance(n, (ast.If, ast.IfExp, ast.While)) or span_of(n)[0] <= after:
            continue
        reads = [x for x in ast.walk(n.test) if isinstance(x, (ast.Name, ast.Attribute))]
        if any(ast.unparse(x) == text for x in reads):
            arms = [n.body, n.orelse] if isinstance(n, ast.IfExp) else [*n.body, *n.orelse]
            hit = _wraps(p, arms)
            if hit is not None:
                return _evidence(hit, f"{text} decides at line {n.lineno}: ")
    return []
