"""The device-pick block (HN101 with its HN502/HN503 literals), the most common idiom of training
scripts, rewritten as one unit::

    if torch.cuda.is_available():                   device = (
        device = "cuda"                                 torch.accelerator.current_accelerator().type
    elif torch.backends.mps.is_available():   ->        if torch.accelerator.is_available() else "cpu"
        device = "mps"                              )   # on one line
    else:
        device = "cpu"

``torch.accelerator.current_accelerator()`` is CUDA on a CUDA machine, MPS on a Mac, XPU on an
Intel GPU: the ``elif`` branches that only name another backend are what it already answers, so
they go. Shapes: ``if``/``elif``*/``else`` (one assignment) and, after ``device = "cpu"``,
``if``/``elif``* with no ``else`` (the accelerator branch alone stays). The values are strings
(``"cuda"``) or devices (``torch.device("cuda")``), each branch one assignment to the same
target. A branch doing anything else (``torch.mps.manual_seed``, a print) is backend-specific:
the block is not this shape, and its ``is_available()`` is left to the gate as before.

The expression form and a function that is only the pick by returns: ``pick_arms``.

The return form, a project's ``get_device()`` helper: each branch a ``return`` of the value
instead of an assignment (target ``RETURN``), the CPU either the ``else`` or the ``return``
right after the ``if`` (which stays, like ``device = "cpu"`` before the assignment form)::

    if torch.cuda.is_available():                   if torch.accelerator.is_available():
        if gpu is not None:                             if gpu is not None:
            return torch.device(f"cuda:{gpu}")  ->          return torch.device(<acc>.type, gpu)
        return torch.device("cuda")                     return torch.accelerator.current_accelerator()
    return torch.device("cpu")                      return torch.device("cpu")
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from patches.generate.intent import Span, cuda_literal, is_call, span_of

IS_AVAILABLE = "torch.cuda.is_available"
# Availability predicates of the other accelerators a block may name, and their device type.
OTHER_BACKENDS = {
    "torch.backends.mps.is_available": "mps",
    "torch.mps.is_available": "mps",
    "torch.xpu.is_available": "xpu",
    "torch.npu.is_available": "npu",
    "torch.hpu.is_available": "hpu",
    "torch.mtia.is_available": "mtia",
}


@dataclass(frozen=True)
class Block:
    start: int  # the `if` line
    end: int  # the block's last line
    target: str  # the assigned name, as written (`device`, `args.device`)
    kind: str  # "str" (device = "cuda") or "device" (device = torch.device("cuda"))
    has_else: bool  # False: `device = "cpu"` comes before and the block has no `else`
    spans: tuple[Span, ...]  # what the rewrite removes besides the `if` test: the other tests
    arm: str = ""  # the CUDA arm's new text where it picks an index itself (``_indexed_arm``)
    call: int = 0  # the CUDA check's line where it is not the `if` line (``pick_arms``)
    # (first, last) line of each statement of a unit of several (``pick_arms``' function form)
    stmts: tuple[tuple[int, int], ...] = ()

    @property
    def call_line(self) -> int:
        """HN101's line: the finding the unit is rewritten with."""
        return self.call or self.start


def _value(ctx, node: ast.AST) -> tuple[str, str] | None:
    """``"x"`` -> ("str", "x"); ``torch.device("x")`` -> ("device", "x"); else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "str", node.value
    if (
        is_call(ctx, node, "torch.device")
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return "device", node.args[0].value
    return None


def _assign(stmts) -> ast.Assign | None:
    if len(stmts) == 1 and isinstance(stmts[0], ast.Assign) and len(stmts[0].targets) == 1:
        return stmts[0]
    return None


RETURN = "return"  # the target of the return form


def _result(stmts) -> tuple[str, ast.AST] | None:
    """A branch that only gives its value: ``t = v`` -> (``t``, v); ``return v`` -> (RETURN, v)."""
    a = _assign(stmts)
    if a is not None:
        return ast.unparse(a.targets[0]), a.value
    if len(stmts) == 1 and isinstance(stmts[0], ast.Return) and stmts[0].value is not None:
        return RETURN, stmts[0].value
    return None


def _siblings(ctx, node: ast.stmt) -> tuple[list, int] | None:
    """The statement list holding ``node`` and its position there."""
    for parent in ctx.nodes:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if isinstance(stmts, list) and node in stmts:
                return stmts, stmts.index(node)
    return None


def _other_backend(ctx, test: ast.AST) -> str | None:
    """The device type an ``elif`` test asks for: ``torch.backends.mps.is_available()``, also
    behind ``hasattr(torch.backends, "mps") and ...``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and len(test.values) == 2:
        probe, test = test.values
        if not (isinstance(probe, ast.Call) and getattr(probe.func, "id", "") == "hasattr"):
            return None
    if not (isinstance(test, ast.Call) and not test.args and not test.keywords):
        return None
    for name, dev in OTHER_BACKENDS.items():
        if is_call(ctx, test, name):
            return dev
    return None


