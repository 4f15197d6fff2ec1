"""``torch.cuda.amp.autocast(...)`` / ``torch.cuda.amp.GradScaler(...)`` (HN401/HN402) in a
script that has no ``device`` or ``device_type`` to thread into the neutral API (the
fine-tuning loops that call ``model.cuda()`` and never name a device)::

    with torch.cuda.amp.autocast(enabled=args.fp16):
->  with torch.amp.autocast(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu", enabled=args.fp16):

The device type is the script's own ``device`` where ``script_plan`` gives the script one (its
line lands in the same patch as the first place that uses it)::

    with torch.cuda.amp.autocast(enabled=args.fp16):   ->   with torch.amp.autocast(device, enabled=args.fp16):

else it is written out where it is used (``accelerator_api.device_type()`` for the
``accelerator_api`` target). On CUDA either is "cuda", as before. Everywhere else (a library
module, a ``device`` in scope) the plain ``call`` rewrite (``call_rename.CallRename``).

The autocast *alias* of timm's train.py, called later with no device (``with amp_autocast():``,
often handed on as a parameter), in a script::

    amp_autocast = torch.cuda.amp.autocast
->  amp_autocast = functools.partial(torch.amp.autocast, device_type=<the same expression>)

The device type is a keyword: a caller passing ``enabled`` positionally (CUDA's first
parameter) then fails loudly (two values for ``device_type``) instead of reading it as the
dtype. ``accelerator_api``'s autocast takes no device type: the plain reference there.
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import device_type_expr
from patches.generate.codemods.families.call_rename import CallRename, _device_type_param
from patches.generate.codemods.families.idioms_common import type_or_cpu
from patches.generate.codemods.families.script_device import is_script
from patches.generate.codemods.families.script_plan import AUTOCAST, NAME, SCALER, holds
from patches.generate.codemods.signatures import Unsupported, remap, signature_of


class ScriptAmp(CallRename):
    name = "script-amp"
    claims = AUTOCAST + SCALER

    def on_node(self, eng, original, updated):
        """``alias = torch.cuda.amp.autocast`` in a script (see the module docstring)."""
        if not isinstance(original, cst.Assign) or not is_script(eng.ctx):
            return None
        value = original.value
        if not isinstance(value, (cst.Attribute, cst.Name)):
            return None
        names = eng.qualnames(value) & set(AUTOCAST)
        specs = [s for s in eng.specs_for(self.name, value) if names & set(s.names)]
        line = eng.line(value)
        if not names or not specs or not eng.fixes(specs[0].rule, line):
            return None
        old = sorted(names)[0]
        new = specs[0].new_for(old)
        if _device_type_param(signature_of(old), signature_of(new)) is None:
            eng.done(specs[0], value)
            return updated.with_changes(value=eng.reference(value, old, new))
        kind = _device_type(eng, specs[0], value)
        eng.add_needed_import("functools")
        eng.remove_unused_import_by_node(value)
        eng.add_needed_import("torch", node=value)
        partial = cst.parse_expression(f"functools.partial({new}, device_type=None)")
        arg = partial.args[1].with_changes(value=kind)
        eng.done(specs[0], value)
        return updated.with_changes(value=partial.with_changes(args=(partial.args[0], arg)))

    def on_call(self, eng, original, updated):
        if is_script(eng.ctx) and device_type_expr(eng, original) is None:
            new = _inline(self.name, eng, original, updated)
            if new is not None:
                return new
        return super().on_call(eng, original, updated)


def _inline(family: str, eng, original: cst.Call, updated: cst.Call) -> cst.Call | None:
    """The neutral call with the accelerator's device type (or "cpu") written in, else None
    (left to ``CallRename``, which says why)."""
    names = eng.qualnames(original.func)
    for spec in eng.specs_for(family, original):
        matched = sorted(names & set(spec.names))
        if not matched:
            continue
        old, new = matched[0], spec.new_for(matched[0])
        old_sig, new_sig = signature_of(old), signature_of(new)
        need = _device_type_param(old_sig, new_sig)
        if need is None:
            return None  # the accelerator_api target's autocast takes no device type
        expr = _device_type(eng, spec, original)
        keyword = need.kind == need.KEYWORD_ONLY
        try:
            args = remap(
                updated.args,
                old_sig,
                new_sig,
                lead=() if keyword else (cst.Arg(expr),),
                extra={need.name: expr} if keyword else {},
                keywords_always=bool(spec.arg("keywords_always")),
                drop=tuple(spec.arg("drop") or ()),
            )
        except Unsupported:
            return None
        eng.done(spec, original)
        return updated.with_changes(func=eng.reference(original.func, old, new), args=args)
    return None


def _device_type(eng, spec, node) -> cst.BaseExpression:
    """The script's ``device`` where its plan holds ``node`` (``script_plan``: a device type
    string), else the accelerator's type or "cpu", written out."""
    if holds(eng.ctx, eng.line(node)):
        return cst.Name(NAME)
    return type_or_cpu(eng, spec, node)
