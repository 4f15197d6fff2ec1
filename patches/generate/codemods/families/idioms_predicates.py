"""Derived device types and device-type predicates (HN505, HN506, with HN502's literal):

* ``"cuda" if "cuda" in device else "cpu"`` and ``"cuda" if device.startswith("cuda") else
  "cpu"`` -> ``torch.device(device).type`` (the whole expression: rewriting the value alone
  would leave the condition asking for CUDA);
* ``device_type == "cuda"`` / ``x.device.type == "cuda"`` -> ``... != "cpu"`` (and ``!=`` ->
  ``== "cpu"``), the form that picks autocast, pinned memory or fused optimizers;
* ``"cuda" in str(device)`` / ``"cuda" in device`` -> ``torch.device(device).type != "cpu"``
  (``torch.device`` takes a string, a device or a device type alike, so the operand's kind need
  not be known); a device's own ``.type`` (``"cuda" in device.type``) is a type string already,
  tested as it is: ``device.type != "cpu"``;
* ``x.device.type in ["cuda", torch._C._get_privateuse1_backend_name()]`` (an open list of
  accelerators: "cuda", the plugged-in one, no host type) -> ``x.device.type not in ("cpu",
  "meta")`` (and ``not in`` -> ``in``): "is it on an accelerator", asked of every accelerator
  (upstream's storage sharing). A list naming backends only is a closed support list, left;
  so is the negated list that only exits (``if t.device.type not in ["cuda", <privateuse1>]:
  return``): every device not listed leaves, so the list says which backends support what
  follows (FSDP's ``record_stream``; upstream kept it and added "mtia" and "xpu" by name).

Same meaning on a CUDA machine, whose devices are "cuda" or "cpu"; true on any accelerator
elsewhere. Whether the guarded code is itself neutral (not cuDNN, not a capability check) is the
intent gate's decision (``patches/generate/intent/``), made before a site reaches this family.
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.device_checks import picks_variant
from patches.generate.codemods.families.device_flag_units import NEW, converted_attr
from patches.generate.codemods.families.idioms_common import (
    and_terms,
    specs_at,
    string_value,
    with_value,
)
from patches.generate.codemods.families.script_picks import picked_type
from patches.generate.codemods.families.sync_dispatch import device_type_read
from patches.generate.intent.bindings import other_backend_bound
from patches.generate.intent.nodes import declared, device_type_decl

LITERAL_FAMILY = "device-literal"
STRING_FAMILY = "device-defaults"  # HN509's (a "cuda" string anywhere else)


def _only(comp: cst.Comparison):
    return comp.comparisons[0] if len(comp.comparisons) == 1 else None


def _unwrap_str(node: cst.BaseExpression) -> cst.BaseExpression:
    """``str(x)`` -> ``x`` (``torch.device`` takes a string or a device alike)."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "str"
        and len(node.args) == 1
        and node.args[0].keyword is None
        and not node.args[0].star
    ):
        return node.args[0].value
    return node


def _type_of(eng, node: cst.BaseExpression, original) -> cst.BaseExpression:
    eng.add_needed_import("torch", node=original)
    return cst.Call(
        cst.parse_expression("torch.device"), [cst.Arg(_unwrap_str(node).deep_clone())]
    ).with_changes()


def _is_type(node) -> bool:
    """A device *type* (``x.device.type``, ``device_type``): its values are "cuda", "cpu", ...,
    never "cuda:0", so ``== "cuda"`` is ``!= "cpu"`` on a CUDA machine."""
    name = node.attr.value if isinstance(node, cst.Attribute) else getattr(node, "value", "")
    return isinstance(name, str) and name.lower().endswith("type")


def _several_backends(eng, node) -> bool:
    """``node`` (``d`` or ``d.type``) reads a name its scope also binds to another backend's
    device (a pick over MPS too, ``bindings.other_backend_bound``): "cuda" there is CUDA, not
    "any accelerator", on a Mac as before the pick's rewrite."""
    if isinstance(node, cst.Attribute) and node.attr.value == "type":
        node = node.value
    if not isinstance(node, cst.Name):
        return False
    found = eng.ctx.binding(eng.line(node), node.value)
    return found is not None and other_backend_bound(eng.ctx, found[0], node.value)


