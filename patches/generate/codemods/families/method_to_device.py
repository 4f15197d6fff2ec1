"""``to-device``: ``x.cuda()`` for ``x.to(device)`` with the device in scope."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from patches.generate.codemods.families.base import Family

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
