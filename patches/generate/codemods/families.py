"""Rule families: small handlers the Engine dispatches to, each rewriting one shape of code.

Which family fixes a rule follows from the catalogue (``fix.style`` and the match type, see
patches/targets.py); the names, the replacement and ``fix.args`` come from the catalogue too, and
argument shapes from the real signatures, so a new rule of an existing shape needs no code here.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ExpressionContext

from patches.generate.codemods.signatures import Unsupported, remap, signature_of

# docs/patches.md, "What stays CUDA": cuDNN and CUDA-graph gates are CUDA-specific on purpose.
CUDA_SPECIFIC_GATES = ("CUDNN", "CUDA_GRAPH")


class Family:
    """A rewrite shape. One instance per file (``registry.new_families``), so a family may keep
    per-file state. Every site a family is offered has passed the intent gate (``intent.py``):
    the family decides only *how* to rewrite, never *whether* the code is about CUDA.

    ``claims``: the matched names whose rules this family fixes instead of the one their
    catalogue style names (``targets.family_of``). ``prepare`` may add lines the family
    rewrites with a site in the same step; ``companions`` names spans it rewrites together
    with a site (they count as fixed with it, see ``intent.Gate``).
    """

    name = ""
    claims: tuple[str, ...] = ()

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        return lines

    def companions(self, ctx, spec, lines: frozenset[int]) -> dict[tuple[str, int], list]:
        return {}

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

    def on_call(self, eng, original, updated):
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        names = eng.qualnames(original.func)
        for spec in specs:
            matched = sorted(names & set(spec.names))
            if not matched:
                continue
            old, new = matched[0], spec.new_for(matched[0])
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


COMMON_UTILS = "torch.testing._internal.common_utils"


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
