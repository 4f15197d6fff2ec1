"""``cuda-gating``: a test module's module-level device fact (``_NDEV = torch.cuda.device_count()
if torch.cuda.is_available() else 0``) read by tests that all keep CUDA work: each function that
reads the name (``if _NDEV < world_size: pytest.skip(...)``) reaches, in its own body or through
the module's functions it calls or hands on (``mp.spawn(_worker, ...)``, a few steps out), code
that stays CUDA (``torch.cuda.set_device(rank)``, ``backend="nccl"``). The fact is what keeps
those tests off machines they cannot run on; made neutral, two XPUs run a test that then fails in
``torch.cuda.set_device`` (liger-kernel's tensor-parallel tests, found wrong in round 35's review). A name that some
reader uses without such work is the accelerator's fact: one neutral test is enough to rewrite
it (and the CUDA readers are then each judged on their own)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import span_of
from patches.generate.intent.paths import is_test_file
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-gating"
SUMMARY = "a module-level device fact whose every reading test keeps CUDA work"

_DEPTH = 3  # module functions followed from a reading test (test -> _run -> spawn(_worker))
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def detect(p: Probe) -> list[Evidence]:
    stmt = p.stmt
    if p.defs or not is_test_file(p.ctx.path) or not isinstance(stmt, ast.Assign):
        return []
    if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return []
    name = stmt.targets[0].id
    defs = {d.name: d for d in p.ctx.tree.body if isinstance(d, _DEFS)}
    readers = [d for d in defs.values() if _reads(d, name)]
    if not readers:
        return []
    first = None
    for fn in readers:
        hit = _keeps(p, fn, defs)
        if hit is None:
            return []
        first = first or hit
    line, what = first
    return [
        Evidence(KIND, line, f"{len(readers)} test(s) read {name}; they keep {what} (line {line})")
    ]


def _reads(fn: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for n in ast.walk(fn)
    )


def _keeps(p: Probe, fn: ast.AST, defs: dict):
    """(line, what) of the first CUDA work ``fn`` keeps, or that a module function it names
    (called or handed on) keeps, ``_DEPTH`` steps out; None where there is none."""
    seen, todo = set(), [(fn, 0)]
    while todo:
        d, depth = todo.pop(0)
        if d.name in seen:
            continue
        seen.add(d.name)
        hits = p.remaining(span_of(d.body), p.own)
        if hits:
            return hits[0] if d is fn else (hits[0][0], f"{hits[0][1]} in {d.name}()")
        if depth < _DEPTH:
            for n in ast.walk(d):
                if isinstance(n, ast.Name) and n.id in defs and n.id not in seen:
                    todo.append((defs[n.id], depth + 1))
    return None
