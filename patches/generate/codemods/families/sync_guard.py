"""A bare ``torch.cuda.synchronize()`` statement (HN105) in a script that can run on the CPU
(a program: ``script_plan.is_script``; a library's sync keeps upstream's plain rename).

``torch.accelerator.synchronize()`` raises without an accelerator. Where the file falls back to
the CPU (a ``"cpu"`` device value anywhere in it: ``else "cpu"``, ``device = "cpu"``; the
``device`` line ``script_device`` gives a script whose ``.cuda()`` calls name none; the
accelerator-else-CPU value it writes in place of ``.to("cuda")`` / ``device="cuda"``; or a DDP
script's ``device = f"cuda:{local_rank}"``, which ``idioms_device`` gives the CPU), a timing
sync that no test guards becomes::

    if torch.accelerator.is_available():
        torch.accelerator.synchronize()

the same call on CUDA, nothing on a CPU-only machine (where there is no queued work to wait for).
So does a bare statement using the current stream there (``torch.accelerator.current_stream()``
raises without an accelerator too): the data prefetchers'
``torch.cuda.current_stream().wait_stream(s)`` and ``x.record_stream(torch.cuda.current_stream())``;
and a bare ``torch.cuda.set_device(local_rank)`` (HN104), whose neutral form raises on a CPU-only
machine where the script has no device to pick.
A sync naming the script's device variable (``torch.cuda.synchronize(device)``, the benchmarks'
form) gets ``if torch.device(device).type != "cpu":`` instead: that device is the CPU on a
CPU-only machine, where ``torch.accelerator.synchronize("cpu")`` raises.
Syncs under a test (``if device_type == "cuda":``), with other arguments, or in a file with no CPU
path are the plain rename; so is the ``accelerator_api`` target, whose ``synchronize`` is a no-op
on CPU.
"""

from __future__ import annotations

import ast
import functools
import re

import libcst as cst
import libcst.matchers as m

from patches.generate.codemods.engine import dotted_name
from patches.generate.codemods.families import sync_dispatch
from patches.generate.codemods.families.call_rename import CallRename
from patches.generate.codemods.families.idioms_common import statement, under_availability_check
from patches.generate.codemods.families.script_device import gets_device, is_script, ports_in_place

SYNC = "torch.cuda.synchronize"
NEW = "torch.accelerator.synchronize"
STREAM = "torch.cuda.current_stream"
NEW_STREAM = "torch.accelerator.current_stream"
# renames of the ``call`` family whose bare statement raises without an accelerator
RAISING = {STREAM: NEW_STREAM, "torch.cuda.set_device": "torch.accelerator.set_device_index"}


_DEVICE_WORDS = ("cuda", "gpu", "device", "accel")


def device_test(test: ast.AST) -> bool:
    """A test about the device: ``is_available()``, a device string, a device-ish name."""
    for x in ast.walk(test):
        if isinstance(x, ast.Attribute) and x.attr == "is_available":
            return True
        if isinstance(x, ast.Constant) and isinstance(x.value, str):
            if x.value == "cpu" or x.value.startswith("cuda"):
                return True
        name = x.id if isinstance(x, ast.Name) else x.attr if isinstance(x, ast.Attribute) else ""
        if any(w in name.lower() for w in _DEVICE_WORDS):
            return True
    return False


def _requires_device(test: ast.AST) -> bool:
    """An assert's test that holds only with an accelerator: ``torch.cuda.is_available()`` (alone
    or one term of an ``and``), ``x.is_cuda``, ``<device> == "cuda"`` (not ``device in ("cpu",
    "cuda")``, which the CPU passes)."""
    terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for t in terms:
        if isinstance(t, ast.Call) and isinstance(t.func, ast.Attribute):
            if t.func.attr == "is_available" and "cuda" in ast.unparse(t.func):
                return True
        if isinstance(t, ast.Attribute) and t.attr == "is_cuda":
            return True
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq):
            if any(
                isinstance(c, ast.Constant) and c.value == "cuda" for c in (t.left, *t.comparators)
            ):
                return True
    return False