def _preceded_by_cpu(ctx, node: ast.If, target: str) -> bool:
    """The statement right before ``node`` is ``<target> = "cpu"`` (or a cpu torch.device); in
    the return form, the statement right after it is ``return "cpu"`` (every branch of the
    ``if`` returns, so that one is its ``else``)."""
    found = _siblings(ctx, node)
    if found is None:
        return False
    stmts, i = found
    near = stmts[i + 1 : i + 2] if target == RETURN else (stmts[i - 1 : i] if i else [])
    prev = _result(near)
    if prev is None or prev[0] != target:
        return False
    value = _value(ctx, prev[1])
    return value is not None and value[1] == "cpu"


def _block(ctx, node: ast.If) -> Block | None:
    test = node.test
    if not (isinstance(test, ast.Call) and not test.args and not test.keywords):
        return None
    if not is_call(ctx, test, IS_AVAILABLE):
        return None
    first = _result(node.body)
    arm = _indexed_arm(ctx, node.body) if first is None else None
    if arm is not None:
        target, kind, spans, arm_text = arm[0], "device", list(arm[1]), arm[2]
    else:
        if first is None or cuda_literal(ctx, first[1]) is None:
            return None
        value = _value(ctx, first[1])
        if value is None or value[1] != "cuda":
            return None  # an index ("cuda:1") picks a device, not the accelerator
        target, kind, arm_text = first[0], value[0], ""
        spans = [span_of(first[1])]
    branch = node
    while len(branch.orelse) == 1 and isinstance(branch.orelse[0], ast.If):
        branch = branch.orelse[0]
        dev, assign = _other_backend(ctx, branch.test), _result(branch.body)
        if dev is None or assign is None or assign[0] != target:
            return None
        if _value(ctx, assign[1]) != (kind, dev):
            return None
        spans += [span_of(branch.test), span_of(assign[1])]
    if branch.orelse:
        last = _result(branch.orelse)
        if last is None or last[0] != target:
            return None
        if _value(ctx, last[1]) != (kind, "cpu"):
            return None
        has_else = True
    else:
        if not _preceded_by_cpu(ctx, node, target):
            return None
        has_else = False
    if arm_text and not has_else and target != RETURN:
        return None
    return Block(node.lineno, node.end_lineno, target, kind, has_else, tuple(spans), arm_text)


def _cuda_index(ctx, value: ast.AST) -> str | None:
    """``torch.device("cuda")`` -> ""; ``torch.device("cuda:{}".format(i))``,
    ``torch.device(f"cuda:{i}")``, ``torch.device("cuda", i)`` -> the source of ``i``."""
    if not (is_call(ctx, value, "torch.device") and not value.keywords and value.args):
        return None
    a = value.args
    if len(a) == 1 and isinstance(a[0], ast.Constant) and a[0].value == "cuda":
        return ""
    if len(a) == 2 and isinstance(a[0], ast.Constant) and a[0].value == "cuda":
        return ast.unparse(a[1])
    arg = a[0] if len(a) == 1 else None
    if (
        isinstance(arg, ast.Call)
        and isinstance(arg.func, ast.Attribute)
        and arg.func.attr == "format"
        and isinstance(arg.func.value, ast.Constant)
        and arg.func.value.value == "cuda:{}"
        and len(arg.args) == 1
        and not arg.keywords
    ):
        return ast.unparse(arg.args[0])
    if (
        isinstance(arg, ast.JoinedStr)
        and len(arg.values) == 2
        and isinstance(arg.values[0], ast.Constant)
        and arg.values[0].value == "cuda:"
        and isinstance(arg.values[1], ast.FormattedValue)
        and arg.values[1].conversion == -1
        and arg.values[1].format_spec is None
    ):
        return ast.unparse(arg.values[1].value)
    return None


