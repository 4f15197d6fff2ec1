"""``torch.cuda.manual_seed(s)`` (or ``manual_seed_all``) right after ``torch.manual_seed(s)``
(HN310), in a script: the line is deleted::

    torch.manual_seed(args.seed)                    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)       ->

``torch.manual_seed`` already seeds the CPU and every device with ``s`` (CUDA's current device
included), so the second line changes nothing: on CUDA the generators end in the same state, and
its rename would only repeat the line before (the gate's ``redundant`` reason, which this family
answers by deleting instead; a comment on the line goes with it). Also a run of them
(``torch.cuda.manual_seed(s)`` then ``torch.cuda.manual_seed_all(s)``). Only where the calls take
the same plain arguments (names, attributes, constants: evaluating them twice gives the same
value), with no comment line between them. Such a repeat elsewhere (library code and tests,
where upstream keeps the line) is left with the reason, never renamed into a copy of the line
before. Other seeds: the plain rename (``CallRename``).
"""

from __future__ import annotations

import ast
import functools

import libcst as cst

from patches.generate.codemods.families.call_rename import CallRename
from patches.generate.codemods.families.script_device import is_script
from patches.generate.intent import is_call
from patches.generate.intent.kinds.redundant import other_seed, same_function
from patches.generate.intent.nodes import called

NAMES = (
    "torch.cuda.manual_seed",
    "torch.cuda.manual_seed_all",
    "torch.cuda.random.manual_seed",
    "torch.cuda.random.manual_seed_all",
)


_PURE = (
    ast.Name,
    ast.Attribute,
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.operator,
    ast.unaryop,
    ast.expr_context,
)


def _plain(node: ast.AST) -> bool:
    """Names, attributes, constants and arithmetic on them (``rank + 42``): evaluated twice,
    the same value."""
    return all(isinstance(n, _PURE) for n in ast.walk(node))


def _call(stmt: ast.AST) -> ast.Call | None:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return stmt.value
    return None


def _same(a: ast.Call, b: ast.Call) -> bool:
    return ast.dump(ast.Tuple(a.args, ast.Load())) == ast.dump(ast.Tuple(b.args, ast.Load())) and [
        (k.arg, ast.dump(k.value)) for k in a.keywords
    ] == [(k.arg, ast.dump(k.value)) for k in b.keywords]


@functools.lru_cache(maxsize=64)
def repeats(ctx) -> dict[int, bool]:
    """Line of a CUDA seed that repeats the ``torch.manual_seed`` right before it (or before a
    run of such CUDA seeds) -> whether this family deletes it: in a script, with plain
    arguments, no comment line between. The others are left for a person (the rename would
    write the line before again; upstream keeps these lines in its own code and tests)."""
    out: dict[int, bool] = {}
    lines, script = ctx.source.splitlines(), is_script(ctx)
    for parent in ctx.nodes:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if not isinstance(stmts, list):
                continue
            for i, stmt in enumerate(stmts):
                b = _call(stmt)
                if b is None or not any(is_call(ctx, b, n) for n in NAMES):
                    continue
                j = i - 1
                while j >= 0 and _skipped(ctx, stmts[j], b, out):
                    j -= 1  # an earlier CUDA seed of the run, or another generator's seed
                a = _call(stmts[j]) if j >= 0 else None
                torch_seed = a is not None and same_function(called(ctx, a) or "", _TORCH_SEED)
                if not torch_seed or not _same(a, b):
                    continue
                run = stmts[j : i + 1]
                commented = any(
                    lines[k].strip()
                    for x, y in zip(run, run[1:])
                    for k in range(x.end_lineno, y.lineno - 1)
                )  # a comment between: the reader's, it would go with the line
                plain = all(_plain(x) for x in b.args + [k.value for k in b.keywords])
                out[stmt.lineno] = (
                    script
                    and plain
                    and not commented
                    and all(out.get(x.lineno, True) for x in run[1:-1])
                )
    return out


_TORCH_SEED = "torch.manual_seed"


def _skipped(ctx, stmt: ast.stmt, b: ast.Call, out: dict[int, bool]) -> bool:
    """``stmt`` lies inside the seed run before ``b``: an earlier CUDA seed of the same run
    (itself redundant), or a seed of another generator (``random.seed(s)``)."""
    a = _call(stmt)
    if a is None:
        return False
    if stmt.lineno in out and _same(a, b):
        return True
    name = called(ctx, a) or ""
    return other_seed(name) and not same_function(name, _TORCH_SEED)


REPEAT = (
    "the rename would repeat the line before (torch.manual_seed already seeds every device): "
    "delete it by hand"
)


class SeedAfterSeed(CallRename):
    name = "seed"
    claims = NAMES

    def renames_plainly(self, ctx) -> bool:
        """Outside scripts a repeat is the gate's ``redundant`` site, as for any rename."""
        return not is_script(ctx)

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        firsts = {}
        for ln, gone in repeats(ctx).items():
            if gone and ln in lines:
                firsts[ln] = _first_of_run(ctx, ln)
        ctx.blocks.update((p, ln) for ln, p in firsts.items())
        return lines | frozenset(firsts.values())

    def on_call(self, eng, original, updated):
        gone = repeats(eng.ctx).get(eng.line(original))
        if gone is None or not eng.qualnames(original.func) & set(NAMES):
            return super().on_call(eng, original, updated)
        if not gone:
            for spec in eng.specs_for(self.name, original):
                eng.fail(spec, original, REPEAT)
            return updated
        return None  # the statement goes whole (on_node)

    def on_node(self, eng, original, updated):
        if not isinstance(original, cst.SimpleStatementLine):
            return None
        line = eng.line(original)
        if not repeats(eng.ctx).get(line):
            return None
        specs = eng.specs_for(self.name, original)
        if not specs or not eng.fixes(specs[0].rule, line):
            return None
        eng.done(specs[0], original)
        return cst.RemovalSentinel.REMOVE


def _first_of_run(ctx, line: int) -> int:
    """The ``torch.manual_seed`` line a repeat at ``line`` goes back to."""
    for parent in ctx.nodes:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if isinstance(stmts, list):
                for i, s in enumerate(stmts):
                    if s.lineno == line:
                        j = i - 1
                        while stmts[j].lineno in repeats(ctx):
                            j -= 1
                        return stmts[j].lineno
    return line