def _backend_pick(node: ast.AST) -> bool:
    """``get_default_backend_for_device(...)`` or ``Backend.default_device_backend_map.get(...)``
    (what ``idioms_backend`` writes for ``"nccl"``, an argparse default too): its ``"cpu"`` picks
    gloo for a CPU-only host. Counted as a CPU path, it made a CUDA-only script one on the second
    run (hypothesis: ``mem_get_info`` beside ``default="nccl"``)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if last not in ("get", "get_default_backend_for_device"):
        return False  # before unparsing: most calls are neither
    name = ast.unparse(func)
    return name.endswith(("get_default_backend_for_device", "default_device_backend_map.get"))


@functools.lru_cache(maxsize=64)
def _facts(tree: ast.Module) -> tuple[bool, frozenset[int]]:
    """(the file has a CPU device value, lines of the statements a device test guards: the body
    of an ``if``/``while`` whose test is about the device, or a ``try``, and the rest of a block
    after an ``assert`` the CPU fails, ``_requires_device``)."""
    backend = {
        id(c) for n in ast.walk(tree) if _backend_pick(n) for c in ast.walk(n)
    }  # the process group's backend for a CPU-only host: not where the script computes
    cpu = any(
        isinstance(n, ast.Constant) and n.value == "cpu" and id(n) not in backend
        for n in ast.walk(tree)
    )
    tested: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) or (
            isinstance(node, (ast.If, ast.While)) and device_test(node.test)
        ):
            for child in ast.walk(node):
                if isinstance(child, ast.stmt) and child is not node:
                    tested.add(child.lineno)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            for i, stmt in enumerate(block if isinstance(block, list) else ()):
                if isinstance(stmt, ast.Assert) and _requires_device(stmt.test):
                    # `assert torch.cuda.is_available(), "DDP needs CUDA"`: the rest of the
                    # block runs only with the author's device
                    for rest in block[i + 1 :]:
                        tested |= {c.lineno for c in ast.walk(rest) if isinstance(c, ast.stmt)}
    cpu = cpu or any(
        isinstance(n, ast.Assign) and n.lineno not in tested and _rank_device(n)
        for n in ast.walk(tree)
    )
    return cpu, frozenset(tested)


_DEVICE_TARGET = re.compile(r"(?i)device|(^|[._])dev$")  # HN502's `targets`


def indexed_cuda_string(node: ast.AST) -> bool:
    """A CUDA device string built from an index: ``f"cuda:{i}"``, ``"cuda:%d" % i``,
    ``"cuda:{}".format(i)``."""
    if isinstance(node, ast.JoinedStr) and node.values:
        head = node.values[0]
        return isinstance(head, ast.Constant) and str(head.value).startswith("cuda:")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        node = node.left
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr != "format":
            return False
        node = node.func.value
    else:
        return False
    return isinstance(node, ast.Constant) and str(node.value).startswith(("cuda:%", "cuda:{"))


def _rank_device(node: ast.Assign) -> bool:
    """``device = f"cuda:{local_rank}"`` / ``device = torch.device(f"cuda:{args.local_rank}")``
    under no device test: the DDP scripts' device of a rank. The port writes it with the CPU
    for the accelerator's type where there is none (``idioms_device``), a CPU path as the
    script's ``device`` line is."""
    value = node.value
    if isinstance(value, ast.Call) and ast.unparse(value.func) == "torch.device":
        value = value.args[0] if len(value.args) == 1 and not value.keywords else None
    names = [ast.unparse(t) for t in node.targets]
    return indexed_cuda_string(value) and any(_DEVICE_TARGET.search(n) for n in names)


def runs_on_cpu(ctx, line: int) -> bool:
    """A script with a CPU path (module docstring) reaches ``line`` under no device test: once
    ported, the line runs on a CPU-only machine."""
    cpu, tested = _facts(ctx.tree)
    cpu = cpu or gets_device(ctx) or ports_in_place(ctx)
    return cpu and line not in tested and is_script(ctx)


def _raising_use(eng, original, call: cst.Call) -> bool:
    """A bare statement that calls what this step renamed in ``RAISING`` (the ``call`` family):
    ``torch.accelerator.current_stream().wait_stream(s)``,
    ``x.record_stream(torch.accelerator.current_stream())`` (the data prefetchers, HN204),
    ``torch.accelerator.set_device_index(rank)`` (HN104). Each raises without an accelerator; on
    the CPU there is no stream to wait on or record, and no device to pick."""
    names = {n for s in eng.specs_for("call", original) for n in s.names}
    new = {RAISING[n] for n in names if n in RAISING}
    return bool(new) and any(dotted_name(n.func) in new for n in m.findall(call, m.Call()))