def _indexed_arm(ctx, body) -> tuple[str, tuple[Span, ...], str] | None:
    """The CUDA arm ``if args.gpu: d = torch.device("cuda:{}".format(args.gpu))`` / ``else: d =
    torch.device("cuda")`` (the ImageNet example's; in the return form also ``if gpu is not
    None: return torch.device(f"cuda:{gpu}")`` / ``return torch.device("cuda")``): (target, its
    values' spans, its new text, each value that device of the accelerator)."""
    if len(body) == 2 and isinstance(body[0], ast.If) and not body[0].orelse:
        inner, rest = body[0], body[1:]  # `if c: return a` / `return b`
    elif len(body) == 1 and isinstance(body[0], ast.If):
        inner, rest = body[0], body[0].orelse
    else:
        return None
    a, b = _result(inner.body), _result(rest)
    if a is None or b is None or a[0] != b[0] or (rest is not inner.orelse and a[0] != RETURN):
        return None
    target, lines = a[0], []
    for _, value in (a, b):
        index = _cuda_index(ctx, value)
        if index is None:
            return None
        new = f"torch.device({CURRENT_DEVICE}.type, {index})" if index else CURRENT_DEVICE
        lines.append(f"    return {new}" if target == RETURN else f"    {target} = {new}")
    test = f"if {ast.unparse(inner.test)}:\n{lines[0]}\n"
    text = test + (f"else:\n{lines[1]}\n" if rest is inner.orelse else f"{lines[1][4:]}\n")
    return target, (span_of(a[1]), span_of(b[1])), text


def value_text(kind: str, current: str, api: bool) -> str:
    """The accelerator's device (``kind`` "device") or type, the CPU's without one."""
    if kind == "device":
        if api:
            return "torch.device(accelerator_api.device_type())"
        return 'torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")'
    if api:
        return "accelerator_api.device_type()"
    return f'{current} if torch.accelerator.is_available() else "cpu"'


def blocks(ctx) -> dict[int, Block]:
    """call line -> the device-pick block whose CUDA check is there."""
    out: dict[int, Block] = {}
    for node in ctx.nodes:
        if isinstance(node, ast.If):
            b = _block(ctx, node)
            if b is not None:
                out[b.call_line] = b
    return out


def replacement(b: Block, current: str, api: bool) -> str:
    """The block's new text. ``current``: the accelerator's device type expression; ``api``: the
    accelerator_api target (``accelerator_api.device_type()`` is "cpu" without an
    accelerator)."""
    if b.arm:
        arm = "".join(f"    {ln}\n" for ln in b.arm.splitlines())
        cpu = 'torch.device("cpu")'
        head = f"if torch.accelerator.is_available():\n{arm}"
        if not b.has_else:  # the return form's `return torch.device("cpu")` stays below
            return head
        give = "return " if b.target == RETURN else f"{b.target} = "
        return f"{head}else:\n    {give}{cpu}\n"
    value = value_text(b.kind, current, api)
    give = "return " if b.target == RETURN else f"{b.target} = "
    if b.has_else or (api and b.target != RETURN):
        return f"{give}{value}\n"
    # `device = "cpu"` stays above (`return "cpu"` below): only the accelerator's branch remains.
    inner = "current_accelerator()" if b.kind == "device" else "current_accelerator().type"
    if api:
        inner = "device_type()" if b.kind == "str" else None
        inner = (
            f"accelerator_api.{inner}" if inner else "torch.device(accelerator_api.device_type())"
        )
        return f"if accelerator_api.is_available():\n    {give}{inner}\n"
    return f"if torch.accelerator.is_available():\n    {give}torch.accelerator.{inner}\n"


# -- the flag form: the pick made from names the script bound before ------------------------
#
#     use_cuda = not args.no_cuda and torch.cuda.is_available()
#     use_mps = not args.no_mps and torch.backends.mps.is_available()
#     if use_cuda:                                  if use_cuda:
#         device = torch.device("cuda")      ->         device = torch.accelerator.current_accelerator()
#     elif use_mps:                                 else:
#         device = torch.device("mps")                  device = torch.device("cpu")
#     else:
#         device = torch.device("cpu")
#
# (the classic examples' shape). ``use_cuda`` asks for the accelerator once its check is
# ``torch.accelerator.is_available()`` (the same step); the ``elif`` arms that only name another
# backend go as in the block form, and an arm's name (``use_mps``) whose one use was that test
# goes with it (its value only reads flags and asks for availability).


@dataclass(frozen=True)
class FlagBlock:
    call_line: int  # the `use_cuda = ... torch.cuda.is_available()` line (HN101's site)
    start: int  # the `if use_cuda:` line
    end: int
    target: str
    kind: str
    flag: str  # use_cuda
    spans: tuple[Span, ...]  # the tests and values the rewrite removes
    drop: tuple[tuple[int, int], ...]  # the other arms' names' assignments, deleted