def _attr_type(call: cst.BaseExpression) -> cst.BaseExpression:
    return cst.Attribute(value=call, attr=cst.Name("type"))


def _device_type(eng, node: cst.BaseExpression, original) -> cst.BaseExpression:
    """The device type of ``node``: ``torch.device(node).type``, or ``node`` itself where it
    reads a device's ``.type`` already (``device.type``, ``x.device.type``: wrapping it again
    gives the same string, ``sync_dispatch.device_type_read``)."""
    plain = _unwrap_str(node)
    if isinstance(plain, cst.Attribute) and device_type_read(cst.Module([]).code_for_node(plain)):
        return plain.deep_clone()
    return _attr_type(_type_of(eng, node, original))


def _startswith_cuda(node) -> cst.BaseExpression | None:
    """``X.startswith("cuda")`` -> X (the prefix test of a device string), else None."""
    if not (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "startswith"
        and len(node.args) == 1
        and node.args[0].keyword is None
        and not node.args[0].star
    ):
        return None
    return node.func.value if string_value(node.args[0].value) == "cuda" else None


_FILLS = ("add", "append", "extend", "update", "insert", "discard", "remove")
_MADE = ("set", "list", "tuple", "dict", "frozenset", "OrderedSet", "OrderedDict", "defaultdict")


