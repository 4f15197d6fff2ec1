"""Rule families: small handlers the Engine dispatches to, each rewriting one shape of code.

Which family fixes a rule follows from the catalogue (``fix.style`` and the match type, see
patches/targets.py); the names, the replacement and ``fix.args`` come from the catalogue too, and
argument shapes from the real signatures, so a new rule of an existing shape needs no code here.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ExpressionContext

from patches.generate.codemods.guards import IS_AVAILABLE, _CUDA_STR
from patches.generate.codemods.literals import DeviceLiteral
from patches.generate.codemods.signatures import Unsupported, remap, signature_of

# conventions.md: cuDNN and CUDA-graph checks are CUDA-specific on purpose; keep them guarded.
CUDA_SPECIFIC_GATES = ("CUDNN", "CUDA_GRAPH")


class Family:
    name = ""

    def on_call(self, eng, original: cst.Call, updated: cst.Call):
        return None

    def on_ref(self, eng, original, updated):
        return None

    def on_literal(self, eng, original, updated):
        return None


def device_type_expr(eng, node: cst.CSTNode) -> cst.BaseExpression | None:
    """The device type to thread into an API that needs one: a ``device_type`` in scope, else
    ``torch.device(device).type`` for a ``device`` in scope (str or torch.device), else None."""
    if eng.in_scope(node, "device_type"):
        return cst.Name("device_type")
    if eng.in_scope(node, "device"):
        eng.add_needed_import("torch", node=node)
        return cst.parse_expression("torch.device(device).type")
    return None


class CallRename(Family):
    """``torch.cuda.synchronize(device=d)`` -> ``torch.accelerator.synchronize(d)``; constructors
    (``torch.cuda.Event(True)`` -> ``torch.Event(enable_timing=True)``); ``fix.args.prepend``
    threads a device type (``torch.cuda.amp.autocast()`` -> ``torch.amp.autocast(device_type)``).
    """

    name = "call"

    def on_literal(self, eng, original, updated):
        return _pick(eng, original, updated)

    def on_call(self, eng, original, updated):
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        names = eng.qualnames(original.func)
        if names == {"torch.device"}:
            return _pick(eng, original, updated)
        for spec in specs:
            matched = sorted(names & set(spec.names))
            if not matched:
                continue
            old, new = matched[0], spec.new_for(matched[0])
            if old == IS_AVAILABLE and eng.ctx.guard_blocked.get(eng.line(original)):
                eng.fail(spec, original, eng.ctx.guard_blocked[eng.line(original)])
                return updated
            if old == IS_AVAILABLE and _test_gate(eng, original, updated):
                # Upstream's form in test files: `@skipIf(not TEST_ACCELERATOR, ...)`.
                eng.done(spec, original)
                eng.remove_unused_import_by_node(original.func)
                eng.add_needed_import(COMMON_UTILS, "TEST_ACCELERATOR")
                return cst.Name("TEST_ACCELERATOR")
            target = eng.assigned_name(original)
            if target and "cuda" in target.lower():
                # `TEST_CUDA = torch.cuda.is_available()`: the intent is "is CUDA", keep it.
                eng.fail(spec, original, f"assigned to {target}: the intent is CUDA itself")
                return updated
            old_sig, new_sig = signature_of(old), signature_of(new)
            lead, extra = (), {}
            need = _device_type_param(old_sig, new_sig)
            if need is not None:
                expr = device_type_expr(eng, original)
                if expr is None:
                    eng.fail(
                        spec,
                        original,
                        f"{new} needs {need.name}: no device_type or device in scope to pass",
                    )
                    return updated
                if need.kind == need.KEYWORD_ONLY:
                    extra = {need.name: expr}
                else:
                    lead = (cst.Arg(expr),)
            try:
                args = remap(
                    updated.args,
                    old_sig,
                    new_sig,
                    lead=lead,
                    extra=extra,
                    keywords_always=bool(spec.arg("keywords_always")),
                    drop=tuple(spec.arg("drop") or ()),
                )
            except Unsupported as e:
                eng.fail(spec, original, str(e))
                return updated
            eng.done(spec, original)
            return updated.with_changes(func=eng.reference(original.func, old, new), args=args)
        return None


_CURRENT = "torch.accelerator.current_accelerator()"


def _pick(eng, original, updated):
    """The CUDA literal of a device-pick (guards.py) in the form of the current accelerator:
    ``"cuda"`` -> ``torch.accelerator.current_accelerator().type``, ``torch.device("cuda")`` ->
    ``torch.accelerator.current_accelerator()``, an index ``N`` (``"cuda:N"``,
    ``torch.device("cuda", N)``) -> ``torch.device(torch.accelerator.current_accelerator().type, N)``.
    Only in the IfExp body / assigned value the analysis found, in the step that rewrites the call."""
    line = eng.line(original)
    call_line = eng.ctx.guard_picks.get(line)
    if call_line is None or eng.ctx.guard_blocked.get(call_line):
        return None
    if not any(IS_AVAILABLE in s.names for s in eng.specs_for("call", original)):
        return None
    parent = eng.parent(original)
    if not (
        (isinstance(parent, cst.IfExp) and parent.body is original)
        or (isinstance(parent, cst.Assign) and parent.value is original)
    ):
        return None
    if isinstance(original, cst.SimpleString):
        text = original.evaluated_value if not original.prefix.lower().strip("ru") else None
        m_ = _CUDA_STR.fullmatch(text) if isinstance(text, str) else None
        if m_ is None:
            return None
        index, device = m_.group(1), False
    elif (
        isinstance(original, cst.Call)
        and original.args
        and isinstance(original.args[0].value, cst.SimpleString)
    ):
        m_ = _CUDA_STR.fullmatch(original.args[0].value.evaluated_value or "")
        if m_ is None or original.args[0].keyword is not None:
            return None
        index, device = m_.group(1), True
        if len(original.args) == 2 and isinstance(original.args[1].value, cst.Integer):
            index = original.args[1].value.value
        elif len(original.args) != 1:
            return None
    else:
        return None
    eng.add_needed_import("torch", node=original)
    if index is not None:
        return cst.parse_expression(f"torch.device({_CURRENT}.type, {index})")
    return cst.parse_expression(_CURRENT if device else f"{_CURRENT}.type")


COMMON_UTILS = "torch.testing._internal.common_utils"
_SKIPS = ("skipIf", "skipUnless")


def is_test_file(path: str) -> bool:
    """A test module: ``test_*.py``/``*_test.py``, under a ``test``/``tests`` directory, or
    PyTorch's test harness (``torch/testing/_internal``)."""
    parts = path.split("/")
    name = parts[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or any(d in ("test", "tests") for d in parts[:-1])
        or "testing/_internal/" in path
    )


