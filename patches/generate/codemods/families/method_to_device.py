"""``to-device``: ``x.cuda()`` for ``x.to(device)`` with the device in scope."""

from __future__ import annotations

import ast
import functools

import libcst as cst
import libcst.matchers as m

from patches.generate.codemods.context import param_defaults
from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import API_TYPE, CURRENT, expr
from patches.generate.codemods.families.own_cuda import own_cuda
from patches.generate.codemods.families.script_plan import pytorch_module
from patches.generate.codemods.families.values import is_index
from patches.generate.intent.data import calls

_CUDA_METHOD = m.Call(func=m.Attribute(attr=m.Name("cuda")))
_AVAILABLE = "torch.accelerator.is_available()"
_API_AVAILABLE = "accelerator_api.is_available()"
_CUDA_AVAILABLE = "torch.cuda.is_available()"


def _storage(eng, call: cst.Call) -> bool:
    """``call`` is ``s.cuda(...)`` on the first parameter of a ``map_location`` lambda
    (``lambda storage, loc: storage.cuda()``): ``s`` is an untyped storage. The lambda is the
    ``map_location=`` argument, or one that spells the callable's documented parameters,
    ``(storage, loc)`` or ``(storage, location)``, wherever it is made (d3rlpy's
    ``map_location(device)`` returns it for ``torch.load``, round 42)."""
    recv = call.func.value if isinstance(call.func, cst.Attribute) else None
    node = eng.parent(call)
    while node is not None and not isinstance(node, cst.Lambda):
        node = eng.parent(node)
    if not isinstance(recv, cst.Name) or node is None or not node.params.params:
        return False
    params = [p.name.value for p in node.params.params]
    arg = eng.parent(node)
    keyword = isinstance(arg, cst.Arg) and arg.keyword is not None
    return params[0] == recv.value and (
        (keyword and arg.keyword.value == "map_location")
        or (len(params) == 2 and params[1] in _LOCATION and "storage" in params[0])
    )


_LOCATION = ("loc", "location")
_PASSED = frozenset({"non_blocking", "memory_format"})  # `cuda()`'s keywords `to` takes too


def storage_form(eng, original: cst.Call, new):
    """A storage's ``to`` takes its device by keyword only (``UntypedStorage.to(*, device,
    non_blocking)``): ``storage.to(device)`` raises TypeError, also on CUDA. So ``storage.cuda()``
    in a ``map_location`` lambda becomes ``storage.to(device=<device>)``."""
    if not (
        isinstance(new, cst.Call)
        and m.matches(new.func, m.Attribute(attr=m.Name("to")))
        and new.args
        and new.args[0].keyword is None
        and _storage(eng, original)
    ):
        return new
    tight = cst.SimpleWhitespace("")
    first = new.args[0].with_changes(
        keyword=cst.Name("device"),
        equal=cst.AssignEqual(whitespace_before=tight, whitespace_after=tight),
    )
    return new.with_changes(args=(first, *new.args[1:]))


def pinned_form(eng, original: cst.Call, new, spec):
    """``x.pin_memory().cuda(...)`` -> ``(x.pin_memory() if <available> else x).to(...)``: pinning
    raises without an accelerator (CUDA's CPU-only build too), and a CPU copy needs no pinned
    memory; on an accelerator the copy is pinned and asynchronous as before."""
    if not (
        isinstance(new, cst.Call)
        and m.matches(new.func, m.Attribute(attr=m.Name("to")))
        and m.matches(new.func.value, m.Call(func=m.Attribute(attr=m.Name("pin_memory")), args=()))
        and m.matches(original.func, m.Attribute(attr=m.Name("cuda")))
    ):
        return new
    pinned = new.func.value
    test = expr(eng, spec, original, _AVAILABLE, _API_AVAILABLE)
    return _receiver_or(new, test, pinned.func.value)


def parallel_form(eng, original: cst.Call, new):
    """``nn.DataParallel(model).cuda()`` -> ``(nn.DataParallel(model) if torch.cuda.is_available()
    else model).to(...)``: DataParallel's scatter and gather only CUDA implements (``[parallel]``,
    the gate's ``cuda-parallel``), so on an accelerator with several devices that are not CUDA's
    the wrapped model stops in its first forward; the wrap stays CUDA's, as the original's was."""
    recv = original.func.value if isinstance(original.func, cst.Attribute) else None
    if not (
        isinstance(new, cst.Call)
        and m.matches(new.func, m.Attribute(attr=m.Name("to")))
        and isinstance(recv, cst.Call)
        and recv.args
        and recv.args[0].keyword is None
        and not recv.args[0].star
        and eng.qualnames(recv.func) & _wraps()
    ):
        return new
    eng.add_needed_import("torch", node=original)
    return _receiver_or(new, cst.parse_expression(_CUDA_AVAILABLE), recv.args[0].value)


