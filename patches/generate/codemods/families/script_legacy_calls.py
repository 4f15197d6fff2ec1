"""A legacy CUDA tensor type used directly in a script that gets its own ``device`` line (HN507
outside the alias unit of ``script_legacy_types``; ``script_plan`` counts these calls among the
places of the line, so a script with only them gets it)::

    x = torch.cuda.FloatTensor(3).fill_(1)       ->  x = torch.empty(3, dtype=torch.float32, device=device).fill_(1)
    e = torch.cuda.LongTensor()                  ->  e = torch.empty(0, dtype=torch.int64, device=device)
    w = torch.cuda.FloatTensor([[1, 2], [3, 4]]) ->  w = torch.tensor([[1, 2], [3, 4]], dtype=torch.float32, device=device)
    z = torch.cuda.FloatTensor(arr)              ->  z = torch.FloatTensor(arr).to(device)
    y = x.type(torch.cuda.HalfTensor)            ->  y = x.to(device, torch.float16)

Sizes (two or more arguments, or one int literal) make an uninitialised tensor, as the legacy
constructor did; a list or tuple display is data; any other one argument (a name, a NumPy array,
``x.size()``) could be either, so the CPU type of the same name keeps its meaning and the result
moves to the device (the choice the alias unit makes). On CUDA ``device`` is "cuda", the current
CUDA device as before; without an accelerator the CPU.

Left, with the reason: a library module or a file binding its own ``device`` (no device line), a
call with keywords or unpacked arguments, a type used other than called or given to
``x.type(...)`` (``isinstance(x, torch.cuda.FloatTensor)``, the type handed on), a type with no
dtype here (the complex ones).
"""

from __future__ import annotations

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.default_type import is_set_type
from patches.generate.codemods.families.script_legacy_types import alias_line, type_to
from patches.generate.codemods.families.script_plan import (
    LEGACY_DTYPES,
    NAME,
    binds_device,
    holds,
    is_script,
)

_SPECS = "legacy-types"  # the catalogue's idiom for HN507: the specs this family rewrites
_PREFIX = "torch.cuda."


def _positional(call: cst.Call) -> bool:
    return all(a.keyword is None and not a.star for a in call.args)


def _call_of(eng, node) -> cst.Call | None:
    """The call ``node`` is the type of: ``node(...)`` or ``x.type(node)``, any arguments."""
    parent = eng.parent(node)
    if isinstance(parent, cst.Call) and parent.func is node:
        return parent
    call = eng.parent(parent) if isinstance(parent, cst.Arg) else None
    if (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "type"
        and call.args[0] is parent
    ):
        return call
    return None


