"""The per-backend sync helper of fast-inference repos (gpt-fast's ``device_sync``), found by
shape::

    if "cuda" in device:                              if torch.device(device).type != "cpu":
        torch.cuda.synchronize(device)          ->        torch.accelerator.synchronize(device)
    elif ("cpu" in device) or ("mps" in device):
        pass
    else:
        print(f"device={device} is not yet suppported")

The first test asks whether ``X`` names CUDA (``"cuda" in X``, ``X.startswith("cuda")``,
``X == "cuda"``); its body is the sync alone. Every later branch only tests ``X`` against
device names and does nothing (``pass``) or reports the device unsupported (a ``print`` or a
warning). ``torch.accelerator.synchronize`` covers every accelerator, so the chain becomes one
test: sync unless ``X`` is the CPU, which has nothing to wait for.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from patches.generate.intent import Span, is_call, span_of

SYNC = "torch.cuda.synchronize"


@dataclass(frozen=True)
class Dispatch:
    start: int  # the `if` line
    end: int
    sync_line: int
    subject: str  # X, as written
    args: str  # the sync's arguments, as written
    spans: tuple[Span, ...]  # the tests the rewrite removes


def _cuda_test(test: ast.AST) -> ast.AST | None:
    """``"cuda" in X`` / ``X.startswith("cuda")`` / ``X == "cuda"`` -> X."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(op, ast.In) and isinstance(left, ast.Constant) and left.value == "cuda":
            return right
        if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and right.value == "cuda":
            return left
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "startswith"
        and len(test.args) == 1
        and isinstance(test.args[0], ast.Constant)
        and test.args[0].value == "cuda"
    ):
        return test.func.value
    return None


def _names_only(test: ast.AST, subject: str) -> bool:
    """The test reads nothing but ``subject`` and string constants."""
    for n in ast.walk(test):
        if isinstance(n, ast.Name) and n.id != subject.split(".")[0]:
            if not (isinstance(n.ctx, ast.Load) and n.id == "str"):
                return False
        if isinstance(n, ast.Call) and not (
            (isinstance(n.func, ast.Name) and n.func.id == "str")
            or (isinstance(n.func, ast.Attribute) and n.func.attr == "startswith")
        ):
            return False
    return True


def _inert(stmts) -> bool:
    """``pass``, or a report that the device is unsupported (print / warnings.warn)."""
    if len(stmts) != 1:
        return False
    s = stmts[0]
    if isinstance(s, ast.Pass):
        return True
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        f = s.value.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        return name in ("print", "warn")
    return False


def _dispatch(ctx, node: ast.If) -> Dispatch | None:
    subject = _cuda_test(node.test)
    if subject is None or len(node.body) != 1 or not isinstance(node.body[0], ast.Expr):
        return None
    call = node.body[0].value
    if not is_call(ctx, call, SYNC) or call.keywords:
        return None
    x = ast.unparse(subject)
    if any(ast.unparse(a) != x for a in call.args):
        return None
    spans = [span_of(node.test)]
    branch = node
    while branch.orelse:
        if len(branch.orelse) == 1 and isinstance(branch.orelse[0], ast.If):
            branch = branch.orelse[0]
            if not _names_only(branch.test, x) or not _inert(branch.body):
                return None
            spans.append(span_of(branch.test))
            continue
        if not _inert(branch.orelse):
            return None
        break
    args = ", ".join(ast.unparse(a) for a in call.args)
    return Dispatch(node.lineno, node.end_lineno, call.lineno, x, args, tuple(spans))


def dispatches(ctx) -> dict[int, Dispatch]:
    """`if` line -> the sync dispatch starting there."""
    out: dict[int, Dispatch] = {}
    for node in ctx.nodes:
        if isinstance(node, ast.If):
            d = _dispatch(ctx, node)
            if d is not None:
                out[d.start] = d
    return out


def device_type_read(code: str) -> bool:
    """``code`` reads a device's ``.type`` (``device.type``, ``x.device.type``): a device type
    already (never ``"cpu:0"``), to test as it is, not through ``torch.device(device.type).type``,
    the same string. Any other ``.type`` attribute (``opt.type``) may hold a device string with
    an index, or a string, a device or None of unknown kind: those go through ``torch.device``."""
    return code == "device.type" or code.endswith(".device.type")


def replacement(d: Dispatch, sync: str) -> str:
    """``if <the subject's type> != "cpu":`` and the sync (``device_type_read``)."""
    step = "    "
    plain = device_type_read(d.subject)
    subject = d.subject if plain else f"torch.device({d.subject}).type"
    return f'if {subject} != "cpu":\n{step}{sync}({d.args})\n'
