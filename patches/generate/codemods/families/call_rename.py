"""``call``: a CUDA call for its neutral one, arguments reshaped from the real signatures."""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family, device_type_expr
from patches.generate.codemods.signatures import Unsupported, remap, signature_of


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
