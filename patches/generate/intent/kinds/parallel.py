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


def _arms(n) -> list:
    return [n.body, n.orelse] if isinstance(n, ast.IfExp) else [*n.body, *n.orelse]


def _deciders(p: Probe) -> list[tuple[ast.AST, tuple[int, str], frozenset[str]]]:
    """The file's tests whose arms make a replication call: (the ``if``/``IfExp``/``while``, the
    first call's (line, name), the names and attributes its test reads). Once per file; none
    where the file makes no such call (most files: then nothing else is walked)."""
    ctx = p.ctx
    if "_parallel_deciders" in ctx.__dict__:
        return ctx._parallel_deciders
    wanted = calls("parallel")
    lasts = {w.rsplit(".", 1)[-1] for w in wanted}
    made = {}
    for n in ctx.nodes if "arallel" in ctx.source else ():  # each is spelled or imported so
        func = n.func if isinstance(n, ast.Call) else None
        last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        alias = isinstance(func, ast.Name) and last not in lasts  # `DP(model)` after `as DP`
        if last in lasts or alias:  # before unparsing: most calls are none of these
            name = ctx.qualify(n.lineno, ast.unparse(func)) or ""
            if name in wanted:
                made[id(n)] = (n.lineno, name.rsplit(".", 1)[-1])
    out = []
    for n in ctx.nodes if made else ():
        if isinstance(n, (ast.If, ast.IfExp, ast.While)):
            hit = next((made[id(c)] for a in _arms(n) for c in ast.walk(a) if id(c) in made), None)
            if hit is not None:
                reads = [x for x in ast.walk(n.test) if isinstance(x, (ast.Name, ast.Attribute))]
                out.append((n, hit, frozenset(ast.unparse(x) for x in reads)))
    ctx._parallel_deciders = out
    return out


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
    deciders = _deciders(p)
    if not deciders:
        return []
    for n, hit, _reads in deciders:
        if any(x is p.node for x in ast.walk(n.test)):
            return _evidence(hit, "the branch it selects calls ")
    stored = _stored(p)
    if stored is None:
        return []
    text, scope = stored
    # a local is read after it is bound, in its scope; an attribute wherever its namespace goes
    # (a function defined above the assignment runs after it: Hugging Face's train(args) below
    # main())
    local = scope is not p.ctx.tree
    after = span_of(p.stmt)[1]
    for n, hit, reads in deciders:
        if text not in reads:
            continue
        if local and (span_of(n)[0] <= after or p.ctx.scope_at(n.lineno).node is not scope):
            continue
        return _evidence(hit, f"{text} decides at line {n.lineno}: ")
    return []
