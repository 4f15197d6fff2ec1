"""``torch.cuda.manual_seed(s)`` (or ``manual_seed_all``) right after ``torch.manual_seed(s)``
(HN310): the line is deleted::

    torch.manual_seed(args.seed)                    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)       ->

``torch.manual_seed`` already seeds the CPU and every device with ``s`` (CUDA's current device
included), so the second line changes nothing: on CUDA the generators end in the same state, and
its rename would only repeat the line before (the gate's ``redundant`` reason, which this family
answers by deleting instead; a comment on the line goes with it). Also a run of them
(``torch.cuda.manual_seed(s)`` then ``torch.cuda.manual_seed_all(s)``). Only where the calls take
the same plain arguments (names, attributes, constants: evaluating them twice gives the same
value), with no comment line between them. Elsewhere the plain rename (``CallRename``).
"""

from __future__ import annotations

import ast
import functools

import libcst as cst

from patches.generate.codemods.families.call_rename import CallRename
from patches.generate.intent import is_call

NAMES = (
    "torch.cuda.manual_seed",
    "torch.cuda.manual_seed_all",
    "torch.cuda.random.manual_seed",
    "torch.cuda.random.manual_seed_all",
)


def _plain(node: ast.AST) -> bool:
    return all(
        isinstance(n, (ast.Name, ast.Attribute, ast.Constant, ast.Load)) for n in ast.walk(node)
    )


def _call(stmt: ast.AST) -> ast.Call | None:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return stmt.value
    return None


def _same(a: ast.Call, b: ast.Call) -> bool:
    args = a.args + [k.value for k in a.keywords]
    return (
        all(_plain(x) for x in args)
        and ast.dump(ast.Tuple(a.args, ast.Load())) == ast.dump(ast.Tuple(b.args, ast.Load()))
        and [(k.arg, ast.dump(k.value)) for k in a.keywords]
        == [(k.arg, ast.dump(k.value)) for k in b.keywords]
    )


@functools.lru_cache(maxsize=64)
def repeats(ctx) -> dict[int, int]:
    """Line of a redundant CUDA seed -> line of the ``torch.manual_seed`` it repeats (directly
    before it, or before a run of such CUDA seeds)."""
    out, lines = {}, ctx.source.splitlines()
    for parent in ast.walk(ctx.tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if not isinstance(stmts, list):
                continue
            for i, stmt in enumerate(stmts):
                b = _call(stmt)
                if b is None or not any(is_call(ctx, b, n) for n in NAMES):
                    continue
                j = i - 1
                while j >= 0 and stmts[j].lineno in out and _same(_call(stmts[j]), b):
                    j -= 1  # an earlier CUDA seed of the same run, itself redundant
                a = _call(stmts[j]) if j >= 0 else None
                if a is None or not is_call(ctx, a, "torch.manual_seed") or not _same(a, b):
                    continue
                run = stmts[j : i + 1]
                if any(
                    lines[k].strip()
                    for x, y in zip(run, run[1:])
                    for k in range(x.end_lineno, y.lineno - 1)
                ):
                    continue  # a comment between: the reader's, it would go with the line
                out[stmt.lineno] = stmts[j].lineno
    return out


class SeedAfterSeed(CallRename):
    name = "seed"
    claims = NAMES

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        pairs = {ln: p for ln, p in repeats(ctx).items() if ln in lines}
        ctx.blocks.update((p, ln) for ln, p in pairs.items())
        return lines | frozenset(pairs.values())

    def on_call(self, eng, original, updated):
        if eng.line(original) not in repeats(eng.ctx):
            return super().on_call(eng, original, updated)
        return None  # the statement goes whole (on_node)

    def on_node(self, eng, original, updated):
        if not isinstance(original, cst.SimpleStatementLine):
            return None
        line = eng.line(original)
        if line not in repeats(eng.ctx):
            return None
        specs = eng.specs_for(self.name, original)
        if not specs or not eng.fixes(specs[0].rule, line):
            return None
        eng.done(specs[0], original)
        return cst.RemovalSentinel.REMOVE
