"""A test's expectation of where it placed an object (HN509 ``self.assertEqual(x.device.type,
"cuda")``, HN505 ``assert x.device.type == "cuda"``) -> the device type its rewritten placement
names (gpytorch's prior tests: ``test/priors/test_gamma_prior.py``)::

    if torch.cuda.is_available():                 if torch.accelerator.is_available():
        prior = GammaPrior(1.0, 1.0).cuda()  ->       prior = GammaPrior(1.0, 1.0).to(DEVICE_TYPE)
        self.assertEqual(                             self.assertEqual(
            prior.rate.device.type, "cuda")               prior.rate.device.type, DEVICE_TYPE)

The expectation says back the device the test put the object on: once the placement names
another device, the "cuda" it expects is that device's type. On CUDA the two read the same; on
another accelerator the test checks its own device instead of failing. Only where the object's
root name is bound last before the expectation, in the same function, by ``name =
<...>.cuda(...)``, and only where that placement is rewritten in the same run: the placement and
the expectation are one region (``ctx.blocks``), so the family reads the placement's new device
(``.to(X)``) before the expectation's literal is visited. ``X``'s type: a device-type name
(``DEVICE_TYPE``, ``device_type``) or call (``accelerator_api.device_type()``) as it is,
a device's (``torch.device(...)``, ``current_accelerator()``) ``.type``, else
``torch.device(X).type``. Left: a
placement that stays CUDA (with a reason), an object not placed in the function, and an index
(``str(x.device) == "cuda:0"``, not a ``.device.type``: ``device-defaults``' to decide).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

import libcst as cst

from patches.generate.codemods.context import stmt_start
from patches.generate.codemods.engine import dotted_name
from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import specs_at, string_value

STRING_FAMILY = "device-defaults"  # HN509's: the expected "cuda" of assertEqual
TEST_FAMILY = "device-predicates"  # HN505's: the "cuda" an ``assert ... ==`` compares with
EXPECT_CALLS = frozenset({"assertEqual", "assertEquals"})
_TYPE_NAMES = ("DEVICE_TYPE", "device_type")  # module-device's and own-device's names
_TYPE_CALLS = frozenset({"accelerator_api.device_type"})  # a device type already
# a torch.device (``current_accelerator()``: not None under an availability check)
_DEVICES = frozenset({"torch.device", "torch.accelerator.current_accelerator"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass(frozen=True)
class Expectation:
    name: str  # the placed object's root name
    placement: int  # the line of ``name = <...>.cuda(...)``
    block: tuple[int, int]  # the statements holding the placement and the expectation
    compare: bool  # ``assert ... == "cuda"`` (HN505) rather than assertEqual (HN509)


def _type_root(node: ast.expr) -> str | None:
    """``n`` of ``n.a[0].device.type``, else None."""
    if not (
        isinstance(node, ast.Attribute)
        and node.attr == "type"
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "device"
    ):
        return None
    obj = node.value.value
    while isinstance(obj, (ast.Attribute, ast.Subscript)):
        obj = obj.value
    return obj.id if isinstance(obj, ast.Name) else None


def _is_cuda(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == "cuda"


def _expected(stmt: ast.stmt) -> tuple[str, bool, ast.expr] | None:
    """(the root name, whether an ``assert ==``, the node whose line keys it: the "cuda" string
    or the comparison) where ``stmt`` expects ``<name>...device.type`` to be "cuda"."""
    if isinstance(stmt, ast.Assert):
        t = stmt.test
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)):
            return None
        pair, compare = (t.left, t.comparators[0]), t
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if not (
            isinstance(call.func, ast.Attribute)
            and call.func.attr in EXPECT_CALLS
            and len(call.args) >= 2
            and not any(isinstance(a, ast.Starred) for a in call.args[:2])
        ):
            return None
        pair, compare = (call.args[0], call.args[1]), None
    else:
        return None
    for a, b in (pair, pair[::-1]):
        name = _type_root(a) if _is_cuda(b) else None
        if name is not None:
            return name, compare is not None, compare or b
    return None


def _own_stmts(fn: ast.AST):
    """The statements of ``fn``'s body, nested blocks too, not those of nested scopes."""
    todo = list(fn.body)
    while todo:
        stmt = todo.pop(0)
        yield stmt
        if not isinstance(stmt, _SCOPES):
            todo.extend(c for c in ast.iter_child_nodes(stmt) if isinstance(c, ast.stmt))


def _binders(fn: ast.AST) -> dict[str, list[ast.AST]]:
    """name -> the nodes of ``fn`` (not of nested scopes) that bind it, a parameter first."""
    out: dict[str, list[ast.AST]] = {}
    a = fn.args
    for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
        if p is not None:
            out.setdefault(p.arg, []).append(fn)
    for stmt in _own_stmts(fn):
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                out.setdefault(sub.id, []).append(sub)
    return out


def _placement(ctx, binder: ast.AST) -> ast.Assign | None:
    """The ``name = <...>.cuda(...)`` statement ``binder`` (a bound ``Name``) is the target of."""
    stmt = ctx.parents.get(binder)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is binder):
        return None
    v = stmt.value
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "cuda":
        return stmt
    return None


def _holder(ctx, stmt: ast.stmt) -> list | None:
    """The statement list (a body, an ``orelse``) of its parent that holds ``stmt``."""
    for _, value in ast.iter_fields(ctx.parents.get(stmt)):
        if isinstance(value, list) and any(v is stmt for v in value):
            return value
    return None