def _test_gate(eng, original: cst.Call, updated: cst.Call) -> bool:
    """``torch.cuda.is_available()`` as the condition of a ``@skipIf(not ...)`` /
    ``@skipUnless(...)`` decorator in a test file (not common_utils itself, which defines it)."""
    if updated.args or not is_test_file(eng.ctx.path) or eng.module_name == COMMON_UTILS:
        return False
    node = original
    parent = eng.parent(node)
    negated = isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)
    if negated:
        node, parent = parent, eng.parent(parent)
    call = eng.parent(parent) if isinstance(parent, cst.Arg) and parent.keyword is None else None
    if not isinstance(call, cst.Call) or not call.args or call.args[0] is not parent:
        return False
    func = (
        call.func.attr.value
        if isinstance(call.func, cst.Attribute)
        else getattr(call.func, "value", "")
    )
    want = "skipIf" if negated else "skipUnless"
    return func == want and isinstance(eng.parent(call), cst.Decorator)


def _device_type_param(old, new):
    """The new API's device-type parameter the old one lacks: ``torch.amp.autocast``'s leading
    ``device_type``, ``torch.amp.GradScaler``'s ``device`` (which silently defaults to "cuda", so
    it is always passed), ``torch.amp.custom_fwd``'s keyword-only ``device_type``. Decided from
    the real signatures (our accelerator_api.autocast has none), not from a list."""
    if new is None:
        return None
    for p in new.parameters.values():
        if p.name in ("device_type", "device") and (old is None or p.name not in old.parameters):
            first = p is next(iter(new.parameters.values()))
            # Needed when required, or when its default is CUDA (the GradScaler trap); an
            # optional None (torch.Event(device=None)) already means "current accelerator".
            if (first or p.kind == p.KEYWORD_ONLY) and (
                p.default is p.empty or p.default == "cuda"
            ):
                return p
    return None


