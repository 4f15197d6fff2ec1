"""Memory reporting (HN301): ``torch.cuda.max_memory_allocated()/1e9`` in a log ->
``torch.accelerator.max_memory_allocated()``, with the catalogue's ``guard: true`` honoured
where the value is read.

Without an accelerator ``torch.cuda``'s counters answer 0 (``memory_stats()`` an empty dict),
while ``torch.accelerator``'s raise: a script that logs its peak memory would stop running on
a CPU-only machine. So a counter whose value is used becomes
``(torch.accelerator.<name>(...) if torch.accelerator.is_available() else 0)``: the same call
on CUDA, the same 0 without one. A bare ``reset_peak_memory_stats()`` /
``reset_accumulated_memory_stats()`` statement gets the check around it, as a bare
``empty_cache()`` does (``guarded_cache``): torch.cuda's raises without CUDA too, so the
original never ran there, but the ported script's other code now does (a ``flush()`` helper
between benchmark runs: gc, empty the cache, reset the peak), and on CUDA the check is true.
The ``accelerator_api`` target (its counters answer 0 on CPU) is the plain rename.

A counter read by ``memory_stats()``'s key (fairscale's ``torch.cuda.memory_stats(rank)
["allocated_bytes.all.peak"]``) becomes that counter (``COUNTER_KEYS``), guarded as above:
torch's ``max_memory_allocated(d)`` is ``memory_stats(d).get("allocated_bytes.all.peak", 0)``
in ``torch.cuda`` and ``torch.accelerator`` alike, so it is the same number on a device and 0,
not a KeyError on ``{}``, without one. Other keys read the guarded dict as before.

A guarded counter inside an f-string's field (``print(f"peak {torch.cuda.max_memory_allocated()
/ 1e6:.1f} MB")``) is read into a local named after it on the line before, and the field uses
that name: a conditional in a field cannot be wrapped (Python 3.10's f-strings), so the line
would outgrow the file's limit. Not where the name is bound in the file already, nor inside a
lambda or comprehension (read once per evaluation), nor in a compound statement's header, nor in
a statement that calls another of CUDA's APIs (another family may take it whole).
"""

from __future__ import annotations

import ast
import functools

import libcst as cst

from patches.generate.codemods.engine import dotted_name
from patches.generate.codemods.families.base import is_test_file
from patches.generate.codemods.families.call_rename import CallRename
from patches.generate.codemods.families.fact_units import checked_by_unit
from patches.generate.codemods.families.idioms_common import (
    block_lines,
    known_blocks,
    string_value,
    under_availability_check,
)
from patches.generate.intent.counts import count_names, count_test, counted_loop
from patches.generate.intent.nodes import called

_NAMES = (
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
    "reset_accumulated_memory_stats",
)
_EMPTY = {"memory_stats": "{}"}  # what torch.cuda answers without CUDA; the rest: 0


