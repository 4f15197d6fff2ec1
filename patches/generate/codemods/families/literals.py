"""Device literals (HN502 ``"cuda"``, HN503 ``torch.device("cuda")``) for the ``device`` in scope.

Only in a device-argument position, and only where a ``device`` (parameter or local, not an
import) is bound before the site: ``torch.zeros(3, device="cuda")`` -> ``device=device``,
``x.to("cuda")`` / ``x.to(torch.device("cuda"))`` -> ``x.to(device)``, and the first positional
argument of a constructor whose first parameter is the device (diffusers' seeded
``torch.Generator("cuda")`` -> ``torch.Generator(device)``). Everything else stays,
with a reason: comparisons (``x.device == torch.device("cuda")`` asks "is this CUDA?" on
purpose), assignments (``device = torch.device("cuda")`` is where a device gets picked), an
index (``"cuda:1"``), messages, and code with no ``device`` to use. A factory with no ``device``
in scope whose result meets a tensor parameter's data takes that tensor's device
(``device=dense.device``: ``operands``).
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.families import operands
from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.held_self import class_device
from patches.generate.intent import CUDA_DEVICE_STR

# Keywords whose value may be any device (str or torch.device) and so may be `device` itself.
DEVICE_KEYWORDS = frozenset({"device", "map_location", "output_device"})
# Methods whose first positional argument is a device.
DEVICE_METHODS = frozenset({"to"})
# Calls whose first parameter is ``device`` (``torch.Generator(device="cpu")``): a positional
# first argument is a device argument too.
DEVICE_CALLS = frozenset({"torch.Generator", "torch._C.Generator"})
# calls whose first argument is a device type (HN502's `calls`; idioms_device's too), and the
# keyword that is one; a device mesh's (``init_device_mesh("cuda", (world_size,))``, the
# tensor-parallel tutorials' shape) takes the same type as the ``device`` a script picks
DEVICE_TYPE_CALLS = frozenset(
    {
        "torch.amp.autocast",
        "torch.autocast",
        "torch.amp.GradScaler",
        "torch.amp.is_autocast_available",
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.distributed.init_device_mesh",
    }
)
DEVICE_TYPE_KEYWORD = "device_type"
PARAM = "a device parameter"  # a positional argument a module function takes as its device
DEFAULTS = "device-defaults"  # HN509's family: the audit reads such an argument as a string
_STRING = "cuda"
_CTOR = "torch.device"


def _string_value(node) -> str | None:
    if not isinstance(node, cst.SimpleString) or node.prefix.lower().strip("r"):
        return None
    value = node.evaluated_value
    return value if isinstance(value, str) else None


class DeviceLiteral(Family):
    """HN502/HN503 in a device-argument position -> ``device`` (see the module docstring)."""

    name = "device-literal"

    def on_literal(self, eng, original, updated):
        specs = [s for s in eng.specs_for(self.name, original) if _STRING in s.names]
        if not specs and _device_argument(eng, original) == PARAM:
            specs = [s for s in eng.specs_for(DEFAULTS, original) if _STRING in s.names]
        if not specs:
            return None
        value = _string_value(original)
        if value is None or CUDA_DEVICE_STR.fullmatch(value) is None:
            return None
        arg = eng.parent(original)
        call = eng.parent(arg) if isinstance(arg, cst.Arg) else None
        if isinstance(call, cst.Call) and eng.qualnames(call.func) == {_CTOR}:
            return None  # torch.device("cuda"): HN503's, rewritten as a whole or not at all
        return self._replace(eng, specs[0], original, value == _STRING)

    def on_call(self, eng, original, updated):
        specs = [s for s in eng.specs_for(self.name, original) if _CTOR in s.names]
        if not specs or eng.qualnames(original.func) != {_CTOR}:
            return None
        args = original.args
        first = _string_value(args[0].value) if args and args[0].keyword is None else None
        if first is None or CUDA_DEVICE_STR.fullmatch(first) is None:
            return None  # torch.device("cpu"), torch.device(name): not this finding
        plain = len(args) == 1 and not args[0].star and first == _STRING
        return self._replace(eng, specs[0], original, plain)

    def _replace(self, eng, spec, original, plain: bool):
        """``device`` for ``original`` if it is a plain CUDA device in a device argument."""
        parent = eng.parent(original)
        if isinstance(parent, cst.ComparisonTarget) or isinstance(parent, cst.Comparison):
            eng.fail(spec, original, "compared with: asks whether it is CUDA, kept")
            return None
        if isinstance(parent, cst.Param):
            eng.fail(spec, original, "a parameter's default: the API's own choice, kept")
            return None
        where = _device_argument(eng, original)
        line = eng.line(original)
        said = any(f[:2] == (spec.rule, line) for f in eng.outcome.failed)
        if where is None and device_type_arg(eng, eng.parent(original)):
            if type_source(eng.ctx, line) is not None or said:
                return None  # a device is held, or device-defaults said why it is left
            call = eng.parent(eng.parent(original))
            name = cst.Module([]).code_for_node(call.func).rsplit(".", 1)[-1]
            eng.fail(spec, original, f"no device in scope for {name}'s device type")
            return None
        if where is None:
            if not said:  # device-defaults' reason is the more precise one
                eng.fail(spec, original, "not a device argument")
            return None
        if not plain:
            eng.fail(spec, original, "device index")
            return None
        if not eng.ctx.bound_before(eng.line(original), "device"):
            return self._operand(eng, spec, original, where)
        if isinstance(original, cst.Call):
            eng.remove_unused_import_by_node(original.func)
        eng.done(spec, original)
        return cst.Name("device")

    @staticmethod
    def _operand(eng, spec, original, where: str):
        """``device=<p>.device`` for a factory whose result meets a tensor derived from the one
        parameter ``p`` (``operands.factory_at``), else ``self.device`` in a method of a class
        that holds its device (``own_device.class_device``: set, never to None, and set by then
        where the method sets it), else left."""
        line = eng.line(original)
        module = module_type_at(eng.ctx, line) if where in ("device", ".to", PARAM) else None
        if module is not None:  # a test module's own DEVICE_TYPE (``module_device``)
            eng.done(spec, original)
            return cst.Name(module)
        param = operands.factory_at(eng.ctx, line) if where == "device" else None
        if param is None and class_device(eng.ctx, line):
            param = "self"  # a method of a class that holds its device (set by then)
        if param is None:
            eng.fail(spec, original, "no `device` variable bound before it in scope")
            return None
        if isinstance(original, cst.Call):
            eng.remove_unused_import_by_node(original.func)
        eng.done(spec, original)
        return cst.Attribute(cst.Name(param), cst.Name("device"))


def module_type_at(ctx, line: int) -> str | None:
    """The test module's own device type name for a plain ``"cuda"`` device on ``line``, where
    ``module_device`` writes that line for the module (its ``_find`` records the places), else
    None."""
    name, places = getattr(ctx, "module_device_sites", (None, ()))
    return name if line in places else None


def _device_argument(eng, node) -> str | None:
    """The keyword or ``.method`` whose device argument ``node`` is, else None."""
    arg = eng.parent(node)
    if not isinstance(arg, cst.Arg) or arg.star:
        return None
    if arg.keyword is not None:
        return arg.keyword.value if arg.keyword.value in DEVICE_KEYWORDS else None
    call = eng.parent(arg)
    if not isinstance(call, cst.Call) or not call.args:
        return None
    if isinstance(call.func, cst.Name) and arg in call.args:
        index = call.args.index(arg)
        spread = any(a.star or a.keyword is not None for a in call.args[:index])
        if not spread and device_param(eng.ctx.tree, call.func.value) == index:
            return PARAM
    if call.args[0] is not arg:
        return None
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in DEVICE_METHODS:
        return "." + call.func.attr.value
    return "device" if device_call_arg(eng, arg) else None


def device_param(tree: ast.Module, name: str) -> int | None:
    """The position of the ``device`` parameter of ``name``, a function ``tree`` defines at
    module level, else None."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            params = [p.arg for p in (*node.args.posonlyargs, *node.args.args)]
            return params.index("device") if "device" in params else None
    return None