class Rename(Family):
    """A test-harness identifier for its generic form: ``TEST_CUDA`` -> ``TEST_ACCELERATOR``,
    ``@onlyCUDA`` -> ``@onlyAccelerator``, ``common_utils.TEST_MULTIGPU`` -> ``...MULTIACCELERATOR``.
    Definitions (``TEST_CUDA = ...`` in the file itself) are left alone.
    """

    name = "rename"

    def on_ref(self, eng, original, updated):
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        if isinstance(original, cst.Name):
            if eng.is_attr_name(original) or eng.expr_context(original) != ExpressionContext.LOAD:
                return None
            ident = original.value
        elif isinstance(original, cst.Attribute):
            ident = original.attr.value
        else:
            return None
        for spec in specs:
            if ident not in spec.names:
                continue
            if any(tag in ident for tag in CUDA_SPECIFIC_GATES):
                eng.fail(spec, original, f"{ident} is a CUDA-specific gate on purpose")
                return None
            if isinstance(original, cst.Name) and eng.defined_locally(original):
                eng.fail(spec, original, f"{ident} is defined in this file")
                return None
            new = spec.new_for(ident)
            if new.rsplit(".", 1)[0] == eng.module_name:
                eng.fail(spec, original, f"this module defines {new.rsplit('.', 1)[1]}")
                return None
            if isinstance(original, cst.Attribute):
                # `mod.TEST_CUDA`: only a receiver we can resolve says where the new name lives.
                receiver = eng.qualnames(original.value)
                if not receiver:
                    eng.fail(spec, original, "cannot resolve the module it is read from")
                    return None
                old = f"{sorted(receiver)[0]}.{ident}"
            else:
                quals = sorted(q for q in eng.qualnames(original) if q.endswith("." + ident))
                old = quals[0] if quals else ident
            eng.done(spec, original)
            return eng.reference(original, old, new, bare=True)
        return None


class AttributeRename(Family):
    """An attribute name for its generic one on any receiver: ``s.cuda_stream`` -> ``s.native_handle``."""

    name = "attribute"

    def on_ref(self, eng, original, updated):
        if not isinstance(original, cst.Attribute):
            return None
        for spec in eng.specs_for(self.name, original):
            if original.attr.value in spec.names:
                eng.done(spec, original)
                new_attr = spec.new_for(original.attr.value).rsplit(".", 1)[-1]
                return updated.with_changes(attr=cst.Name(new_attr))
        return None


_CUDA_METHOD = m.Call(func=m.Attribute(attr=m.Name("cuda")))


class MethodToDevice(Family):
    """``x.cuda()`` -> ``x.to(device)`` where a ``device`` is in scope (device-type tests and
    training steps have one); ``x.cuda(non_blocking=True)`` keeps its keyword. An index argument
    becomes ``x.to(torch.device(device_type, i))`` where a ``device_type`` is in scope; otherwise
    it, or no ``device`` in scope, leaves the call for a human.
    """

    name = "to-device"

    def on_call(self, eng, original, updated):
        if not m.matches(original, _CUDA_METHOD):
            return None
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        spec = specs[0]
        positional = [a for a in updated.args if a.keyword is None]
        if positional:
            # `x.cuda(i)` -> `x.to(torch.device(device_type, i))` when a device type is in scope.
            if (
                len(positional) > 1
                or updated.args[0] is not positional[0]
                or positional[0].star
                or not eng.in_scope(original, "device_type")
            ):
                eng.fail(spec, original, "device index argument")
                return updated
            eng.add_needed_import("torch", node=original)
            dev = positional[0].with_changes(
                value=cst.Call(
                    cst.parse_expression("torch.device"),
                    [
                        cst.Arg(
                            cst.Name("device_type"),
                            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                        ),
                        cst.Arg(positional[0].value),
                    ],
                )
            )
            eng.done(spec, original)
            return updated.with_changes(
                func=updated.func.with_changes(attr=cst.Name("to")), args=(dev, *updated.args[1:])
            )
        if not eng.in_scope(original, "device"):
            eng.fail(spec, original, "no `device` in scope")
            return updated
        dev = cst.Arg(
            cst.Name("device"),
            comma=(
                cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                if updated.args
                else cst.MaybeSentinel.DEFAULT
            ),
        )
        eng.done(spec, original)
        return updated.with_changes(
            func=updated.func.with_changes(attr=cst.Name("to")), args=(dev, *updated.args)
        )


FAMILIES = {
    f.name: f
    for f in (CallRename(), Rename(), AttributeRename(), MethodToDevice(), DeviceLiteral())
}