def _up(ctx, node: ast.AST) -> ast.AST | None:
    """The statement around ``node`` (through an ``except`` handler or a ``case``), if any."""
    node = ctx.parents.get(node)
    while node is not None and not isinstance(node, ast.stmt):
        node = ctx.parents.get(node)
    return node


def _block(ctx, first: ast.stmt, last: ast.stmt) -> tuple[int, int]:
    """The lines of the statements of one list (a body) that hold ``first`` and ``last``
    (``last`` after ``first``, both in one function)."""
    held: dict[int, ast.stmt] = {}
    n = first
    while n is not None:
        held.setdefault(id(_holder(ctx, n)), n)
        n = _up(ctx, n)
    n = last
    while n is not None:
        if id(_holder(ctx, n)) in held:
            return stmt_start(held[id(_holder(ctx, n))]), n.end_lineno
        n = _up(ctx, n)
    return stmt_start(first), last.end_lineno


@functools.lru_cache(maxsize=8)
def expectations(ctx) -> dict[int, Expectation]:
    """The line of the expected "cuda" (of an ``assert``'s comparison) -> what it expects of
    which placement (the module docstring's shape)."""
    out: dict[int, Expectation] = {}
    for fn in ctx.nodes:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        binders = None
        for stmt in _own_stmts(fn):
            found = _expected(stmt)
            if found is None:
                continue
            binders = _binders(fn) if binders is None else binders
            name, compare, key = found
            before = [b for b in binders.get(name, ()) if b is not fn and b.lineno < stmt.lineno]
            placed = _placement(ctx, max(before, key=lambda b: b.lineno)) if before else None
            if placed is not None:
                block = _block(ctx, placed, stmt)
                out[key.lineno] = Expectation(name, placed.lineno, block, compare)
    return out


def device_type_of(eng, node, device: cst.BaseExpression) -> cst.BaseExpression:
    """The device type of ``device``, a placement's new device (module docstring)."""
    if isinstance(device, cst.Name) and device.value in _TYPE_NAMES:
        return cst.Name(device.value)
    called = dotted_name(device.func) if isinstance(device, cst.Call) else None
    if called in _TYPE_CALLS:
        return device.deep_clone()
    if called in _DEVICES:
        return cst.Attribute(device.deep_clone(), cst.Name("type"))
    eng.add_needed_import("torch", node=node)
    call = cst.Call(cst.parse_expression("torch.device"), [cst.Arg(device.deep_clone())])
    return cst.Attribute(call, cst.Name("type"))


def _new_device(call: cst.BaseExpression) -> cst.BaseExpression | None:
    """``X`` of a rewritten placement ``<...>.to(X, ...)`` / ``.to(device=X)``, else None."""
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "to"
    ):
        return None
    for a in call.args:
        if (a.keyword is None and not a.star) or (a.keyword and a.keyword.value == "device"):
            return a.value
    return None


class ExpectDevice(Family):
    """The expectations of ``expectations`` whose placement this run rewrites (module
    docstring). First in the registry: it reads every placement's rewritten ``Assign``."""

    name = "expect-device"
    serves = (STRING_FAMILY, TEST_FAMILY)

    def __init__(self) -> None:
        self.placed: dict[tuple[int, int], cst.BaseExpression | None] = {}  # (engine, line)

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        if spec.family in self.serves:
            ctx.blocks.update(e.block for ln, e in expectations(ctx).items() if ln in lines)
        return lines

    def on_node(self, eng, original, updated):
        if isinstance(original, cst.Assign):
            line = eng.line(original)
            if any(e.placement == line for e in expectations(eng.ctx).values()):
                self.placed[(id(eng), line)] = _new_device(updated.value)
            return None
        if not isinstance(original, cst.Comparison):
            return None
        e = expectations(eng.ctx).get(eng.line(original))
        specs = specs_at(eng, original, TEST_FAMILY)
        if e is None or not e.compare or not specs or len(original.comparisons) != 1:
            return None
        device = self.placed.get((id(eng), e.placement))
        if device is None or not isinstance(eng.parent(original), cst.Assert):
            return None  # DevicePredicates' `!= "cpu"`, or left
        eng.done(specs[0], original)
        new = device_type_of(eng, original, device)
        if string_value(updated.left) == "cuda":
            return updated.with_changes(left=new)
        target = updated.comparisons[0]
        return updated.with_changes(comparisons=[target.with_changes(comparator=new)])

    def on_literal(self, eng, original, updated):
        e = expectations(eng.ctx).get(eng.line(original))
        arg = eng.parent(original)
        call = eng.parent(arg) if isinstance(arg, cst.Arg) else None
        if e is None or e.compare or string_value(original) != "cuda":
            return None
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value in EXPECT_CALLS
            and any(arg is a for a in call.args[:2])
        ):
            return None
        specs = specs_at(eng, original, STRING_FAMILY)
        if not specs:
            return None
        device = self.placed.get((id(eng), e.placement))
        if device is None:
            why = f"the placement of `{e.name}` (line {e.placement}) stays CUDA: so does this"
            eng.fail(specs[0], original, why)
            return updated
        eng.done(specs[0], original)
        return device_type_of(eng, original, device)
