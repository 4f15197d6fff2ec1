"""Rule families: small handlers the Engine dispatches to, each rewriting one shape of code.

A rule names its family in the catalogue (``fix.family``); the old and new API names come from
the catalogue too, so adding a rule of an existing shape needs no code here.
"""
from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from .signatures import Unsupported, remap, signature_of


class Family:
    name = ""

    def on_call(self, eng, original: cst.Call, updated: cst.Call):
        return None

    def on_ref(self, eng, original, updated):
        return None


class CallRename(Family):
    """``torch.cuda.synchronize(device=d)`` -> ``torch.accelerator.synchronize(d)``.

    Arguments are reshaped from the two real signatures (positional-only targets, renamed
    parameters, keyword-only ones such as ``torch.Event(enable_timing=...)``).
    """

    name = "call"

    def on_call(self, eng, original, updated):
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        names = eng.qualnames(original.func)
        for spec in specs:
            if spec.old not in names:
                continue
            try:
                args = remap(updated.args, signature_of(spec.old), signature_of(spec.new))
            except Unsupported as e:
                eng.fail(spec, original, str(e))
                return updated
            eng.done(spec, original)
            return updated.with_changes(func=eng.reference(original.func, spec.old, spec.new),
                                        args=args)
        return None


class Rename(Family):
    """A symbol for another in any position: ``TEST_CUDA`` -> ``TEST_ACCELERATOR``,
    ``@onlyCUDA`` -> ``@onlyAccelerator``, ``common_utils.TEST_MULTIGPU`` -> ``...MULTIACCELERATOR``.
    """

    name = "rename"

    def on_ref(self, eng, original, updated):
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        names = eng.qualnames(original)
        for spec in specs:
            if spec.old in names:
                eng.done(spec, original)
                return eng.reference(original, spec.old, spec.new)
        return None


class LeadingDeviceType(Family):
    """``torch.cuda.amp.autocast(...)`` -> ``torch.amp.autocast("cuda", ...)``; same for GradScaler.

    The generic API needs the device type first. A ``device_type`` variable in scope is threaded
    through (what reviewers ask for); otherwise the explicit ``"cuda"`` keeps behaviour identical
    and makes the one remaining CUDA choice visible (``torch.amp.GradScaler()`` alone would
    silently default to CUDA).
    """

    name = "device-type"

    def on_call(self, eng, original, updated):
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        names = eng.qualnames(original.func)
        for spec in specs:
            if spec.old not in names:
                continue
            lead_expr = (cst.Name("device_type") if eng.in_scope(original, "device_type")
                         else cst.SimpleString('"cuda"'))
            try:
                args = remap(updated.args, signature_of(spec.old), signature_of(spec.new),
                             lead=(cst.Arg(lead_expr),))
            except Unsupported as e:
                eng.fail(spec, original, str(e))
                return updated
            eng.done(spec, original)
            return updated.with_changes(func=eng.reference(original.func, spec.old, spec.new),
                                        args=args)
        return None


_CUDA_METHOD = m.Call(func=m.Attribute(attr=m.Name("cuda")))


class MethodToDevice(Family):
    """``x.cuda()`` -> ``x.to(device)`` where a ``device`` is in scope (device-type tests have
    one); ``x.cuda(non_blocking=True)`` keeps its keyword. An index argument (``x.cuda(1)``) or
    no ``device`` in scope leaves the call for a human.
    """

    name = "to-device"

    def on_call(self, eng, original, updated):
        if not m.matches(original, _CUDA_METHOD):
            return None
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        spec = specs[0]
        if any(a.keyword is None for a in updated.args):
            eng.fail(spec, original, "device index argument")
            return updated
        if not eng.in_scope(original, "device"):
            eng.fail(spec, original, "no `device` in scope")
            return updated
        dev = cst.Arg(cst.Name("device"), comma=(
            cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if updated.args
            else cst.MaybeSentinel.DEFAULT))
        eng.done(spec, original)
        return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("to")),
                                    args=(dev, *updated.args))


FAMILIES = {f.name: f for f in (CallRename(), Rename(), LeadingDeviceType(), MethodToDevice())}
