"""A script's own ``device`` (``script_plan``): a program with no device variable names its GPU
in several places (the classic tutorials' ``net.cuda()``, a benchmark's ``device="cuda"``, the
inference posts' ``x.to("cuda")``, ``torch.autocast("cuda")``)::

    net.cuda()                          device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    q = torch.randn(n, device="cuda")   ->     net.to(device)
                                                q = torch.randn(n, device=device)

The script gets one module-level ``device``, written after its imports (before the first place,
so it is bound before any of them runs), in the first step of the series that writes ``device``
in one of them: every step that uses it holds the line's statement (``prepare``). On CUDA that is
the current CUDA device as before; without an accelerator the CPU, so the script runs everywhere.
Where the file has no plan (it binds a ``device``, is a test module or a library, or hands a
plain ``"cuda"`` elsewhere), a device string in a device argument gets the same value in place
(``on_literal``), and ``.cuda()`` is ``MethodToDevice``'s.
"""

from __future__ import annotations

import ast
import functools

import libcst as cst
import libcst.matchers as m

from patches.generate.codemods.families.idioms_common import (
    API_TYPE,
    CUDA_DEVICE_STR,
    CURRENT,
    api_target,
    cuda_call_to,
    expr,
    first_line_of,
    insert_device_line,
    specs_at,
    string_value,
    type_or_cpu,
)
from patches.generate.codemods.families.literals import device_call_arg
from patches.generate.codemods.families.method_to_device import (
    MethodToDevice,
    parallel_form,
    pinned_form,
    storage_form,
)
from patches.generate.codemods.families.script_plan import (
    DEFAULT_DEVICE_CALLS,
    NAME,
    SCRIPT_DEFAULT_KEYWORDS,
    binds_device,
    holds,
    is_script,
    plan,
)
from patches.generate.codemods.families.script_plan import is_plain_cuda as _plain

_CUDA_METHOD = m.Call(func=m.Attribute(attr=m.Name("cuda")))
# keyword arguments whose CUDA device string a script gets in place (accelerator, else "cpu")
IN_PLACE_KEYWORDS = frozenset({"map_location", "device"})
_SERVED = ("device-literal", "device-defaults", "script-amp", "legacy-types")
_CTOR = "torch.device"


def gets_device(ctx) -> bool:
    """The script gets its own ``device`` line (accelerator or "cpu"): a CPU path."""
    return plan(ctx) is not None


def ports_in_place(ctx) -> bool:
    """The script gets a CUDA device string in place (``on_literal``): a CPU path, as the
    ``device`` line of ``gets_device`` is. Read from the file, not from what the gate lets
    through: a sync guarded for a site the gate then keeps is still the same call on CUDA."""
    return is_script(ctx) and _ports_in_place(ctx.tree)


@functools.lru_cache(maxsize=16)
def _ports_in_place(tree: ast.Module) -> bool:
    plain = any(_plain(n) for n in ast.walk(tree))
    for n in ast.walk(tree):
        if isinstance(n, ast.With) and any(_cuda(i.context_expr, True) for i in n.items):
            return True  # with torch.device("cuda"): a script default
        if not isinstance(n, ast.Call):
            continue
        places = [(k.arg, k.value) for k in n.keywords if k.arg in IN_PLACE_KEYWORDS]
        places += [("pick", k.value) for k in n.keywords if k.arg in SCRIPT_DEFAULT_KEYWORDS]
        func = ast.unparse(n.func) if n.args else ""
        if func.endswith(".to") or func in DEFAULT_DEVICE_CALLS:
            places.append(("pick" if func in DEFAULT_DEVICE_CALLS else None, n.args[0]))
        for key, value in places:
            if not _cuda(value, key == "pick"):
                continue
            if key in ("map_location", "pick") or not (plain or binds_device(tree)):
                return True
    return False


def _cuda(node: ast.AST, device_call: bool = False) -> bool:
    """``"cuda"`` / ``"cuda:N"``, or with ``device_call`` also ``torch.device("cuda")`` (the
    value the script-default places get whole)."""
    if device_call and isinstance(node, ast.Call) and ast.unparse(node.func) == "torch.device":
        node = node.args[0] if len(node.args) == 1 and not node.keywords else None
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and CUDA_DEVICE_STR.fullmatch(node.value) is not None
    )