def _collection(eng, node) -> str:
    """``node`` (a name or ``self.x``) holds a collection in this file: it is assigned a
    set/list/tuple/dict (a display, a comprehension or a constructor), or filled with
    ``.add()``/``.append()``: so ``"cuda" in node`` asks membership (``self.device_types``, a
    set of device types), and ``torch.device(node)`` would fail. Returns how it is known."""
    dotted = (
        cst.Module([]).code_for_node(node) if isinstance(node, (cst.Name, cst.Attribute)) else ""
    )
    if not dotted or "(" in dotted:
        return ""
    for n in ast.walk(eng.ctx.tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _FILLS:
            if ast.unparse(n.func.value) == dotted:
                return f"`{dotted}.{n.func.attr}()` at line {n.lineno}"
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if not any(ast.unparse(t) == dotted for t in targets):
                continue
            v = n.value
            made = isinstance(
                v, (ast.Set, ast.List, ast.Tuple, ast.Dict, ast.SetComp, ast.ListComp, ast.DictComp)
            ) or (isinstance(v, ast.Call) and (ast.unparse(v.func).rsplit(".", 1)[-1] in _MADE))
            if made:
                return f"`{dotted}` is a {ast.unparse(v)[:30]} at line {n.lineno}"
    return ""


def _contains_cuda(comp) -> cst.BaseExpression | None:
    """``"cuda" in X`` / ``X.startswith("cuda")`` -> X (the test of a device string), else
    None."""
    if isinstance(comp, cst.Call):
        return _startswith_cuda(comp)
    if not isinstance(comp, cst.Comparison):
        return None
    target = _only(comp)
    if target is None or not isinstance(target.operator, cst.In):
        return None
    return target.comparator if string_value(comp.left) == "cuda" else None


class DevicePredicates(Family):
    name = "device-predicates"

    def _specs(self, eng, node):
        """This family's specs at ``node``'s line; for a ``startswith("cuda")`` test also the
        device-string rule's (HN509 reports that literal)."""
        mine = specs_at(eng, node, self.name)
        if _startswith_cuda(node) is not None:
            mine = mine + specs_at(eng, node, STRING_FAMILY, ("cuda",))
        return mine

    def on_literal(self, eng, original, updated):
        # The "cuda" of a derived device type (the value, or the one its startswith test reads)
        # is rewritten with its whole IfExp (on_node): answer for it so that no other family
        # rewrites it alone (the condition would still say CUDA) or reports it.
        parent = eng.parent(original)
        if isinstance(parent, cst.Arg) and _startswith_cuda(eng.parent(parent)) is not None:
            parent = eng.parent(eng.parent(parent))
        if isinstance(parent, cst.IfExp) and self._derived(eng, parent) is not None:
            return updated
        return None

    def _derived(self, eng, node: cst.IfExp):
        if string_value(node.body) != "cuda" or string_value(node.orelse) != "cpu":
            return None
        subject = _contains_cuda(node.test)
        if subject is None or not self._specs(eng, node.test) or _collection(eng, subject):
            return None  # a collection of device types: the comparison says why
        return subject

    def on_node(self, eng, original, updated):
        if isinstance(original, cst.IfExp):
            return self._ifexp(eng, original)
        if not isinstance(original, cst.Comparison):
            return None
        specs = self._specs(eng, original)
        target = _only(original)
        if not specs or target is None:
            return None
        parent = eng.parent(original)
        if isinstance(parent, cst.IfExp) and parent.test is original:
            if self._derived(eng, parent) is not None:
                return None  # rewritten with the whole IfExp
        op = target.operator
        if isinstance(op, (cst.Equal, cst.NotEqual)):
            return _equality(eng, specs[0], original, updated, target)
        if isinstance(op, (cst.In, cst.NotIn)) and _accelerator_list(original, target):
            if isinstance(op, cst.NotIn) and _screens(eng, original):
                eng.fail(
                    specs[0],
                    original,
                    "an early exit for every device not listed: the list names the backends "
                    "that support the rest of the function (a closed list), kept",
                )
                return None
            return _off_host(eng, specs[0], original, updated)
        if isinstance(op, (cst.In, cst.NotIn)) and string_value(original.left) == "cuda":
            held = _collection(eng, target.comparator)
            if held:
                eng.fail(
                    specs[0],
                    original,
                    f"a membership test in a collection of device types ({held}), not the test "
                    "of a device string",
                )
                return None
            # "cuda" in str(device) -> torch.device(device).type != "cpu"
            eng.done(specs[0], original)
            cpu = with_value(original.left, "cuda", "cpu")
            return cst.Comparison(
                left=_device_type(eng, target.comparator, original),
                comparisons=[
                    cst.ComparisonTarget(
                        operator=cst.NotEqual() if isinstance(op, cst.In) else cst.Equal(),
                        comparator=cpu,
                    )
                ],
            )
        return None

    def _ifexp(self, eng, original: cst.IfExp):
        subject = self._derived(eng, original)
        if subject is None:
            return None
        for spec in self._specs(eng, original.test):
            eng.done(spec, original.test)
        for spec in specs_at(eng, original.body, LITERAL_FAMILY, ("cuda",)):
            eng.done(spec, original.body)
        return _device_type(eng, subject, original)


def _chosen_type(eng, original: cst.Comparison) -> str:
    """The compared name, where it is a parameter of the enclosing function with a ``str``
    annotation and ``"cpu"`` or nothing as its default (``def include_paths(device_type: str =
    "cpu")``, the device-flag family's form of a former ``cuda`` switch), or its attribute form
    (``self.device_type``, stored only as that family stores it: ``converted_attr``); else ""."""
    names = [original.left] + [c.comparator for c in original.comparisons]
    line = eng.line(original)
    for n in names:
        attr = isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name)
        if attr and n.value.value == "self" and n.attr.value == NEW:
            return f"self.{NEW}" if converted_attr(eng.ctx.tree, line) else ""
    name = next((n.value for n in names if isinstance(n, cst.Name)), None)
    if name is None:
        return ""
    b = eng.ctx.binding(line, name)
    fn = b[0].node if b is not None else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ""
    decl = declared(fn, name)
    return name if decl is not None and device_type_decl(*decl) else ""