def device_call_arg(eng, arg: cst.Arg) -> bool:
    """``arg`` is the positional device of a ``DEVICE_CALLS`` call (``torch.Generator("cuda")``)."""
    call = eng.parent(arg)
    return (
        isinstance(call, cst.Call)
        and arg.keyword is None
        and call.args[0] is arg
        and bool(eng.qualnames(call.func) & DEVICE_CALLS)
    )


def device_type_arg(eng, arg) -> bool:
    """``arg`` is a device type: ``device_type=`` or the first positional argument of a
    ``DEVICE_TYPE_CALLS`` call (``autocast("cuda")``, ``GradScaler("cuda")``)."""
    if not isinstance(arg, cst.Arg) or arg.star:
        return False
    if arg.keyword is not None:
        return arg.keyword.value == DEVICE_TYPE_KEYWORD
    call = eng.parent(arg)
    return (
        isinstance(call, cst.Call)
        and call.args[0] is arg
        and bool(eng.qualnames(call.func) & DEVICE_TYPE_CALLS)
    )


def _chain(node: ast.expr) -> str | None:
    """``config.device`` for a plain name/attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _device_keywords(fn: ast.AST) -> dict[str, ast.expr]:
    """What the calls under ``fn`` hand as ``device=``, or as an argument that is an object's
    ``device`` attribute (MONAI's ``engine.prepare_batch(batchdata, engine.state.device)``), by
    its code."""
    out = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Call):
            out.update((ast.unparse(k.value), k.value) for k in n.keywords if k.arg == "device")
            out.update(
                (ast.unparse(a), a)
                for a in n.args
                if isinstance(a, ast.Attribute) and a.attr == "device"
            )
    return out


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def type_source(ctx, line: int) -> str | None:
    """What a device type can be read from at ``line``: ``device_type`` bound before it, else
    ``device``, else the device the function holds (``held_device``); None where none is."""
    for name in ("device_type", "device"):
        if ctx.bound_before(line, name):
            return name
    return checked_device(ctx, line) or held_device(ctx, line)


def checked_device(ctx, line: int) -> str | None:
    """The device a test of the innermost ``if`` around ``line`` asks about (``if
    self.device.type == "cuda":`` -> ``self.device``; ``if x.is_cuda:`` -> ``x.device``): its
    body runs on that device (lmms-eval's MMaDA wrapper autocasts under its own device check)."""
    around = [
        n
        for n in ctx.nodes
        if isinstance(n, ast.If) and n.body[0].lineno <= line <= n.body[-1].end_lineno
    ]
    if not around:
        return None
    test = max(around, key=lambda n: n.lineno).test
    if isinstance(test, ast.Attribute) and test.attr == "is_cuda":
        subject = _chain(test.value)
        return f"{subject}.device" if subject and "cuda" not in subject.lower() else None
    if not (
        isinstance(test, ast.Compare)
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.left, ast.Attribute)
        and test.left.attr == "type"
        and any(isinstance(c, ast.Constant) and c.value == "cuda" for c in test.comparators)
    ):
        return None
    subject = _chain(test.left.value)
    return subject if subject and "cuda" not in subject.lower() else None


def module_held(ctx, line: int) -> str | None:
    """The test module's ``DEVICE_TYPE`` where the function around ``line`` hands one device,
    a plain ``"cuda"`` that ``module_device`` moves to that name (axolotl's ``device="cuda"``
    beside ``autocast("cuda")``: a rerun would read the name), else None."""
    scope = ctx.scope_at(line)
    if scope is None or not isinstance(scope.node, _FUNCTIONS):
        return None
    held = list(_device_keywords(scope.node).values())
    if len(held) != 1 or not isinstance(held[0], ast.Constant) or held[0].value != "cuda":
        return None
    return module_type_at(ctx, held[0].lineno)


def held_device(ctx, line: int) -> str | None:
    """The device the function around ``line`` holds: the one expression its calls (else its
    enclosing function's) hand as ``device=`` (ignite's ``prepare_batch(batch,
    device=config.device)``) or as an argument that is some object's ``.device``, where that is
    a plain name/attribute chain (``config.device``, ``self.device``) that names no CUDA and
    whose head resolves at ``line`` to a parameter or an assignment, not an import. Else None:
    several device expressions, a call's result, or none."""
    scope, held = ctx.scope_at(line), {}
    for _ in range(2):  # the function, then the one around it
        if scope is None or not isinstance(scope.node, _FUNCTIONS):
            return None
        held = _device_keywords(scope.node)
        if held:
            break
        scope = scope.parent
    if len(held) != 1:
        return None
    chain = _chain(next(iter(held.values())))
    if chain is None or "cuda" in chain.lower() or _host_device(scope.node, chain):
        return None
    head = chain.split(".")[0]
    found = ctx.binding(line, head)
    if found is None or found[1] != {"other"}:
        return None
    local = found[0] is ctx.scope_at(line)
    return chain if not local or ctx.bound_before(line, head) else None


def _host_device(fn: ast.AST, chain: str) -> bool:
    """``chain`` is the host, not the device the code computes on: spelled as the CPU
    (``cpu``, ``self.offload_cpu``), or a name ``fn`` binds to the CPU (thunder's checkpointing
    ``cpu = torch.device("cpu")``, handed as ``t.to(device=cpu)`` for offload)."""
    if "cpu" in chain.rsplit(".", 1)[-1].lower():
        return True
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and any(_chain(t) == chain for t in n.targets):
            if any(isinstance(c, ast.Constant) and c.value == "cpu" for c in ast.walk(n.value)):
                return True
    return False