def _receiver_or(new: cst.Call, test: cst.BaseExpression, orelse: cst.BaseExpression) -> cst.Call:
    """``new`` (``r.to(...)``) with its receiver ``(r if <test> else <orelse>)``."""
    code = cst.Module([]).code_for_node
    guarded = f"({code(new.func.value)} if {code(test)} else {code(orelse)})"
    return new.with_changes(func=new.func.with_changes(value=cst.parse_expression(guarded)))


@functools.cache
def _wraps() -> frozenset[str]:
    """The module wrappers of ``[parallel]`` (``cuda_intent.toml``): ``DataParallel``'s names."""
    return frozenset(c for c in calls("parallel") if c.endswith("DataParallel"))


class MethodToDevice(Family):
    """``x.cuda()`` -> ``x.to(device)`` where a ``device`` is in scope (device-type tests and
    training steps have one); ``x.cuda(non_blocking=True)`` keeps its keyword. An index argument
    becomes ``x.to(torch.device(device_type, i))`` where a ``device_type`` is in scope; without
    one, an argument the file shows is always an int (``values.is_index``, never None) becomes
    ``x.to(torch.device(i))``: ``torch.device(<int>)`` is that index of the current accelerator
    (CUDA's on a CUDA machine, as ``.cuda(i)`` was; it raises on a CPU-only host where
    ``.cuda(i)`` did). Otherwise (a name that may hold a ``torch.device``, a string or None:
    ``.cuda(None)`` is the current device, ``torch.device(None)`` a TypeError), the call is left
    for a human. A bare ``.cuda()`` with no ``device`` in scope is left in PyTorch's own modules
    (upstream moves such a call to a device its code holds); in a user's module (a helper of
    fairseq's examples: ``self.model = model[0].eval().cuda()``) it becomes
    ``.to(torch.accelerator.current_accelerator())``, read when the call runs: the current device
    on CUDA, as ``.cuda()`` was, and ``.to(None)``, a no-op, without an accelerator. A ``device``
    parameter still at an indexed default (``device="cuda:0"``) is one device, not the current
    one (lmms-eval's wrappers, where each rank's current device differs): not ``.cuda()``'s. A
    receiver that may be an object of a tree class defining its own ``cuda`` is left
    (``own_cuda``: lightllm's vision models move their weights there and have no ``to``).
    """

    name = "to-device"

    def on_call(self, eng, original, updated):
        return storage_form(eng, original, self._method_to(eng, original, updated))

    def _method_to(self, eng, original, updated):
        if not m.matches(original, _CUDA_METHOD):
            return None
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        spec = specs[0]
        if foreign := _foreign_keyword(updated):
            eng.fail(spec, original, f"`cuda()` argument `{foreign}`")
            return updated
        positional = [a for a in updated.args if a.keyword is None]
        if positional:
            # `x.cuda(i)` -> `x.to(torch.device(device_type, i))` when a device type is in scope.
            if len(positional) > 1 or updated.args[0] is not positional[0] or positional[0].star:
                eng.fail(spec, original, "device index argument")
                return updated
            if eng.in_scope(original, "device_type"):
                device_args = [
                    cst.Arg(
                        cst.Name("device_type"),
                        comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                    ),
                    cst.Arg(positional[0].value),
                ]
            elif not _on_module(eng, original) and _int_index(eng, original.args[0].value):
                device_args = [cst.Arg(positional[0].value)]
            else:
                eng.fail(spec, original, "device index argument")
                return updated
            eng.add_needed_import("torch", node=original)
            dev = positional[0].with_changes(
                value=cst.Call(cst.parse_expression("torch.device"), device_args)
            )
            eng.done(spec, original)
            return updated.with_changes(
                func=updated.func.with_changes(attr=cst.Name("to")), args=(dev, *updated.args[1:])
            )
        line = eng.line(original)
        if _own_cuda(eng, original):
            eng.fail(spec, original, "a project class with its own `cuda()` method")
            return updated
        if eng.in_scope(original, "device") and not eng.ctx.pinned(line, "device"):
            device: cst.BaseExpression = cst.Name("device")
        elif pytorch_module(eng.ctx) or _on_module(eng, original):
            eng.fail(spec, original, "no `device` in scope")
            return updated
        else:  # a user's module: the current accelerator, when the call runs
            device = expr(eng, spec, original, CURRENT, API_TYPE)
        dev = cst.Arg(
            device,
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


def _foreign_keyword(call: cst.Call) -> str:
    """A keyword of ``call`` that ``to`` would not take as ``cuda()`` does: ``device=`` (``to``
    would take it twice), or a name neither has (controlnet-aux's ``network.cuda(device_id=...)``,
    round 42); "" where there is none."""
    names = sorted({a.keyword.value for a in call.args if a.keyword is not None} - _PASSED)
    return names[0] if names else ""


def _own_cuda(eng, call: cst.Call) -> bool:
    """The receiver may be an instance of a project class that defines ``cuda`` itself."""
    text = cst.Module(body=[]).code_for_node(call.func.value)
    return own_cuda(eng.ctx, eng.line(call), text) is not None


def _on_module(eng, call: cst.Call) -> bool:
    """The receiver's root name is an import (``tvm.cuda(i)``: a module's own function named
    ``cuda``, not a tensor or ``nn.Module`` method)."""
    root = call.func.value
    while isinstance(root, cst.Attribute):  # a call's or an item's result is a value
        root = root.value
    if not isinstance(root, cst.Name):
        return False
    found = eng.ctx.binding(eng.line(call), root.value)
    return bool(found) and "import" in found[1]


def _int_index(eng, value: cst.BaseExpression) -> bool:
    """``value`` is always an int: ``values.is_index`` (which also admits None) and not None
    anywhere it could come from (no ``None`` constant in it, and a plain name's every binding
    in the file is not None)."""
    if m.matches(value, m.Name("None")):
        return False
    line = eng.line(value)
    source = cst.Module([]).code_for_node(value)
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return False
    if not (is_index(eng.ctx, source, line) or _rank_parameter(eng.ctx, node, line)):
        return False
    return not _may_be_none(eng.ctx, node, line)


_RANKS = frozenset({"rank", "local_rank"})  # torch.distributed's word for a process's int id


def _rank_parameter(ctx, node: ast.AST, line: int) -> bool:
    """``node`` is a parameter ``rank``/``local_rank`` of the enclosing function, unannotated or
    annotated ``int`` (or ``Optional[int]``/``int | None``), with an int or None default or none,
    never rebound in the function: torch.distributed's rank, an int (None is judged apart)."""
    if not (isinstance(node, ast.Name) and node.id in _RANKS):
        return False
    fn = ctx.scope_at(line).node
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = param_defaults(fn)
    arg = next((x for x in positional + a.kwonlyargs if x.arg == node.id), None)
    if arg is None:
        return False
    if arg.annotation is not None and ast.unparse(arg.annotation) not in (
        "int",
        "Optional[int]",
        "int | None",
    ):
        return False
    default = defaults.get(node.id)
    if default is not None and not (
        isinstance(default, ast.Constant) and (default.value is None or type(default.value) is int)
    ):
        return False
    return not any(
        isinstance(n, ast.Name) and n.id == node.id and not isinstance(n.ctx, ast.Load)
        for n in ast.walk(fn)
    )


def _is_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _may_be_none(ctx, node: ast.AST, line: int) -> bool:
    """``node`` (read at ``line``) may evaluate to None: a None or an ``.index`` in it, or a
    name (``x``, ``self.x``) the file ever binds to an expression holding None or declares with
    a None default, unless the read is inside ``if <name> is not None:``."""
    if any(
        _is_none(n) or (isinstance(n, ast.Attribute) and n.attr == "index") for n in ast.walk(node)
    ):
        return True  # None, or a device's ``.index`` (None for ``torch.device("cuda")``)
    names = {ast.unparse(n) for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute))}
    for name in names - _checked_not_none(ctx, line):
        for n in ctx.nodes:
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if n.value is not None and any(ast.unparse(t) == name for t in targets):
                    if any(_is_none(v) for v in ast.walk(n.value)):
                        return True
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = n.args
                positional = a.posonlyargs + a.args
                pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults))
                pairs += list(zip(a.kwonlyargs, a.kw_defaults))
                if any(arg.arg == name and _is_none(d) for arg, d in pairs):
                    return True
    return False


def _checked_not_none(ctx, line: int) -> set[str]:
    """Names tested ``is not None`` by an ``if`` whose body holds ``line``."""
    out: set[str] = set()
    for n in ctx.nodes:
        if (
            isinstance(n, ast.If)
            and n.body
            and n.body[0].lineno <= line <= (n.body[-1].end_lineno or n.body[-1].lineno)
            and isinstance(n.test, ast.Compare)
            and len(n.test.ops) == 1
            and isinstance(n.test.ops[0], ast.IsNot)
            and _is_none(n.test.comparators[0])
        ):
            out.add(ast.unparse(n.test.left))
    return out