def _device_arg(call: cst.Call) -> cst.BaseExpression | None:
    """The one argument of ``synchronize(device)`` when it names a device variable (``device``,
    ``args.device``, ``self.device``, ``*_device``): a script's pick, "cpu" on a CPU-only
    machine."""
    if len(call.args) != 1:
        return None
    arg = call.args[0]
    if arg.star or arg.keyword is not None and arg.keyword.value != "device":
        return None
    value = arg.value
    name = dotted_name(value) or ""
    last = name.rsplit(".", 1)[-1]
    return value if last == "device" or last.endswith("_device") else None


def _off_the_cpu(eng, original, updated, device: cst.BaseExpression) -> cst.BaseStatement:
    """``updated`` (``torch.accelerator.synchronize(device)``) under ``if torch.device(device)
    .type != "cpu":``: the script's device is the CPU on a CPU-only machine (or when its user asks
    for it), where there is nothing to wait for and the neutral call raises."""
    code = cst.Module([]).code_for_node(device)
    return under_availability_check(eng, original, updated, f'torch.device({code}).type != "cpu"')


class GuardedSync(CallRename):
    name = "sync"
    claims = (SYNC,)

    def __init__(self) -> None:
        self.dispatches_: dict[int, sync_dispatch.Dispatch] | None = None

    def _dispatches(self, ctx) -> dict[int, sync_dispatch.Dispatch]:
        if self.dispatches_ is None:
            self.dispatches_ = sync_dispatch.dispatches(ctx)
        return self.dispatches_

    def _mine(self, ctx, lines):
        return [d for d in self._dispatches(ctx).values() if d.sync_line in lines]

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        mine = self._mine(ctx, lines)
        ctx.blocks.update((d.start, d.end) for d in mine)
        return lines | frozenset(ln for d in mine for ln in range(d.start, d.end + 1))

    def companions(self, ctx, spec, lines: frozenset[int]) -> dict[tuple[str, int], list]:
        return {(spec.rule, d.sync_line): list(d.spans) for d in self._mine(ctx, lines)}

    def on_node(self, eng, original, updated):
        if isinstance(original, cst.If):
            return self._dispatch(eng, original)
        if not isinstance(original, cst.SimpleStatementLine) or len(updated.body) != 1:
            return None
        expr = updated.body[0]
        if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
            return None
        call = expr.value
        device = _device_arg(call) if dotted_name(call.func) == NEW else None
        if dotted_name(call.func) == NEW and (not call.args or device is not None):
            if not eng.specs_for(self.name, original):
                return None
        elif not _raising_use(eng, original, call):
            return None  # not rewritten here (kept, failed), or the accelerator_api target
        if not runs_on_cpu(eng.ctx, eng.line(original)):
            return None
        if device is not None:
            return _off_the_cpu(eng, original, updated, device)
        return under_availability_check(eng, original, updated)

    def _dispatch(self, eng, original: cst.If):
        """A whole sync dispatch (``sync_dispatch``), in the step its sync is rewritten."""
        d = self._dispatches(eng.ctx).get(eng.line(original))
        specs = eng.specs_for(self.name, original)
        if d is None or not specs or not eng.fixes(specs[0].rule, d.sync_line):
            return None
        if eng.end_line(original) != d.end:
            return None  # a header region, not the block
        eng.outcome.applied.append((specs[0].rule, d.sync_line))
        for spec, lines in eng.gated:  # the tests' own findings (HN506, HN509, ...)
            if spec.family != self.name:
                for ln in lines:
                    if d.start <= ln < d.end and ln != d.sync_line and eng.fixes(spec.rule, ln):
                        eng.outcome.applied.append((spec.rule, ln))
        # a test's own family may have declined it (`device == "cuda"`): the unit took it whole
        gone = set(eng.outcome.applied)
        eng.outcome.failed = [f for f in eng.outcome.failed if (f[0], f[1]) not in gone]
        new = specs[0].new_for(SYNC)
        eng.add_needed_import("torch", node=original)
        if new.startswith("accelerator_api."):
            eng.add_needed_import("accelerator_api", node=original)
        text = sync_dispatch.replacement(d, new)
        out = statement(eng, text)
        body = out.body
        if isinstance(original.body, cst.IndentedBlock) and isinstance(body, cst.IndentedBlock):
            # the comments on the `if` line and on the sync's line stay where they were
            sync = original.body.body[0]
            inner = body.body[0].with_changes(
                leading_lines=sync.leading_lines, trailing_whitespace=sync.trailing_whitespace
            )
            body = body.with_changes(header=original.body.header, body=[inner])
        return out.with_changes(body=body, leading_lines=original.leading_lines)
