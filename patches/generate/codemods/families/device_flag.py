"""A boolean CUDA switch becomes a device type, with every caller in the tree (HN510 `cuda-flag`).

inductor's C++ build, as torch 2.4 had it, and as upstream rewrote it (2.13)::

    def load_async(cls, source_code: str, cuda=False, submit_fn=None):   # codecache.py
        if cuda: ...
    CppCodeCache.load(self.source_code, cuda=False)                     # autotune_process.py
    self.cuda = False                                                   # graph.py

becomes::

    def load_async(cls, source_code: str, device_type: str = "cpu", submit_fn=None):
        if device_type == "cuda": ...
    CppCodeCache.load(self.source_code, device_type="cpu")
    self.device_type = "cpu"

A switch named ``cuda``/``use_cuda`` can only say "CUDA or the CPU"; a device type says the
same for CUDA (``cuda=True`` is ``device_type="cuda"``, ``if cuda:`` is ``if device_type ==
"cuda":``) and lets the code name another accelerator later. The rewrite is exact: the same
behaviour on every device.

A **parameter unit** is every function of the tree of one name holding the switch at one place
(a method and its overrides). It is rewritten only where every call of that name in the tree is
known: resolved to the unit through imports and classes, or (an unknown receiver) a call that
either passes no switch or can only be the unit's; the switch passed by keyword or position
(``True``/``False`` -> ``"cuda"``/``"cpu"``, the caller's own converted switch -> ``device_type``,
any other value ``v`` -> ``"cuda" if v else "cpu"``). Left, with the reason, where:

* a caller passes ``**kwargs`` or ``*args`` that may hold the switch, or the function is used as a
  value (``functools.partial(load, ...)``, ``getattr(cls, "load")``): a caller we cannot map;
* the function is public API (no ``_`` in its module path, name or class, not a test): callers
  outside the tree pass ``cuda=`` and would break (upstream broke them for
  ``cpp_extension.include_paths`` in 2.13; a maintainer decides that, not a codemod);
* the switch selects CUDA device code (a statement reading it calls ``.cuda()``,
  ``torch.cuda.*``, ``.is_cuda``): it stays a CUDA switch (distributed tests'
  ``if cuda: t = t.cuda(rank)``);
* its sites span subsystems (one patch each: a prefix of the series would hold half the unit),
  or a file holding one has no HN510 finding (the run would not visit it).

An **attribute unit** (``self.cuda = False`` in a class) is rewritten only where every read and
write of the attribute in the tree is on ``self`` in that class or its subclasses (a read through
another object, ``V.graph.cuda``, or by name, ``getattr(g, "cuda")``, leaves it).

Inside a converted function every read becomes the device-type test (``device_type == "cuda"``;
``not cuda`` -> ``device_type == "cpu"``, the switch's other side), except where it is passed
on as another converted unit's switch (``cuda=cuda`` -> ``device_type=device_type``). A switch passed to a function
outside the tree keeps its keyword: ``cuda=device_type == "cuda"``. A parameter's read choosing
CUDA's or the CPU's spelling of one thing, in the switch's order, is the device type itself
(gpytorch's tests, 45 times)::

    device = torch.device("cuda") if cuda else torch.device("cpu")   # -> torch.device(device_type)
    name = "cuda" if cuda else "cpu"                                 # -> device_type
    name = "cpu" if not cuda else "cuda"                             # -> device_type

exact, as every caller passes "cuda" or "cpu"; the arms' findings (HN503, HN509) go with it.
Other arms (``"cuda:0"``, ``torch.device("cuda", rank)``, the other order) stay a test, and so do
an attribute's picks: its stores stay CUDA for the gate only while a test reads it.
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.device_flag_callers import analyse
from patches.generate.codemods.families.device_flag_units import (
    NEW,
    Analysis,
    AttrUnit,
    ParamUnit,
)
from patches.generate.codemods.tree_index import TreeIndex

__all__ = ["NEW", "Analysis", "AttrUnit", "DeviceFlag", "ParamUnit", "analyse"]


# -- the rewrite ----------------------------------------------------------------------------
def _s(text: str) -> cst.SimpleString:
    return cst.SimpleString(f'"{text}"')


def _test(op: type = cst.Equal) -> cst.Comparison:
    return cst.Comparison(cst.Name(NEW), [cst.ComparisonTarget(op(), _s("cuda"))])


def _paren(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _pick(value: cst.BaseExpression) -> cst.BaseExpression:
    """``"cuda" if value else "cpu"``."""
    return cst.IfExp(test=value, body=_s("cuda"), orelse=_s("cpu"))


class DeviceFlag(Family):
    name = "device-flag"
    _rule = ""
    _held = ""  # why the last unit asked for is not rewritten in this file (the gate)

    def _analysis(self, ctx, spec) -> Analysis | None:
        index = getattr(ctx, "tree_index", None)
        if index is None:  # no tree given (a rewrite of one file): the file is the tree
            index = ctx.tree_index = TreeIndex.of_file(ctx.path, ctx.source)
        self._rule = spec.rule
        return analyse(index, tuple(spec.names))

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        """Every line of this file a converted unit rewrites joins the step (the reads of a
        switch, calls passing it by position, the attribute's reads)."""
        a = self._analysis(ctx, spec)
        if a is None or not lines:
            return lines
        extra = set()
        for (rel, line, name), unit in a.defs.items():
            if rel != ctx.path:
                continue
            node = next(
                (
                    n
                    for n in ctx.nodes
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and n.lineno == line
                    and n.name == name
                ),
                None,
            )
            if node is None:
                continue
            for n in ast.walk(node):
                if (isinstance(n, ast.Name) and n.id == unit.param) or (
                    isinstance(n, ast.arg) and n.arg == unit.param
                ):
                    extra.add(n.lineno)
        extra |= {line for (rel, line, _), _ in a.calls.items() if rel == ctx.path}
        extra |= {line for (rel, line, _), _ in a.attr_sites.items() if rel == ctx.path}
        return lines | frozenset(extra)

    # -- helpers ------------------------------------------------------------------------
    def _spec(self, eng, node):
        specs = eng.specs_for(self.name, node)
        return specs[0] if specs else None

    def _flag_unit(self, eng, node: cst.Name, a: Analysis) -> ParamUnit | None:
        """The converted unit whose switch the Name ``node`` reads (or declares)."""
        line = eng.line(node)
        b = eng.ctx.binding(line, node.value)
        if b is None:
            return None
        scope = b[0].node
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        unit = a.defs.get((eng.ctx.path, scope.lineno, scope.name))
        if unit is None or unit.param != node.value or not self._whole_here(eng, unit):
            return None
        return unit

    def _attr_unit(self, eng, node: cst.Attribute, a: Analysis) -> AttrUnit | None:
        if not (isinstance(node.value, cst.Name) and node.value.value == "self"):
            return None
        unit = a.attr_sites.get((eng.ctx.path, eng.line(node), node.attr.value))
        return unit if unit is not None and self._whole_here(eng, unit) else None

    def _mapped(self, eng, original, updated, a: Analysis) -> cst.BaseExpression:
        """The device type a caller's switch value ``original`` stands for."""
        if isinstance(original, cst.Name) and original.value in ("True", "False"):
            return _s("cuda" if original.value == "True" else "cpu")
        if isinstance(original, cst.Name) and self._flag_unit(eng, original, a):
            return cst.Name(NEW)
        if isinstance(original, cst.Attribute) and self._attr_unit(eng, original, a):
            return original.with_changes(attr=cst.Name(NEW))
        return _pick(updated)

    def _whole_here(self, eng, unit) -> bool:
        """The gate lets every switch site of ``unit`` in this file through: a unit is rewritten
        whole or not at all (a parameter renamed with a caller left would break the call)."""
        gate = eng.gate
        if gate is None:
            return True
        if isinstance(unit, ParamUnit):
            spans = [(a, b) for rel, a, b in unit.spans if rel == eng.ctx.path]
        else:
            spans = [(ln, ln) for rel, ln in unit.sites if rel == eng.ctx.path]
        for f in gate.findings:
            if f.rule == self._rule and any(a <= f.line <= b for a, b in spans):
                if not gate.fixes(f.rule, f.line):
                    self._held = f"the gate leaves its site at line {f.line}, so the unit stays"
                    return False
        return True

    def _gate_ok(self, eng, node) -> bool:
        spec = self._spec(eng, node)
        return spec is not None and eng.fixes(spec.rule, eng.line(node))

    # -- hooks --------------------------------------------------------------------------
    def on_node(self, eng, original, updated):
        if isinstance(original, cst.Param):
            return self._param(eng, original, updated)
        if (
            isinstance(original, cst.UnaryOperation)
            and isinstance(original.operator, cst.Not)
            and isinstance(original.expression, (cst.Name, cst.Attribute))
            and isinstance(updated.expression, cst.Comparison)
        ):
            spec = self._spec(eng, original)
            a = self._analysis(eng.ctx, spec) if spec else None
            if a is None:
                return None
            e = original.expression
            if (isinstance(e, cst.Name) and self._flag_unit(eng, e, a)) or (
                isinstance(e, cst.Attribute) and self._attr_unit(eng, e, a)
            ):
                # not CUDA: the CPU (the switch's other side; what a later run would write)
                cmp = updated.expression
                return cst.Comparison(
                    cmp.left, [cst.ComparisonTarget(cst.Equal(), _s("cpu"))]
                ).with_changes(lpar=original.lpar, rpar=original.rpar)
        if isinstance(original, cst.Assign):
            return self._store(eng, original, updated)
        if isinstance(original, cst.IfExp):
            return self._pick(eng, original, updated)
        return None

    def _pick(self, eng, original: cst.IfExp, updated: cst.IfExp):
        """A read of a converted switch parameter choosing CUDA's or the CPU's spelling of one
        thing, in the switch's order (``"cuda" if cuda else "cpu"``, ``torch.device("cuda") if
        cuda else torch.device("cpu")``): the device type itself (every value is "cuda" or
        "cpu"). Not an attribute's (``self.cuda``): its stores stay CUDA for the gate only while
        a test reads it; with none left, a later run would port them (``self.device_type =
        "cuda"`` read as a device default)."""
        test, negated = original.test, False
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, negated = test.expression, True
        spec = self._spec(eng, test) if isinstance(test, cst.Name) else None
        a = self._analysis(eng.ctx, spec) if spec else None
        if a is None or self._flag_unit(eng, test, a) is None:
            return None
        if not (
            updated.body.deep_equals(original.body) and updated.orelse.deep_equals(original.orelse)
        ):
            return None  # another family rewrote an arm
        yes, no = _arm(eng, original.body), _arm(eng, original.orelse)
        want = ("cpu", "cuda") if negated else ("cuda", "cpu")
        if yes is None or no is None or yes[1:] != no[1:] or (yes[0], no[0]) != want:
            return None
        if yes[1] == "str":
            return cst.Name(NEW)
        call = original.body
        arg = call.args[0].with_changes(value=cst.Name(NEW))
        return call.with_changes(args=[arg], lpar=[], rpar=[])

    def _param(self, eng, original: cst.Param, updated: cst.Param):
        spec = self._spec(eng, original)
        a = self._analysis(eng.ctx, spec) if spec else None
        if a is None or original.name.value not in spec.names:
            return None
        self._held = ""
        unit = self._flag_unit(eng, original.name, a)
        if unit is None:
            self._left(eng, spec, original, original.name.value, a)
            return None
        if not self._gate_ok(eng, original):
            return None
        default = updated.default
        if default is not None:
            default = _s(
                "cuda" if isinstance(default, cst.Name) and default.value == "True" else "cpu"
            )
        eng.done(spec, original)
        return updated.with_changes(
            name=cst.Name(NEW),
            annotation=cst.Annotation(cst.Name("str")),
            default=default,
            equal=(
                cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(" "),
                    whitespace_after=cst.SimpleWhitespace(" "),
                )
                if default is not None
                else cst.MaybeSentinel.DEFAULT
            ),
        )

    def _left(self, eng, spec, node, name: str, a: Analysis) -> None:
        """Say why a switch site that no converted unit holds is left."""
        line = eng.line(node)
        for u in a.params.values():
            for d, _, _ in u.defs:
                if d.path == eng.ctx.path and d.node.lineno <= line <= d.node.body[0].lineno:
                    if u.param == name and (u.why or self._held):
                        eng.fail(spec, node, f"device-flag: {u.why or self._held}")
                        return
        eng.fail(spec, node, "device-flag: not a switch (no bool default or annotation)")

    def on_ref(self, eng, original, updated):
        if isinstance(original, cst.Name) and not eng.is_attr_name(original):
            spec = self._spec(eng, original)
            a = self._analysis(eng.ctx, spec) if spec else None
            if a is None or original.value not in spec.names:
                return None
            parent = eng.parent(original)
            if isinstance(parent, cst.Param) and parent.name is original:
                return None  # the declaration: _param
            if isinstance(parent, cst.Arg) and parent.keyword is original:
                return None  # a keyword: on_call
            if self._flag_unit(eng, original, a) is None:
                return None
            return self._read(eng, original)
        if isinstance(original, cst.Attribute) and original.attr.value in ("cuda", "use_cuda"):
            spec = self._spec(eng, original)
            a = self._analysis(eng.ctx, spec) if spec else None
            if a is None or original.attr.value not in spec.names:
                return None
            unit = self._attr_unit(eng, original, a)
            if unit is None:
                return None
            parent = eng.parent(original)
            if isinstance(parent, cst.AssignTarget):
                return None  # the store is rewritten whole (_store)
            return _paren_if(eng, original, _test_of(original.with_changes(attr=cst.Name(NEW))))
        return None

    def _read(self, eng, original: cst.Name):
        return _paren_if(eng, original, _test())

    def _store(self, eng, original: cst.Assign, updated: cst.Assign):
        if len(original.targets) != 1:
            return None
        t = original.targets[0].target
        if not (isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name)):
            return None
        spec = self._spec(eng, t)
        a = self._analysis(eng.ctx, spec) if spec else None
        if a is None or t.attr.value not in spec.names:
            return None
        self._held = ""
        unit = self._attr_unit(eng, t, a)
        if unit is None:
            if t.value.value == "self":
                mine = a.attr_sites.get((eng.ctx.path, eng.line(t), t.attr.value))
                why = (
                    self._held
                    if mine is not None
                    else next(
                        (u.why for u in a.attrs.values() if u.attr == t.attr.value and u.why), ""
                    )
                )
                eng.fail(spec, t, f"device-flag: {why or 'no unit of the tree'}")
            return None
        if not self._gate_ok(eng, t):
            return None
        value = self._mapped(eng, original.value, updated.value, a)
        eng.done(spec, t)
        target = original.targets[0].with_changes(target=t.with_changes(attr=cst.Name(NEW)))
        return updated.with_changes(targets=[target], value=value)

    def on_call(self, eng, original: cst.Call, updated: cst.Call):
        spec = self._spec(eng, original)
        a = self._analysis(eng.ctx, spec) if spec else None
        if a is None:
            return None
        func = original.func
        name = (
            func.value
            if isinstance(func, cst.Name)
            else func.attr.value
            if isinstance(func, cst.Attribute)
            else None
        )
        unit = a.calls.get((eng.ctx.path, eng.line(original), name)) if name else None
        if unit is not None and not self._whole_here(eng, unit):
            unit = None
        if unit is None:
            self._boundary(eng, spec, original, a)
            return None
        index = unit.defs[0][1]
        args = list(updated.args)
        changed = False
        positional = 0
        for i, (o, u) in enumerate(zip(original.args, updated.args)):
            if o.star:
                continue
            if o.keyword is None:
                if index is not None and positional == index:
                    args[i] = u.with_changes(value=self._mapped(eng, o.value, u.value, a))
                    changed = True
                positional += 1
            elif o.keyword.value == unit.param:
                if not eng.fixes(spec.rule, eng.line(o)):
                    return None
                args[i] = u.with_changes(
                    keyword=cst.Name(NEW), value=self._mapped(eng, o.value, u.value, a)
                )
                eng.done(spec, o)
                changed = True
        return updated.with_changes(args=args) if changed else None

    def _boundary(self, eng, spec, original: cst.Call, a: Analysis) -> None:
        """A switch keyword of a call no converted unit takes: its value may still follow a
        converted switch (``cuda=cuda`` -> ``cuda=device_type == "cuda"``); else it is left."""
        for arg in original.args:
            if arg.keyword is None or arg.keyword.value not in spec.names:
                continue
            if eng.line(arg) not in {ln for s, ls in eng.gated if s is spec for ln in ls}:
                continue
            v = arg.value
            if (isinstance(v, cst.Name) and self._flag_unit(eng, v, a)) or (
                isinstance(v, cst.Attribute) and self._attr_unit(eng, v, a)
            ):
                eng.done(spec, arg)
                continue
            callee = cst.Module([]).code_for_node(original.func)
            units = [
                u
                for (n, p), u in a.params.items()
                if p == arg.keyword.value and (callee == n or callee.endswith("." + n))
            ]
            why = (
                units[0].why
                if units and units[0].why
                else (
                    f"`{callee}` is not a function of the scanned tree: its `{arg.keyword.value}=` "
                    "stays"
                )
            )
            eng.fail(spec, arg, f"device-flag: {why}")