class GuardedMemory(CallRename):
    name = "memory"
    claims = tuple(f"torch.cuda.{n}" for n in _NAMES) + tuple(
        f"torch.cuda.memory.{n}" for n in _NAMES
    )

    def on_call(self, eng, original, updated):
        new = super().on_call(eng, original, updated)
        if not isinstance(new, cst.Call) or new is updated:
            return new
        read = _keyed_read(eng, original, new)
        if read is not None:  # memory_stats()[<a counter's key>]: the counter (on_node guards)
            self._keyed.add(id(read[0]))
            return new.with_changes(func=new.func.with_changes(attr=cst.Name(read[1])))
        return self._guarded(eng, original, new)

    def _guarded(self, eng, original, new: cst.Call) -> cst.BaseExpression:
        """``new`` (the renamed read, standing for ``original``) under the availability check
        where its value is read: in place, or hoisted before an f-string's statement."""
        name = dotted_name(new.func) or ""
        last = name.rsplit(".", 1)[-1]
        if not name.startswith("torch.accelerator.") or last.startswith("reset_"):
            return new  # a reset is a statement: on_node checks it
        if isinstance(eng.parent(original), cst.Expr):
            return new  # a statement: its value is not read
        if checked_here(eng, original):
            return new  # already under an `if ...is_available():`: no second guard
        if checked_by_unit(eng, eng.line(original)):
            return new  # a fact unit's check (``fact_guard``) holds it
        bare = whole_value(eng, original)
        guarded = cst.IfExp(
            test=cst.parse_expression("torch.accelerator.is_available()"),
            body=new,
            orelse=cst.parse_expression(_EMPTY.get(last, "0")),
            lpar=[] if bare else [cst.LeftParen()],
            rpar=[] if bare else [cst.RightParen()],
        )
        line = _field_statement(eng, original)
        if line is not None and not self._only_counters(eng, line):
            line = None  # another family may take the statement whole: the read stays in place
        reads = self._pending.setdefault(id(line), (line, []))[1] if line is not None else None
        if reads is None or _bound(eng.ctx, last) or last in {n for n, _ in reads}:
            return guarded
        reads.append((last, guarded.with_changes(lpar=[], rpar=[])))
        return cst.Name(last)

    def __init__(self) -> None:
        super().__init__()
        # id(statement) -> (statement, [(local, guarded read)]): the reads written before it
        self._pending: dict[int, tuple[cst.SimpleStatementLine, list]] = {}
        self._keyed: set[int] = set()  # id(memory_stats()[key]) whose call became the counter

    def _only_counters(self, eng, stmt) -> bool:
        """Every ``torch.cuda`` call of ``stmt`` is a counter of this family."""
        calls: list[cst.Call] = []

        class _Calls(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                calls.append(node)

        stmt.visit(_Calls())
        names = {q for c in calls for q in eng.qualnames(c.func) if q.startswith("torch.cuda")}
        return names <= set(self.claims)

    def on_node(self, eng, original, updated):
        """A statement whose f-string fields read counters: the reads on the lines before it.
        A bare reset statement renamed to ``torch.accelerator.reset_*()`` above, under no check
        yet: wrapped in the availability check. A keyed ``memory_stats()`` read whose call
        became its counter (``on_call``): the counter, guarded as any counter's read."""
        if isinstance(original, cst.Subscript) and id(original) in self._keyed:
            self._keyed.discard(id(original))
            return self._guarded(eng, original, updated.value)
        if not isinstance(original, cst.SimpleStatementLine):
            return None
        hoists = self._pending.pop(id(original), (None, []))[1]
        if hoists:
            reads = [
                cst.SimpleStatementLine(
                    [cst.Assign([cst.AssignTarget(cst.Name(name))], value)],
                    leading_lines=updated.leading_lines if i == 0 else (),
                )
                for i, (name, value) in enumerate(hoists)
            ]
            return cst.FlattenSentinel([*reads, updated.with_changes(leading_lines=())])
        if len(original.body) != 1:
            return None
        old, new = original.body[0], updated.body[0]
        if not (isinstance(old, cst.Expr) and isinstance(old.value, cst.Call)):
            return None
        if not (isinstance(new, cst.Expr) and isinstance(new.value, cst.Call)):
            return None
        renamed = dotted_name(new.value.func) or ""
        if not renamed.startswith("torch.accelerator.reset_"):
            return None  # not ours, declined, or the accelerator_api target (safe on CPU)
        if not eng.qualnames(old.value.func) & set(self.claims):
            return None
        line = eng.line(old.value)
        if line in _checked_lines(eng.ctx.tree) or line in _device_tested_lines(eng.ctx.tree):
            return None
        if line in _after_sync(eng.ctx):
            return None
        return under_availability_check(eng, original, updated)


# memory_stats()'s keys that torch.cuda's and torch.accelerator's counters read, each as
# ``memory_stats(d).get(key, 0)`` (torch/cuda/memory.py, torch/accelerator/memory.py)
COUNTER_KEYS = {
    "allocated_bytes.all.current": "memory_allocated",
    "allocated_bytes.all.peak": "max_memory_allocated",
    "reserved_bytes.all.current": "memory_reserved",
    "reserved_bytes.all.peak": "max_memory_reserved",
}


def _keyed_read(eng, original: cst.Call, new: cst.Call) -> tuple[cst.Subscript, str] | None:
    """``memory_stats(d)[<key>]`` read with one of ``COUNTER_KEYS`` (not assigned to, not
    deleted), renamed to a dotted ``<module>.memory_stats``: (the subscript, its counter). The
    counter is that read on a device (``.get(key, 0)``, equal where the key is there) and 0, not
    a KeyError on ``{}``, without one."""
    sub = eng.parent(original)
    if not (
        isinstance(sub, cst.Subscript)
        and sub.value is original
        and isinstance(new.func, cst.Attribute)
        and new.func.attr.value == "memory_stats"
        and len(sub.slice) == 1
        and isinstance(sub.slice[0].slice, cst.Index)
    ):
        return None
    if isinstance(eng.parent(sub), (cst.AssignTarget, cst.Del)) or (
        isinstance(eng.parent(sub), (cst.AugAssign, cst.AnnAssign))
        and eng.parent(sub).target is sub
    ):
        return None
    counter = COUNTER_KEYS.get(string_value(sub.slice[0].slice.value) or "")
    return (sub, counter) if counter else None


def _field_statement(eng, node) -> cst.SimpleStatementLine | None:
    """The simple statement whose f-string field holds ``node``, if no lambda or comprehension
    lies between them."""
    field, parent = False, eng.parent(node)
    while parent is not None and not isinstance(parent, cst.BaseStatement):
        if isinstance(parent, (cst.Lambda, cst.BaseComp)):
            return None
        field = field or isinstance(parent, cst.FormattedStringExpression)
        parent = eng.parent(parent)
    return parent if field and isinstance(parent, cst.SimpleStatementLine) else None


def _bound(ctx, name: str) -> bool:
    """The file binds or imports ``name`` in any scope (a read's local must not shadow one)."""
    return any(name in scope.bound for scope in ctx.scopes)


def whole_value(eng, original: cst.Call) -> bool:
    """The call is the whole value of an assignment, a ``return`` or an argument: the
    conditional needs no parentheses there (``before = x if ok else 0``); inside an operation
    (``x / 1e9``, ``x.item()``) it does."""
    parent = eng.parent(original)
    if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return)):
        return parent.value is original
    return isinstance(parent, cst.Arg) and parent.value is original and not parent.star


