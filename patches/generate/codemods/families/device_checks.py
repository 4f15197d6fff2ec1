"""Device checks (HN504 ``x.is_cuda``) -> ``x.device.type != "cpu"``: "is it on the device or on
the host?", upstream's form (``if param.is_cuda:`` -> ``if param.device.type != "cpu":`` in
torch 2.4 -> 2.13: the repro generators, storage pinning, deterministic-algorithm checks).

Same answer on a CUDA machine, whose tensors are "cuda" or "cpu"; true on any accelerator
elsewhere. An ``if`` guarding ``torch.cuda.*`` calls also asks ``torch.accelerator.is_available()``
(upstream's form in the AOT repro): a meta tensor is not on the CPU either, and the neutral calls
raise without an accelerator where the CUDA branch was never reached. Whether the check means "on CUDA" instead (the code it guards is cuDNN, a capability
check, a CUDA-only kernel) is the intent gate's decision (``cuda-guarded``), made before a site
reaches this family. Left here: a check guarding code that writes "cuda" into text (a repro
generator's ``', device="cuda"'``, which must follow the device in the same change); ``self.is_cuda`` where the file defines ``is_cuda`` itself (a
class answering the question, not asking it). The negated check ``not x.is_cuda`` is rewritten
whole, to ``x.device.type == "cpu"``, except in a function that calls ``torch.cuda.*`` (it
screens tensors for CUDA code: a grouped-GEMM kernel's eligibility check).
A check whose ``if``/``else`` arms do one thing two ways (``gelu(out, approximate="tanh")`` /
``gelu(out)``, ``"gels"`` / ``"gelsd"``, the options CUDA supports / the host's) picks CUDA's own
variant and is left (``picks_variant``).
"""

from __future__ import annotations

import ast
import functools
import re

import libcst as cst

from patches.generate.codemods.families import Family
from patches.generate.codemods.families.idioms_common import (
    CUDA_DEVICE_STR,
    known_blocks,
    specs_at,
)

ATTRIBUTE = "is_cuda"
_CUDA_TEXT = re.compile(r"\bcuda\b")
# Parents where a comparison reads as it is written (no parentheses needed).
_BARE = (cst.If, cst.IfExp, cst.While, cst.Assert, cst.BooleanOperation, cst.CompIf, cst.Return)
# ... and a comprehension's element (``all(t.device.type != "cpu" for t in ts)``)
_BARE += (cst.GeneratorExp, cst.ListComp, cst.SetComp)
_VALUE = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Arg, cst.Element)


@functools.lru_cache(maxsize=8)
def _defines_is_cuda(ctx) -> bool:
    """The file defines an ``is_cuda`` of its own (a method, property or attribute)."""
    for node in ctx.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == ATTRIBUTE:
            return True
        if isinstance(node, ast.Attribute) and node.attr == ATTRIBUTE:
            if isinstance(node.ctx, ast.Store):
                return True
    return False


@functools.lru_cache(maxsize=8)
def _declares_is_cuda_field(ctx) -> bool:
    """A class of the file declares an ``is_cuda`` field (``is_cuda: bool`` in a dataclass or
    NamedTuple, ``is_cuda = True`` in a class body): any ``x.is_cuda`` may read that field."""
    for node in ctx.nodes:
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                targets = (
                    stmt.targets
                    if isinstance(stmt, ast.Assign)
                    else [getattr(stmt, "target", None)]
                )
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and any(
                    isinstance(t, ast.Name) and t.id == ATTRIBUTE for t in targets
                ):
                    return True
    return False


_TENSOR_CLASSES = frozenset({"Tensor", "Parameter", "FakeTensor", "DTensor"})


@functools.lru_cache(maxsize=8)
def _if_bodies(tree: ast.Module) -> list[tuple[int, int, int, ast.expr]]:
    """(first line, last line, test line, test) of every ``if`` body (``known_blocks``)."""
    return known_blocks(tree, lambda test, taken: test if taken else None)