def _arm(eng, node: cst.BaseExpression) -> tuple[str, str] | None:
    """(device type, "str") for an arm ``"cuda"``/``"cpu"``; (device type, qualname of the
    callee) for ``torch.device("cuda")`` (any spelling of ``torch.device``)."""
    if isinstance(node, cst.SimpleString):
        v = node.evaluated_value
        return (v, "str") if v in ("cuda", "cpu") else None
    if not (isinstance(node, cst.Call) and len(node.args) == 1):
        return None
    arg = node.args[0]
    if arg.keyword is not None or arg.star or eng.qualnames(node.func) != {"torch.device"}:
        return None
    inner = _arm(eng, arg.value)
    return (inner[0], "torch.device") if inner and inner[1] == "str" else None


def _test_of(subject: cst.BaseExpression) -> cst.Comparison:
    return cst.Comparison(subject, [cst.ComparisonTarget(cst.Equal(), _s("cuda"))])


# parents in which a bare comparison reads as the switch did (no parentheses needed)
_BARE = (
    cst.If,
    cst.While,
    cst.BooleanOperation,
    cst.Arg,
    cst.DictElement,
    cst.Assign,
    cst.Return,
    cst.IfExp,
    cst.AnnAssign,
    cst.Element,
    cst.Assert,
)


def _paren_if(eng, original, new: cst.Comparison) -> cst.BaseExpression:
    parent = eng.parent(original)
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        return new  # on_node turns `not x` into `!=`
    if isinstance(parent, cst.IfExp) and parent.test is not original:
        return _paren(new)
    if isinstance(parent, _BARE) or original.lpar:
        return new.with_changes(lpar=original.lpar, rpar=original.rpar) if original.lpar else new
    return _paren(new)