def _type_node(call: cst.Call):
    """The legacy type of ``call``'s shape: its ``func``, or the argument of ``x.type(T)``."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "type" and len(call.args) == 1:
        return call.args[0].value
    return func


def _kind(eng, node) -> str:
    """``torch.cuda.FloatTensor`` -> ``FloatTensor`` (any legacy name; "" for others)."""
    if not isinstance(node, (cst.Attribute, cst.Name)):
        return ""
    q = next(iter(eng.qualnames(node)), "")
    return q[len(_PREFIX) :] if q.startswith(_PREFIX) else ""


def _why(eng, node, kind: str) -> str:
    """Why the legacy type at ``node`` stays."""
    call = _call_of(eng, node)
    if kind not in LEGACY_DTYPES:
        return f"{kind}: no dtype of a neutral constructor here: decide by hand"
    if call is None:
        return (
            "a legacy type used other than called or given to x.type() (an isinstance "
            "check, the type handed on): decide by hand"
        )
    if not _positional(call):
        return "a legacy type called with keywords or unpacked arguments: decide by hand"
    if _type_node(call) is not node:
        return "x.type() given more than the legacy type: decide by hand"
    if not is_script(eng.ctx):
        return "not a script: which device the tensor goes to is its caller's choice"
    if binds_device(eng.ctx.tree):
        return f"the file binds its own {NAME}: which device the tensor means is its choice"
    return f"the script gets no {NAME} line of its own (script_plan): decide by hand"


def _factory(updated: cst.Call, fn: str, dtype: str) -> cst.Call:
    """``torch.<fn>(<the call's arguments>, dtype=torch.<dtype>, device=device)`` (no
    arguments: ``0``); a trailing comma stays last, the new arguments laid out as the others."""
    tmpl = cst.parse_expression(f"torch.{fn}(0, dtype=torch.{dtype}, device={NAME})")
    args, extra = list(updated.args), list(tmpl.args[1:])
    if not args:
        return tmpl.with_changes(lpar=updated.lpar, rpar=updated.rpar)
    sep = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    trailing = args[-1].comma
    if isinstance(trailing, cst.Comma):
        if len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
            sep = args[-2].comma
        elif isinstance(updated.whitespace_before_args, cst.ParenthesizedWhitespace):
            sep = cst.Comma(whitespace_after=updated.whitespace_before_args)
        extra = [extra[0].with_changes(comma=sep), extra[1].with_changes(comma=trailing)]
    args[-1] = args[-1].with_changes(comma=sep)
    return updated.with_changes(func=tmpl.func, args=(*args, *extra))


def _constructor(updated: cst.Call, kind: str) -> cst.BaseExpression:
    """``torch.cuda.<kind>(...)`` written for the script's ``device`` (module docstring)."""
    dtype = LEGACY_DTYPES[kind]
    args = updated.args
    if len(args) != 1 or isinstance(args[0].value, cst.Integer):
        return _factory(updated, "empty", dtype)
    if isinstance(args[0].value, (cst.List, cst.Tuple)):
        return _factory(updated, "tensor", dtype)
    inner = updated.with_changes(func=cst.parse_expression(f"torch.{kind}"), lpar=(), rpar=())
    to = cst.Attribute(value=inner, attr=cst.Name("to"))
    return cst.Call(to, [cst.Arg(cst.Name(NAME))], lpar=updated.lpar, rpar=updated.rpar)


class LegacyCalls(Family):
    """The direct uses of a legacy CUDA type (module docstring); the alias unit's statements are
    ``script_legacy_types``'."""

    name = "legacy-calls"

    def _spec(self, eng, node):
        """The HN507 spec at ``node`` (a legacy type this family decides), or None."""
        if not isinstance(node, (cst.Attribute, cst.Name)) or not _kind(eng, node):
            return None
        if isinstance(node, cst.Name) and eng.is_attr_name(node):
            return None  # the `FloatTensor` of `torch.cuda.FloatTensor`
        names = eng.qualnames(node)
        specs = [s for s in eng.specs_for(_SPECS, node) if names & set(s.names)]
        if not specs or alias_line(eng.ctx, eng.line(node)) or is_set_type(eng, node):
            return None  # no site, the alias unit's statement, or a default type (default_type)
        return specs[0]

    def on_ref(self, eng, original, updated):
        """A legacy type this family does not rewrite: say why it stays."""
        spec = self._spec(eng, original)
        if spec is None:
            return None
        call = _call_of(eng, original)
        kind = _kind(eng, original)
        placed = call is not None and _type_node(call) is original and _positional(call)
        if not (placed and kind in LEGACY_DTYPES and holds(eng.ctx, eng.line(original))):
            eng.fail(spec, original, _why(eng, original, kind))
        return None

    def on_call(self, eng, original: cst.Call, updated: cst.Call):
        """A place of the script's ``device`` line: the neutral constructor or ``.to``."""
        node = _type_node(original)
        spec = self._spec(eng, node)
        kind = _kind(eng, node) if spec is not None else ""
        if kind not in LEGACY_DTYPES or not _positional(original):
            return None
        if not holds(eng.ctx, eng.line(node)):
            return None
        eng.add_needed_import("torch", node=original)
        eng.remove_unused_import_by_node(node)
        eng.done(spec, node)
        if node is original.func:
            return _constructor(updated, kind)
        return type_to(updated, LEGACY_DTYPES[kind])