def _narrowed_elsewhere(eng, check: cst.Attribute) -> str | None:
    """A class other than a tensor's that an ``isinstance`` test of the check's receiver, earlier
    in its ``and`` chain or in an enclosing ``if`` test, narrows it to (PyG's
    ``isinstance(data, (Data, HeteroData)) and data.is_cuda``: ``Data`` has an ``is_cuda`` of
    its own and no ``device``), else None."""
    tests: list[ast.AST] = []
    node, parent = check, eng.parent(check)
    while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
        if isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
            if parent.right is node:
                code = cst.Module([]).code_for_node(parent.left)
                tests.append(ast.parse(f"({code})", mode="eval"))
        node, parent = parent, eng.parent(parent)
    line = eng.line(check)
    tests += [t for first, last, _, t in _if_bodies(eng.ctx.tree) if first <= line <= last]
    receiver = cst.Module([]).code_for_node(check.value)
    for call in (c for t in tests for c in ast.walk(t)):
        other = _narrowed_to(call, receiver)
        if other:
            return other
    return None


def _narrowed_to(call: ast.AST, receiver: str) -> str | None:
    """The first class no tensor's that ``isinstance(<receiver>, ...)`` names, else None."""
    if not (isinstance(call, ast.Call) and ast.unparse(call.func) == "isinstance"):
        return None
    if len(call.args) != 2 or ast.unparse(call.args[0]) != receiver:
        return None
    kinds = call.args[1].elts if isinstance(call.args[1], ast.Tuple) else [call.args[1]]
    names = (ast.unparse(k).rsplit(".", 1)[-1] for k in kinds)
    return next((n for n in names if n not in _TENSOR_CLASSES), None)


def writes_cuda(ctx, line: int) -> bool:
    """The ``if`` whose test is on ``line`` guards code that writes "cuda" into text (generated
    source such as ``', device="cuda"'``): the check is about CUDA for that text."""
    for node in ctx.nodes:
        if isinstance(node, ast.If) and node.test.lineno <= line <= node.test.end_lineno:
            for sub in node.body:
                for leaf in ast.walk(sub):
                    if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str):
                        if _CUDA_TEXT.search(leaf.value):
                            return True
    return False


def guards_cuda_calls(ctx, line: int) -> bool:
    """The ``if`` whose test is on ``line`` guards ``torch.cuda.*`` calls (whose neutral forms
    raise without an accelerator) and its test asks for no availability itself."""
    for node in ctx.nodes:
        if isinstance(node, ast.If) and node.test.lineno <= line <= node.test.end_lineno:
            if any(
                isinstance(n, ast.Attribute) and n.attr == "is_available"
                for n in ast.walk(node.test)
            ):
                return False
            if any(_calls_cuda(ctx, sub) for sub in node.body):
                return True
    return False


def _calls_cuda(ctx, node: ast.AST) -> bool:
    """Some call under ``node`` is to ``torch.cuda.*``."""
    for leaf in ast.walk(node):
        if isinstance(leaf, ast.Call):
            q = ctx.qualify(leaf.lineno, ast.unparse(leaf.func))
            if q and q.startswith("torch.cuda."):
                return True
    return False


def _function_calls_cuda(eng, line: int) -> bool:
    """The function holding ``line`` calls ``torch.cuda.*`` that stays CUDA in this run (a CUDA
    kernel's eligibility check: a negated device check there screens tensors for CUDA code; a
    call the run makes neutral, such as nemo's ``torch.cuda.empty_cache()`` beside the check,
    screens nothing, and a rerun would no longer see it)."""
    fn = eng.ctx.scope_at(line).node
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    gate = eng.gate
    return any(
        _calls_cuda(eng.ctx, call) and (gate is None or gate.stays(call.lineno))
        for call in ast.walk(fn)
        if isinstance(call, ast.Call)
    )


def _options(node: ast.AST) -> list | None:
    """The values of a tuple or list display of constants (``("gels",)``, ``(True, False)``),
    else None."""
    if isinstance(node, (ast.Tuple, ast.List)) and all(
        isinstance(e, ast.Constant) for e in node.elts
    ):
        return [e.value for e in node.elts]
    return None


