"""``cuda-check``: an explicit device-type comparison with a CUDA string
(``x.device.type == "cuda"``) whose unit says CUDA is meant, not "an accelerator":

- the file defines its own GPU kernels (``@triton.jit``, ``[checks] kernels``): the check
  validates the inputs those kernels take (``t.device.type == "cuda"`` before a Triton launch),
  and so does a tensor's ``.is_cuda`` there (OLMo-core's ``if not x.is_cuda: return
  _swiglu_torch(...)`` before its Triton launch: the fallback is what other devices run);
- the check is an arm of a per-device dispatch that ends in ``else`` (``if t == "cpu": ...
  elif t == "cuda": ... else: ...``): the code gives other devices their own answer on purpose;
- the same subject is compared with another device type in the function (``is_gpu = d.type ==
  "cuda"`` beside ``is_tpu = d.type == "tpu"``): the code enumerates devices;
- the check picks a move to the CPU whose move back, picked by a test of the same subject against
  CUDA in the function, stays (``.to("cpu") if t == "cuda"`` ... ``.to("cuda") if t ==
  "cuda"``): one round trip;
- the check is and-ed with a size threshold (``x.device.type == "cuda" and n_channels < 4``): a
  performance heuristic tuned on CUDA, which a neutral check would apply to other devices.

A plain placement check (``if buffer.device.type == "cuda":`` before copying it) carries no such
evidence: upstream writes those as ``device.type != "cpu"``."""

from __future__ import annotations

import ast

from patches.generate.intent.data import device_types, kernel_decorators
from patches.generate.intent.nodes import CUDA_DEVICE_STR, qualified, span_of
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-check"
SUMMARY = (
    "a device-type check whose unit asks for CUDA (kernel inputs, a per-device dispatch, a "
    "tuned heuristic, a paired test that stays)"
)


def _cuda_string(x) -> bool:
    return (
        isinstance(x, ast.Constant)
        and isinstance(x.value, str)
        and bool(CUDA_DEVICE_STR.fullmatch(x.value))
    )


def _threshold(x) -> bool:
    """``n < 4``, ``x.numel() >= 2**20``: an ordering against a number (a bounds check of a
    device's index, ``0 <= d.index < count``, is not one)."""
    return (
        isinstance(x, ast.Compare)
        and not any(
            isinstance(c, ast.Attribute) and c.attr == "index" for c in [x.left, *x.comparators]
        )
        and all(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in x.ops)
        and any(
            isinstance(c, (ast.Constant, ast.BinOp))
            and not isinstance(getattr(c, "value", 0), (str, bool))
            for c in [x.left, *x.comparators]
        )
    )


_SEEN: dict[int, tuple[ast.AST, str | None]] = {}


def kernels(ctx) -> str | None:
    """The first decorator of the file that defines a GPU kernel (``triton.jit``), else None."""
    hit = _SEEN.get(id(ctx.tree))
    if hit is None or hit[0] is not ctx.tree:
        if len(_SEEN) > 64:
            _SEEN.clear()
        hit = _SEEN[id(ctx.tree)] = (ctx.tree, _first_kernel(ctx))
    return hit[1]


def _first_kernel(ctx) -> str | None:
    wanted = kernel_decorators()
    for node in ctx.nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                name = qualified(ctx, dec.func if isinstance(dec, ast.Call) else dec)
                if name in wanted:
                    return f"{name} ({node.name}, line {node.lineno})"
    return None


def _is_cuda(node) -> bool:
    """``node`` is a tensor's ``.is_cuda``."""
    return isinstance(node, ast.Attribute) and node.attr == "is_cuda"


def _device_test(test) -> bool:
    """A comparison (or ``and`` of one) with a plain device-type string."""
    for x in ast.walk(test):
        if isinstance(x, ast.Compare) and any(
            isinstance(c, ast.Constant) and c.value in device_types()
            for c in [x.left, *x.comparators]
        ):
            return True
    return False


def _dispatch_arm(p: Probe, node) -> bool:
    """``node`` is in the test of an ``if``/``elif`` of a chain that tests a device type in
    another arm and ends in a plain ``else``."""
    test, arm = node, p.index.parents.get(node)
    while arm is not None and not isinstance(arm, ast.stmt):
        test, arm = arm, p.index.parents.get(arm)
    if not (isinstance(arm, ast.If) and arm.test is test):
        return False
    head = p.index.parents.get(arm)
    before = isinstance(head, ast.If) and head.orelse == [arm] and _device_test(head.test)
    after = len(arm.orelse) == 1 and isinstance(arm.orelse[0], ast.If)
    if not (before or (after and _device_test(arm.orelse[0].test))):
        return False
    while len(arm.orelse) == 1 and isinstance(arm.orelse[0], ast.If):
        arm = arm.orelse[0]
    return bool(arm.orelse)