class ScriptDevice(MethodToDevice):
    """``MethodToDevice`` plus the script's own ``device`` where it has none (module docstring)."""

    serves = _SERVED

    def __init__(self) -> None:
        self.users: dict[str, set[int]] = {}  # rule -> its lines among the plan's places

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        """A spec with a place of the plan takes the anchor statement into its step (one region:
        the ``device`` line is written before it), so every step that uses ``device`` has it."""
        p = plan(ctx)
        mine = lines & p.uses if p is not None else frozenset()
        if not mine or (spec.family == "script-amp" and api_target(spec)):
            # accelerator_api's autocast and GradScaler take no device type
            return lines
        ctx.blocks.add((p.head or p.anchor, p.anchor_end))
        self.users.setdefault(spec.rule, set()).update(mine)
        return lines | {p.anchor}

    def on_call(self, eng, original, updated):
        new = self._script_to(eng, original, updated)
        specs = eng.specs_for(self.name, original) if new is not None else []
        if specs:
            new = parallel_form(eng, original, pinned_form(eng, original, new, specs[0]))
        return storage_form(eng, original, new)

    def _script_to(self, eng, original, updated):
        cuda = m.matches(original, _CUDA_METHOD)
        if cuda and is_script(eng.ctx):
            new = _indexed(eng, original, updated)
            if new is not None:
                return new
        if holds(eng.ctx, eng.line(original)):
            specs = eng.specs_for(self.name, original) if cuda else []
            new = cuda_call_to(updated, NAME) if specs else None
            if new is not None:
                eng.done(specs[0], original)
                return new
            if not cuda and eng.qualnames(original.func) == {_CTOR}:
                new = _device_ctor(eng, original, updated)
                if new is not None:
                    return new
        return self._method_to(eng, original, updated)

    def on_literal(self, eng, original, updated):
        """A plain ``"cuda"`` at a place of the plan: ``device``. Without a plan,
        ``torch.load(..., map_location="cuda:0")`` in a script gets the accelerator's device of
        that index, the CPU without one (the script's tensors go there too), so a ported
        script loads its checkpoint on a CPU-only machine; so do ``x.to("cuda")`` (the
        inference posts' ``inputs.to("cuda")``) and ``device="cuda"`` (a benchmark's
        ``q = torch.randn(..., device="cuda")``) where no ``device`` is bound before them: the
        same value in place. An index (``"cuda:0"``) keeps it, in place, also beside a plan."""
        parent = eng.parent(original)
        if not isinstance(parent, cst.Arg) or not is_script(eng.ctx):
            return None
        value = string_value(original)
        found = CUDA_DEVICE_STR.fullmatch(value) if value is not None else None
        specs = [
            s for fam in ("device-literal", "device-defaults") for s in specs_at(eng, original, fam)
        ]
        if found is None or not specs:
            return None
        line = eng.line(original)
        if found.group(1) is None and holds(eng.ctx, line) and not _ctor_arg(eng, parent):
            eng.done(specs[0], original)
            return cst.Name(NAME)
        keyword = parent.keyword.value if parent.keyword else None
        if not (
            keyword in IN_PLACE_KEYWORDS or to_arg(eng, original) or device_call_arg(eng, parent)
        ):
            return None
        if keyword != "map_location" and eng.ctx.bound_before(line, NAME):
            return None  # the device-literal family's `device`
        eng.done(specs[0], original)
        if found.group(1) is None:
            return type_or_cpu(eng, specs[0], original)
        index = found.group(1)
        return expr(
            eng,
            specs[0],
            original,
            f'f"{{{CURRENT}.type}}:{index}" if torch.accelerator.is_available() else "cpu"',
            f'f"{{{API_TYPE}}}:{index}" if {API_TYPE} != "cpu" else "cpu"',
        )

    def on_node(self, eng, original, updated):
        """The ``device`` statement, before the anchor statement (its region is parsed alone, at
        module level: the anchor is the region's first statement), once a spec of the step
        writes ``device`` at a place the gate lets through."""
        p = plan(eng.ctx)
        if p is None or not isinstance(original, cst.Module) or not original.body:
            return None
        if first_line_of(eng, original) != p.anchor:
            return None
        specs = [
            s
            for s, _ in eng.gated
            if any(eng.fixes(s.rule, ln) for ln in self.users.get(s.rule, ()))
        ]
        if not specs:
            return None  # the gate keeps every place: a device line nothing would use
        return insert_device_line(eng, specs[0], original, updated, NAME)