def _variant_arms(a: ast.AST, b: ast.AST) -> bool:
    """Two arms that differ only in how one thing is done: calls of one function with other
    arguments (``gelu(out, approximate="tanh")`` / ``gelu(out)``), two constants of one type
    that are neither flags nor device names (``"gels"`` / ``"gelsd"``, ``128`` / ``64``), or two
    sets of options (``drivers = ("gels",)`` / ``("gels", "gelsy", ...)``, ``pivots = (True,
    False)`` / ``(True,)``: what CUDA supports, what the host does)."""
    if isinstance(a, ast.Call) and isinstance(b, ast.Call):
        return ast.dump(a.func) == ast.dump(b.func) and ast.dump(a) != ast.dump(b)
    oa, ob = _options(a), _options(b)
    if oa is not None and ob is not None:
        names = [v for v in oa + ob if isinstance(v, str)]
        return oa != ob and not any(CUDA_DEVICE_STR.fullmatch(v) or v == "cpu" for v in names)
    if isinstance(a, ast.Constant) and isinstance(b, ast.Constant):
        va, vb = a.value, b.value
        if type(va) is not type(vb) or isinstance(va, bool) or va == vb:
            return False
        if isinstance(va, str):
            return not any(CUDA_DEVICE_STR.fullmatch(v) or v == "cpu" for v in (va, vb))
        return isinstance(va, (int, float))
    return False


def _arm(stmts: list[ast.stmt]) -> tuple[str, ast.AST] | None:
    """(what the one statement does, its value) for a one-statement arm: ``return V``,
    ``x = V`` or the call ``V``."""
    if len(stmts) != 1:
        return None
    (st,) = stmts
    if isinstance(st, ast.Return) and st.value is not None:
        return "return", st.value
    if isinstance(st, ast.Assign):
        return ast.dump(ast.Tuple(elts=st.targets, ctx=ast.Load())), st.value
    if isinstance(st, ast.Expr):
        return "expr", st.value
    return None


def picks_variant(ctx, line: int) -> bool:
    """The check on ``line`` is the test of an ``if``/``else`` or a conditional expression whose
    two arms do one thing two ways (``_variant_arms``): it picks CUDA's own variant (the tanh GELU
    that CUDA's fused addmm epilogue computes, the one least-squares driver CUDA has), which says
    nothing about another accelerator; the other arm is the host's."""
    for node in ctx.nodes:
        if (
            isinstance(node, (ast.If, ast.IfExp))
            and node.test.lineno <= line <= node.test.end_lineno
        ):
            if isinstance(node, ast.IfExp):
                return _variant_arms(node.body, node.orelse)
            body, orelse = _arm(node.body), _arm(node.orelse)
            return (
                body is not None
                and orelse is not None
                and body[0] == orelse[0]
                and _variant_arms(body[1], orelse[1])
            )
    return False


def _picks_variant(eng, spec, check: cst.CSTNode) -> bool:
    if picks_variant(eng.ctx, eng.line(check)):
        eng.fail(
            spec, check, "it picks CUDA's own variant of one operation (the other arm: the host's)"
        )
        return True
    return False


def device_type_compare(value: cst.BaseExpression, op: str) -> cst.Comparison:
    """``<value>.device.type <op> "cpu"``."""
    return cst.Comparison(
        left=cst.Attribute(
            value=cst.Attribute(value=value, attr=cst.Name("device")), attr=cst.Name("type")
        ),
        comparisons=[
            cst.ComparisonTarget(
                operator=cst.NotEqual() if op == "!=" else cst.Equal(),
                comparator=cst.SimpleString('"cpu"'),
            )
        ],
    )


def _receiver_defines(eng, spec, check: cst.Attribute) -> bool:
    """``self.is_cuda`` where the file defines ``is_cuda`` itself, any ``x.is_cuda`` where a
    class of the file declares it as a field, or where ``isinstance`` narrows ``x`` to a class
    that is no tensor (left, and said so)."""
    receiver = check.value
    other = _narrowed_elsewhere(eng, check)
    if other is not None:
        eng.fail(spec, check, f"its receiver is narrowed to {other}, not a tensor: its own is_cuda")
        return True
    if _declares_is_cuda_field(eng.ctx):
        eng.fail(spec, check, "a class of this file declares an is_cuda field")
        return True
    if (
        isinstance(receiver, cst.Name)
        and receiver.value in ("self", "cls")
        and _defines_is_cuda(eng.ctx)
    ):
        eng.fail(spec, check, "the file defines is_cuda itself")
        return True
    return False


def _guards_text(eng, spec, check: cst.Attribute) -> bool:
    """The check guards code writing "cuda" into text (left, and said so)."""
    if writes_cuda(eng.ctx, eng.line(check)):
        eng.fail(spec, check, "the code it guards writes 'cuda' into text")
        return True
    return False