@functools.lru_cache(maxsize=16)
def _device_tested_lines(tree: ast.Module) -> frozenset[int]:
    """The body of an ``if`` that compares a device with ``"cuda"`` or ``"cpu"`` (``if device
    == "cuda":``, ``if device.type != "cpu":``): the author already runs it only on a device."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and any(
            isinstance(c, ast.Compare)
            and any(
                isinstance(x, ast.Constant) and x.value in ("cuda", "cpu")
                for x in [c.left, *c.comparators]
            )
            for c in ast.walk(node.test)
        ):
            out |= _lines(node.body)
    return frozenset(out)


def _asks(test) -> bool:
    return any(isinstance(x, ast.Attribute) and x.attr == "is_available" for x in ast.walk(test))


def _negated(test) -> bool:
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _asks(test.operand)


def _lines(stmts) -> set[int]:
    return {n for s in stmts for n in range(s.lineno, s.end_lineno + 1)}


def _checks(test, taken: bool, counts: frozenset[str] = frozenset()) -> bool | None:
    """The branch runs only with an accelerator: the body of ``if ...is_available():``, the
    ``else`` of ``if not ...is_available():``, and the same of a device count's test
    (``intent.counts``: ``if torch.cuda.device_count():``, ``if n_gpu == 0: return``)."""
    if count_test(test, counts) is taken:
        return True
    return (_negated(test) if not taken else _asks(test) and not _negated(test)) or None


@functools.lru_cache(maxsize=16)
def _checked_lines(tree: ast.Module) -> frozenset[int]:
    """Lines only reached with an accelerator: the body of ``if ...is_available():``, the
    ``else`` of ``if not ...is_available():``, the rest of a block after
    ``if not ...is_available(): return`` (or raise, continue, break), and the same under a
    device count's test or in a loop over one (``for i in range(n_gpu):``)."""
    counts = count_names(tree)
    loops = [n.body for n in ast.walk(tree) if counted_loop(n, counts)]
    judged = block_lines(known_blocks(tree, functools.partial(_checks, counts=counts)))
    return judged | frozenset(n for body in loops for n in _lines(body))