def _flag_value(ctx, value: ast.AST, available) -> bool:
    """``<flags> and <available()>`` (in any order): flags are attribute reads, maybe negated."""
    if not (isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And)):
        return False
    calls = [v for v in value.values if isinstance(v, ast.Call)]
    if len(calls) != 1 or not available(calls[0]):
        return False
    for v in value.values:
        if v is calls[0]:
            continue
        v = v.operand if isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not) else v
        if not isinstance(v, ast.Attribute) or not isinstance(v.value, ast.Name):
            return False
    return True


def _uses(ctx, name: str) -> list[ast.AST]:
    """Every node naming ``name`` in the file (loads and stores)."""
    return [n for n in ctx.nodes if isinstance(n, ast.Name) and n.id == name]


def _flag_block(ctx, assign: ast.Assign, stmts: list, i: int) -> FlagBlock | None:
    flag = assign.targets[0].id
    uses = _uses(ctx, flag)
    stores = [n for n in uses if not isinstance(n.ctx, ast.Load)]
    if len(stores) != 1:
        return None
    node = next(
        (s for s in stmts[i + 1 :] if isinstance(s, ast.If) and ast.unparse(s.test) == flag), None
    )
    if node is None:
        return None
    first = _assign(node.body)
    value = _value(ctx, first.value) if first is not None else None
    if value is None or value[1] != "cuda":
        return None
    target, kind = ast.unparse(first.targets[0]), value[0]
    spans: list[Span] = [span_of(node.test), span_of(first.value)]
    drop: list[tuple[int, int]] = []
    branch = node
    while len(branch.orelse) == 1 and isinstance(branch.orelse[0], ast.If):
        branch = branch.orelse[0]
        assign2 = _assign(branch.body)
        other = branch.test.id if isinstance(branch.test, ast.Name) else ""
        binding = next(
            (
                s
                for s in stmts[:i] + stmts[i + 1 :]
                if isinstance(s, ast.Assign)
                and [ast.unparse(t) for t in s.targets] == [other]
                and s.lineno < node.lineno
            ),
            None,
        )
        dev = None
        if binding is not None:
            for name, d in OTHER_BACKENDS.items():
                if _flag_value(ctx, binding.value, lambda c, n=name: is_call(ctx, c, n)):
                    dev = d
        if dev is None or assign2 is None or ast.unparse(assign2.targets[0]) != target:
            return None
        if _value(ctx, assign2.value) != (kind, dev):
            return None
        if len(_uses(ctx, other)) == 2:  # its assignment and this test: it goes
            drop.append((binding.lineno, binding.end_lineno))
        spans += [span_of(branch.test), span_of(assign2.value)]
    last = _assign(branch.orelse) if branch.orelse else None
    if last is None or ast.unparse(last.targets[0]) != target:
        return None
    if _value(ctx, last.value) != (kind, "cpu"):
        return None
    return FlagBlock(
        assign.lineno, node.lineno, node.end_lineno, target, kind, flag, tuple(spans), tuple(drop)
    )


def flag_blocks(ctx) -> dict[int, FlagBlock]:
    """call line -> the flag-form pick whose availability check is there."""
    out: dict[int, FlagBlock] = {}
    for parent in ctx.nodes:
        stmts = getattr(parent, "body", None)
        if not isinstance(stmts, list):
            continue
        for i, s in enumerate(stmts):
            if (
                isinstance(s, ast.Assign)
                and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)
                and _flag_value(ctx, s.value, lambda c: is_call(ctx, c, IS_AVAILABLE))
            ):
                b = _flag_block(ctx, s, stmts, i)
                if b is not None:
                    out[b.call_line] = b
    return out


def flag_replacement(b: FlagBlock, api: bool) -> str:
    if api:
        value = (
            "torch.device(accelerator_api.device_type())"
            if b.kind == "device"
            else ("accelerator_api.device_type()")
        )
    else:
        value = CURRENT_DEVICE if b.kind == "device" else f"{CURRENT_DEVICE}.type"
    cpu = 'torch.device("cpu")' if b.kind == "device" else '"cpu"'
    return f"if {b.flag}:\n    {b.target} = {value}\nelse:\n    {b.target} = {cpu}\n"


CURRENT_DEVICE = "torch.accelerator.current_accelerator()"