class DeviceChecks(Family):
    name = "device-checks"

    @staticmethod
    def _if_test(eng, node) -> bool:
        """``node`` is an ``if`` test, alone or an operand of its ``and`` chain."""
        parent = eng.parent(node)
        if isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
            while isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
                node, parent = parent, eng.parent(parent)
        return isinstance(parent, cst.If) and parent.test is node

    def on_ref(self, eng, original, updated):
        if not isinstance(original, cst.Attribute) or original.attr.value != ATTRIBUTE:
            return None
        specs = specs_at(eng, original, self.name)
        if not specs:
            return None
        spec = specs[0]
        parent = eng.parent(original)
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            return None  # the whole `not x.is_cuda` (on_node)
        if _receiver_defines(eng, spec, original):
            return None
        if isinstance(parent, (cst.Call, cst.Subscript)) or (
            isinstance(parent, cst.Attribute) and parent.value is original
        ):
            eng.fail(spec, original, "is_cuda used as an object, not a check")
            return None
        if _guards_text(eng, spec, original) or _picks_variant(eng, spec, original):
            return None
        new = device_type_compare(updated.value, "!=")
        if self._if_test(eng, original) and guards_cuda_calls(eng.ctx, eng.line(original)):
            # a meta tensor is not on the CPU either: without an accelerator the neutral calls
            # it now reaches would raise (upstream's form, pytorch#196535)
            eng.add_needed_import("torch", node=original)
            new = cst.BooleanOperation(
                left=new,
                operator=cst.And(),
                right=cst.parse_expression("torch.accelerator.is_available()"),
            )
        if not isinstance(parent, _BARE + _VALUE):
            new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        eng.done(spec, original)
        return new

    def on_node(self, eng, original, updated):
        """``not x.is_cuda`` -> ``x.device.type == "cpu"`` (the check's negation, whole); and
        ``x.is_cuda or x.device.type == "xla"``, once the check is ``x.device.type != "cpu"``,
        is that check alone (it admits XLA's device already: colossalai's grad scaler)."""
        if isinstance(original, cst.BooleanOperation):
            return _subsumed(eng, original, updated)
        if not (
            isinstance(original, cst.UnaryOperation)
            and isinstance(original.operator, cst.Not)
            and isinstance(original.expression, cst.Attribute)
            and original.expression.attr.value == ATTRIBUTE
        ):
            return None
        check = original.expression
        specs = specs_at(eng, check, self.name)
        if not specs or _receiver_defines(eng, specs[0], check):
            return None
        if _guards_text(eng, specs[0], check) or _picks_variant(eng, specs[0], check):
            return None
        if _function_calls_cuda(eng, eng.line(check)):
            # `if not x.is_cuda: return False` screens what the rest of the function does
            eng.fail(specs[0], check, "the function it screens for calls torch.cuda itself")
            return None
        new = device_type_compare(updated.expression.value, "==")
        if not isinstance(eng.parent(original), _BARE + _VALUE):
            new = new.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        eng.done(specs[0], check)
        return new


def _subsumed(eng, original: cst.BooleanOperation, updated: cst.BooleanOperation):
    """``updated.left`` alone where it is this family's ``R.device.type != "cpu"`` (rewritten
    from ``R.is_cuda``) and ``updated.right`` is ``R.device.type == "<another device>"``."""
    if not isinstance(original.operator, cst.Or) or not isinstance(original.left, cst.Attribute):
        return None
    left, right = updated.left, updated.right
    if original.left.attr.value != ATTRIBUTE or not isinstance(left, cst.Comparison):
        return None  # the check itself is left (an attribute still): no rewrite to read
    if not isinstance(right, cst.Comparison) or len(left.comparisons) + len(right.comparisons) != 2:
        return None
    code = cst.Module([]).code_for_node
    (lop,), (rop,) = left.comparisons, right.comparisons
    other = rop.comparator
    if not (
        isinstance(lop.operator, cst.NotEqual)
        and isinstance(rop.operator, cst.Equal)
        and isinstance(other, cst.SimpleString)
        and other.evaluated_value != "cpu"
        and code(left.left) == code(right.left)
    ):
        return None
    return left.with_changes(lpar=updated.lpar, rpar=updated.rpar)