def checked_here(eng, node) -> bool:
    """``node`` is reached only with an accelerator: under an ``is_available()`` check of its
    file (``_checked_lines``), of its own expression (``_guarded_here``), or after a test's
    synchronize (``_after_sync``)."""
    line = eng.line(node)
    return (
        line in _checked_lines(eng.ctx.tree)
        or line in _after_sync(eng.ctx)
        or _guarded_here(eng, node)
    )


_SYNCS = frozenset({"torch.cuda.synchronize", "torch.accelerator.synchronize"})


def _after_sync(ctx) -> frozenset[int]:
    """In a test module, the lines after a statement ``torch.cuda.synchronize()`` in its block
    (and the blocks inside them): the test's synchronize stays unguarded (a plain rename, which
    raises without an accelerator, as CUDA's did without CUDA), so a guard there is dead
    (torchtitan's peak-memory tests, round 32)."""
    if not is_test_file(ctx.path):
        return frozenset()
    if "_after_sync" not in ctx.__dict__:
        ctx._after_sync = frozenset(_lines_after_sync(ctx, ctx.tree.body, False))
    return ctx._after_sync


def _lines_after_sync(ctx, stmts: list[ast.stmt], reached: bool, starts=None):
    """The lines after a statement of ``stmts`` (and of the blocks inside them) for which
    ``starts(ctx, stmt)`` holds (default: a bare ``synchronize()`` call)."""
    starts = starts or _syncs
    for stmt in stmts:
        if reached:
            yield from range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from _lines_after_sync(ctx, getattr(stmt, field, None) or [], False, starts)
        for h in getattr(stmt, "handlers", []):
            yield from _lines_after_sync(ctx, h.body, False, starts)
        reached = starts(ctx, stmt)


def _syncs(ctx, stmt: ast.stmt) -> bool:
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and called(ctx, call) in _SYNCS


_RAISING = _SYNCS | {"torch.cuda.set_device"}


def _needs_cuda(ctx, stmt: ast.stmt) -> bool:
    """A statement that fails without CUDA: a bare ``torch.cuda.set_device(...)`` or
    ``synchronize()``, an ``assert`` of CUDA's availability or device count."""
    if isinstance(stmt, ast.Assert):
        return any(
            isinstance(n, ast.Call) and (called(ctx, n) or "").startswith("torch.cuda.")
            for n in ast.walk(stmt.test)
        )
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and called(ctx, call) in _RAISING


def after_cuda_needed(ctx) -> frozenset[int]:
    """The lines after a statement that fails without CUDA (``_needs_cuda``) in its block (and
    the blocks inside them), in any module: reached only with CUDA (yolov5's DDP branch,
    ``torch.cuda.set_device(LOCAL_RANK)`` then ``torch.device('cuda', LOCAL_RANK)``)."""
    if "_after_cuda" not in ctx.__dict__:
        ctx._after_cuda = frozenset(_lines_after_sync(ctx, ctx.tree.body, False, _needs_cuda))
    return ctx._after_cuda


def _guarded_here(eng, node) -> bool:
    """``node`` is the value of an ``X if ...is_available() else ...`` or the right operand of
    ``...is_available() and X``: guarded in its own expression."""
    child, parent = node, eng.parent(node)
    while parent is not None and not isinstance(parent, cst.BaseStatement):
        if isinstance(parent, cst.IfExp) and parent.body is child:
            if "is_available" in cst.Module([]).code_for_node(parent.test):
                return True
        if isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
            if parent.right is child and "is_available" in cst.Module([]).code_for_node(
                parent.left
            ):
                return True
        child, parent = parent, eng.parent(parent)
    return False