def _ctor_arg(eng, arg: cst.Arg) -> bool:
    """``arg`` is an argument of ``torch.device(...)`` (that call is the place, ``on_call``)."""
    call = eng.parent(arg)
    return isinstance(call, cst.Call) and eng.qualnames(call.func) == {_CTOR}


def _device_ctor(eng, original: cst.Call, updated: cst.Call):
    """``torch.device("cuda")`` at a place of the plan: ``device`` as a device argument,
    ``torch.device(device)`` as a ``with`` item (a device context needs the object);
    ``torch.device("cuda", i)`` / ``torch.device("cuda:N")`` anywhere: ``torch.device(device, i)``."""
    args = original.args
    if any(a.keyword is not None or a.star for a in args) or not args:
        return None
    value = string_value(args[0].value)
    found = CUDA_DEVICE_STR.fullmatch(value) if value is not None else None
    specs = [
        s
        for fam in ("device-literal", "device-defaults")
        for s in specs_at(eng, original, fam, (_CTOR,))
    ]
    if found is None or not specs or len(args) > 2:
        return None
    index = None
    if len(args) == 2 and found.group(1) is None:
        index = updated.args[1].value  # torch.device("cuda", i)
    elif len(args) == 1 and found.group(1) is not None:
        index = cst.Integer(found.group(1))  # torch.device("cuda:N")
    if index is not None:
        eng.done(specs[0], original)
        return updated.with_changes(args=[cst.Arg(cst.Name(NAME)), cst.Arg(index)])
    parent = eng.parent(original)
    if len(args) != 1 or value != "cuda" or not isinstance(parent, (cst.Arg, cst.WithItem)):
        return None
    eng.done(specs[0], original)
    if isinstance(parent, cst.WithItem):
        return updated.with_changes(args=[cst.Arg(cst.Name(NAME))])
    eng.remove_unused_import_by_node(original.func)
    return cst.Name(NAME)


def to_arg(eng, node) -> bool:
    """``node`` is the first positional argument of a ``.to(...)`` call."""
    arg = eng.parent(node)
    call = eng.parent(arg) if isinstance(arg, cst.Arg) else None
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "to"
        and arg.keyword is None
        and not arg.star
        and call.args[0] is arg
    )


def _indexed(eng, original, updated):
    """``x.cuda(i[, non_blocking=b])`` in a script (``model.cuda(args.gpu)``) ->
    ``x.to(torch.device(<accelerator type>, i)[, non_blocking=b])``: device ``i`` of the current
    accelerator (``.cuda(i)`` needed CUDA; this needs an accelerator, no more); with the script's
    device line ``torch.device(device, i)``, which is the CPU on a CPU-only machine."""
    specs = eng.specs_for(ScriptDevice.name, original)
    args = updated.args
    if not specs or not args or args[0].keyword is not None or args[0].star:
        return None
    if any(a.keyword is None or a.keyword.value != "non_blocking" for a in args[1:]):
        return None
    if eng.in_scope(original, "device_type"):
        return None  # MethodToDevice's own form: torch.device(device_type, i)
    if holds(eng.ctx, eng.line(original)):
        acc = NAME  # the script's device line: the CPU's device i on a CPU-only machine
    elif api_target(specs[0]):
        acc = "accelerator_api.device_type()"
    else:
        acc = "torch.accelerator.current_accelerator().type"
    eng.add_needed_import("accelerator_api" if api_target(specs[0]) else "torch", node=original)
    eng.add_needed_import("torch", node=original)
    dev = cst.parse_expression(f"torch.device({acc}, 0)")
    dev = dev.with_changes(args=(dev.args[0], dev.args[1].with_changes(value=args[0].value)))
    eng.done(specs[0], original)
    return updated.with_changes(
        func=updated.func.with_changes(attr=cst.Name("to")),
        args=(args[0].with_changes(value=dev), *args[1:]),
    )