def _equality(eng, spec, original: cst.Comparison, updated: cst.Comparison, target):
    """``X == "cuda"`` / ``"cuda" == X`` -> ``X != "cpu"`` (and ``!=`` -> ``==``)."""
    cuda = "cuda" in (string_value(target.comparator), string_value(original.left))
    if cuda and picks_variant(eng.ctx, eng.line(original)):
        why = "it picks CUDA's own variant of one operation (the other arm: the host's)"
        eng.fail(spec, original, why)
        return None
    sibling = _sibling_left(eng, spec, original) if cuda else None
    if sibling is not None:
        why = f"the same subject is checked against 'cuda' on line {sibling}, which stays CUDA"
        eng.fail(spec, original, why)
        return None
    chosen = _chosen_type(eng, original) if cuda else ""
    if chosen:
        what = "the object" if chosen.startswith("self.") else "the function"
        how = "a converted switch" if chosen.startswith("self.") else "a `str` parameter"
        why = (
            f"`{chosen}` is the device type {what} takes ({how}): the callers "
            "choose the device, and this is CUDA's arm of a per-device choice (torch 2.13's "
            "include_paths and code cache keep it, beside an arm per device), kept"
        )
        eng.fail(spec, original, why)
        return None
    op = target.operator
    if string_value(target.comparator) == "cuda":
        lit, right = target.comparator, True
    elif string_value(original.left) == "cuda":
        lit, right = original.left, False
    else:
        return None
    other = original.left if right else target.comparator
    if _several_backends(eng, other):
        why = "its subject may be another backend's device (a pick over MPS too), kept"
        eng.fail(spec, original, why)
        return None
    if not _is_type(other) and not picked_type(eng, other):
        # `device == "cuda"`: a device string, whose "cuda:0" is not "cuda" (unless the script
        # binds it only to its two-way pick: script_picks)
        eng.fail(spec, original, "a device string compared with 'cuda' exactly, kept")
        return None
    spaces = dict(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
    if _index_bounded(eng, original, other):
        eng.done(spec, original)
        eng.add_needed_import("torch", node=original)
        return cst.Comparison(
            left=cst.Call(cst.parse_expression("torch.device"), [cst.Arg(other.deep_clone())]),
            comparisons=[
                cst.ComparisonTarget(
                    operator=op.__class__(**spaces),
                    comparator=cst.parse_expression("torch.accelerator.current_accelerator()"),
                )
            ],
        )
    new_op = cst.NotEqual(**spaces) if isinstance(op, cst.Equal) else cst.Equal(**spaces)
    cpu = with_value(lit, "cuda", "cpu")
    eng.done(spec, original)
    u = updated.comparisons[0]
    if right:
        return updated.with_changes(comparisons=[u.with_changes(operator=new_op, comparator=cpu)])
    return updated.with_changes(left=cpu, comparisons=[u.with_changes(operator=new_op)])


def _index_bounded(eng, original: cst.Comparison, other) -> bool:
    """``d.type == "cuda" and 0 <= d.index < count``: the check validates a device against this
    machine's devices, so "cuda" means the accelerator's own type (not "any but the host"):
    ``torch.device(d.type) == torch.accelerator.current_accelerator()``, which is False, not an
    error, where there is none."""
    parent = eng.parent(original)
    if not (isinstance(other, cst.Attribute) and isinstance(parent, cst.BooleanOperation)):
        return False
    if not isinstance(parent.operator, cst.And):
        return False
    subject = cst.Module([]).code_for_node(other.value)
    for term in and_terms(parent):
        if term is original or not isinstance(term, cst.Comparison):
            continue
        for x in [term.left, *(c.comparator for c in term.comparisons)]:
            if isinstance(x, cst.Attribute) and x.attr.value == "index":
                if cst.Module([]).code_for_node(x.value) == subject:
                    return True
    return False


def _cuda_compares(fn: ast.AST) -> list[tuple[int, str, ast.If | None]]:
    """(line, subject, the ``if`` it is the test of or None) of every ``<subject> == "cuda"`` /
    ``!= "cuda"`` under ``fn``."""
    tests = {id(n.test): n for n in ast.walk(fn) if isinstance(n, ast.If)}
    out = []
    for node in ast.walk(fn):
        if not (
            isinstance(node, ast.Compare)
            and len(node.ops) == 1
            and isinstance(node.ops[0], (ast.Eq, ast.NotEq))
        ):
            continue
        sides = [node.left, node.comparators[0]]
        lits = [x for x in sides if isinstance(x, ast.Constant) and x.value == "cuda"]
        if len(lits) == 1:
            subject = sides[1] if sides[0] is lits[0] else sides[0]
            out.append((node.lineno, ast.unparse(subject), tests.get(id(node))))
    return out


def _names(stmts: list[ast.stmt], stored: bool) -> set[str]:
    """The plain names ``stmts`` bind (``stored``) or mention at all."""
    return {
        n.id
        for st in stmts
        for n in ast.walk(st)
        if isinstance(n, ast.Name) and (not stored or isinstance(n.ctx, ast.Store))
    }


def _sibling_left(eng, spec, original: cst.Comparison) -> int | None:
    """The line of another ``if`` in this function that tests the same subject against "cuda",
    is left CUDA by the intent gate, and binds a name this ``if``'s body uses, else None. The
    two branches build one value (tvm's `if device.type == "cuda": target = tvm.target.cuda()
    else: target = <llvm>`, left, then `if device.type != "cuda": target = <llvm with the core
    count>`): rewriting one makes them disagree on every other accelerator. Checks that only
    share their subject (a cuDNN flag beside a placement) stay independent."""
    line = eng.line(original)
    fn = eng.ctx.scope_at(line).node
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    compares = _cuda_compares(fn)
    mine = [(subject, node) for ln, subject, node in compares if ln == line and node is not None]
    for subject, node in mine:
        used = _names(node.body, stored=False)
        for ln, other, sibling in compares:
            if ln == line or other != subject or sibling is None or eng.fixes(spec.rule, ln):
                continue
            if _names(sibling.body + sibling.orelse, stored=True) & used:
                return ln
    return None


HOST_TYPES = ("cpu", "meta")  # device types that are no accelerator


def _accelerator_list(original: cst.Comparison, target) -> bool:
    """``<device type> in [...]`` whose list names "cuda", no host type, and an accelerator it
    computes (``torch._C._get_privateuse1_backend_name()``): "CUDA or whatever accelerator is
    plugged in". A list of names only (``("cuda", "xpu")``: the backends with Triton kernels) is
    a closed list of what is supported, left."""
    seq = target.comparator
    if not _is_type(original.left) or not isinstance(seq, (cst.List, cst.Tuple, cst.Set)):
        return False
    if any(isinstance(e, cst.StarredElement) for e in seq.elements):
        return False
    values = [string_value(e.value) for e in seq.elements]
    computed = any(isinstance(e.value, cst.Call) for e in seq.elements)
    return computed and "cuda" in values and not any(v in HOST_TYPES for v in values)


_EXITS = (ast.Return, ast.Continue, ast.Break)


def _screens(eng, comp: cst.Comparison) -> bool:
    """``comp`` is the whole test of an ``if`` without ``else`` whose body only exits (a bare
    ``return``/``return None``, ``continue``, ``break``): the rest of the function is for the
    listed devices only. Read from the file's ``ast`` (the region parsed here may hold the
    ``if``'s header alone)."""
    parent = eng.parent(comp)
    if not isinstance(parent, cst.If) or parent.test is not comp:
        return False
    line = eng.line(comp)
    for node in ast.walk(eng.ctx.tree):
        if isinstance(node, ast.If) and node.test.lineno == line:
            return not node.orelse and all(
                isinstance(s, _EXITS)
                and (
                    not isinstance(s, ast.Return)
                    or s.value is None
                    or (isinstance(s.value, ast.Constant) and s.value.value is None)
                )
                for s in node.body
            )
    return False


def _off_host(eng, spec, original: cst.Comparison, updated: cst.Comparison):
    """``X in [accelerators]`` -> ``X not in ("cpu", "meta")`` (and ``not in`` -> ``in``)."""
    op = original.comparisons[0].operator
    spaces = dict(whitespace_after=op.whitespace_after)
    if isinstance(op, cst.In):
        new_op = cst.NotIn(whitespace_before=op.whitespace_before, **spaces)
    else:
        new_op = cst.In(whitespace_before=op.whitespace_before, **spaces)
    hosts = cst.parse_expression(repr(HOST_TYPES).replace("'", '"'))
    eng.done(spec, original)
    u = updated.comparisons[0]
    return updated.with_changes(comparisons=[u.with_changes(operator=new_op, comparator=hosts)])