def _subject(cmp: ast.Compare) -> str | None:
    sides = [x for x in [cmp.left, *cmp.comparators] if not isinstance(x, ast.Constant)]
    return ast.unparse(sides[0]) if len(sides) == 1 else None


def _other_device(p: Probe, cmp: ast.Compare) -> str | None:
    """Another device type (not CPU, not CUDA) the same subject is compared with nearby."""
    subject = _subject(cmp)
    scope = p.defs[0] if p.defs else p.ctx.tree
    for x in ast.walk(scope) if subject else ():
        if isinstance(x, ast.Compare) and x is not cmp and _subject(x) == subject:
            for c in [x.left, *x.comparators]:
                value = getattr(c, "value", None)
                if value in device_types() and value != "cpu" and not _cuda_string(c):
                    return f"{subject} is also compared with {value!r} (line {x.lineno})"
    return None


def _kept_twin(p: Probe, cmp: ast.Compare) -> str | None:
    """The check picks a move to the CPU, and another test of the same subject against a CUDA
    string in the function picks the move back to CUDA and stays (MONAI's ``_cat_inputs``:
    ``.to("cpu") if input_type == "cuda"`` on the way in, ``.to("cuda") if input_type ==
    "cuda"`` on the way out): the two are one round trip. Independent checks of one subject
    (a cast, a pin, a cuDNN setting) are not."""
    subject = _subject(cmp)
    scope = p.functions[0] if p.functions else None
    if not subject or scope is None or not _moves(p, cmp, _to_cpu):
        return None
    for x in ast.walk(scope):
        if isinstance(x, ast.Compare) and x is not cmp and _subject(x) == subject:
            if any(_cuda_string(c) for c in [x.left, *x.comparators]) and _moves(p, x, _to_cuda):
                hits = p.remaining(span_of(x), p.own)
                if hits:
                    return f"{subject} is tested against CUDA again at line {x.lineno}, which stays"
    return None


def _to_cpu(call: ast.Call) -> bool:
    return _move(call, "cpu")


def _to_cuda(call: ast.Call) -> bool:
    return _move(call, "cuda")


def _move(call: ast.Call, device: str) -> bool:
    """``x.cpu()`` / ``x.cuda()``, or ``x.to("cpu", ...)`` / ``x.to("cuda", ...)``."""
    f = call.func
    if not isinstance(f, ast.Attribute):
        return False
    if f.attr == device:
        return True
    first = call.args[0] if call.args else None
    return f.attr == "to" and isinstance(first, ast.Constant) and first.value == device


def _moves(p: Probe, cmp: ast.Compare, kind) -> bool:
    """The ``if``/``IfExp`` that ``cmp`` is the test of (or a term of) selects such a move."""
    n = cmp
    while n is not None and not isinstance(n, ast.stmt):
        parent = p.index.parents.get(n)
        if isinstance(parent, (ast.If, ast.IfExp)) and parent.test is n:
            body = parent.body if isinstance(parent.body, list) else [parent.body]
            return any(isinstance(c, ast.Call) and kind(c) for b in body for c in ast.walk(b))
        n = parent
    return False


def detect(p: Probe) -> list[Evidence]:
    kernel = kernels(p.ctx)
    if _is_cuda(p.node) and kernel:  # ``if not x.is_cuda: return fallback(x)``
        return [Evidence(KIND, p.f.line, f"the file defines GPU kernels: {kernel}")]
    n, parent = p.node, None
    while n is not None and not isinstance(n, ast.stmt):
        parent = p.index.parents.get(n)
        if isinstance(n, ast.Compare):
            break
        n = parent
    if not isinstance(n, ast.Compare) or not any(_cuda_string(x) for x in [n.left, *n.comparators]):
        return []
    if kernel:
        return [Evidence(KIND, p.f.line, f"the file defines GPU kernels: {kernel}")]
    if any(start <= n.lineno <= end for start, end in p.ctx.blocks):
        return []  # a family rewrites the whole statement (the dispatch) as one unit
    other = _other_device(p, n)
    if other:
        return [Evidence(KIND, p.f.line, other)]
    twin = _kept_twin(p, n)
    if twin:
        return [Evidence(KIND, p.f.line, twin)]
    if _dispatch_arm(p, n):
        return [Evidence(KIND, p.f.line, "an arm of a per-device dispatch with an else")]
    if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
        for v in parent.values:
            if v is not n and _threshold(v):
                return [
                    Evidence(KIND, p.f.line, "and-ed with a size threshold (a tuned heuristic)")
                ]
    return []
