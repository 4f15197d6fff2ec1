"""A profiler event's device type checked against CUDA (HN554) -> checked against the host::

    evt.device_type in [DeviceType.CUDA, DeviceType.PrivateUse1]   ->   evt.device_type != DeviceType.CPU
    e.device_type == DeviceType.CUDA or e.device_type == DeviceType.PrivateUse1
                                                                  ->   e.device_type != DeviceType.CPU
    event.device_type != DeviceType.CUDA                          ->   event.device_type == DeviceType.CPU

Why "not the CPU" is the same test on CUDA and on a CPU-only host: a Kineto event's device type
comes from ``deviceTypeFromActivity`` (torch/csrc/autograd/profiler_kineto.cpp, torch 2.13):
host activities (CPU ops, user annotations, the CUDA/XPU/PrivateUse1 runtime and driver calls,
Python functions, overhead, and every unknown activity) are ``CPU``; device activities
(kernels, memcpy/memset, syncs, GPU user annotations) are ``CUDA``, ``XPU`` (an XPU build),
``MTIA``, ``HPU``, or ``PrivateUse1`` when an out-of-tree backend is registered. The legacy
profiler and the memory events the profiler makes itself are ``CPU``. So an event is never
Meta, MKLDNN or IDEEP, and on a CUDA machine it is CUDA or CPU: ``!= CPU`` and ``in [CUDA,
PrivateUse1, HIP]`` select the same events there, and on a CPU-only host both select none.
On XPU, MTIA, HPU they now count the accelerator's kernels, which is what upstream did by
naming those members beside CUDA one list at a time (2.4.1 -> 2.13).

A memory record's device type is the allocation's device (``reportMemoryUsageToProfiler``: CPU,
CUDA, XPU, MPS, PrivateUse1, ...). Where the file itself tests the same expression against a
list of host types (``mem_record.device_type() in [DeviceType.CPU, DeviceType.MKLDNN,
DeviceType.IDEEP]``, its CPU memory), the device test becomes ``not in`` that list, so that
host memory and device memory stay each other's complement exactly as the file defines them.

With such a filter the profile it reads is one unit (HN551): ``torch.profiler.profile(
activities=[ProfilerActivity.CUDA])`` in the same function, whose filter this run makes neutral,
-> ``getattr(ProfilerActivity, torch.accelerator.current_accelerator().type.upper())``
(upstream's form in inductor's ``do_bench_using_profiling``): CUDA on CUDA; without an
accelerator it raises (``None.type``) where the function's timing calls raised already; an
accelerator the profiler has no activity for (MPS, a PrivateUse1 backend under its own name)
raises instead of recording an empty trace. Left: an activity anywhere else (passed to a helper,
a list naming more than CPU and CUDA) and a profile no neutral filter reads (a trace for people,
a test of CUDA's profiler).

Whether a check is about CUDA itself is the intent gate's (``patches/generate/intent/``): an
``if``/``elif`` chain that tests the same device type against another accelerator (a per-device
dispatch: its CUDA arm is one device's) or a CUDA arm that calls CUDA's own code
(``kineto_event.cuda_elapsed_us()``) is held there (``cuda-guarded``) and never reaches this
family; ``DeviceType.CUDA`` as an argument, or in a list that already names another backend,
is not reported by the scan (``audits/python/device_types.py``).
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.families.base import Family

HOST = ("CPU", "MKLDNN", "IDEEP")  # DeviceType members that are the host (its oneDNN layouts)
PROFILES = {"torch.profiler.profile", "torch.profiler.profiler.profile"}
_POSITIVE = (cst.Equal, cst.In)
_SEQS = (cst.List, cst.Tuple, cst.Set)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _normal(text: str) -> str:
    try:
        return ast.unparse(ast.parse(text.strip(), mode="eval"))
    except SyntaxError:
        return text.strip()


def _is_subject(node: cst.BaseExpression) -> bool:
    """An event's device type: ``x.device_type`` or ``x.device_type()``."""
    if isinstance(node, cst.Call) and not node.args:
        node = node.func
    return isinstance(node, cst.Attribute) and node.attr.value == "device_type"


class _Check:
    """One ``<subject> <op> <members>`` of the family's shape."""

    def __init__(self, subject, positive, members, subject_left, op, seq=None):
        self.subject = subject  # the device type expression
        self.positive = positive  # == / in: "is it CUDA"
        self.members = members  # the DeviceType member nodes compared with
        self.subject_left = subject_left
        self.op = op
        self.seq = seq  # the list of a membership test (the scan reports it whole)


class ProfilerDevices(Family):
    name = "profiler-devices"

    # -- what the catalogue names ------------------------------------------------------------
    def _names(self, eng) -> set[str]:
        """The DeviceType members of the family's specs (HN554's; HN551's are activities)."""
        return {
            n
            for s, _ in eng.gated
            if s.family == self.name
            for n in s.names
            if n.rsplit(".", 2)[-2].endswith("DeviceType")
        }

    def _member(self, eng, node, names: set[str]) -> str | None:
        """The member name (``CUDA``) of a DeviceType member node, or None."""
        if not isinstance(node, cst.Attribute):
            return None
        enums = {n.rsplit(".", 1)[0] for n in names}
        for q in eng.qualnames(node):
            enum, _, last = q.rpartition(".")
            if enum in enums:
                return last
        return None

    def _check(self, eng, comp, names: set[str]) -> _Check | None:
        if not isinstance(comp, cst.Comparison) or len(comp.comparisons) != 1:
            return None
        target = comp.comparisons[0]
        op, left, right = target.operator, comp.left, target.comparator
        allowed = {n.rsplit(".", 1)[1] for n in names}
        if isinstance(op, (cst.Equal, cst.NotEqual)):
            for subject, other, subject_left in ((left, right, True), (right, left, False)):
                if _is_subject(subject) and self._member(eng, other, names) in allowed:
                    return _Check(subject, isinstance(op, cst.Equal), [other], subject_left, op)
            return None
        if isinstance(op, (cst.In, cst.NotIn)) and isinstance(right, _SEQS) and _is_subject(left):
            elts = [e.value for e in right.elements]
            if elts and all(self._member(eng, e, names) in allowed for e in elts):
                return _Check(left, isinstance(op, cst.In), elts, True, op, right)
        return None

    def _specs(self, eng, check: _Check):
        """(spec, node) for the family's findings on the check (the scan reports the CUDA
        member compared with, or the whole list), once per line."""
        out, seen = [], set()
        for m in [*check.members, *([check.seq] if check.seq is not None else [])]:
            line = eng.line(m)
            for s in eng.specs_for(self.name, m):
                if (s.rule, line) not in seen:
                    seen.add((s.rule, line))
                    out.append((s, m))
        return out

    # -- groups: `s == CUDA or s == PrivateUse1` ----------------------------------------------
    @staticmethod
    def _operands(node: cst.BooleanOperation) -> list:
        out = []
        for side in (node.left, node.right):
            if (
                isinstance(side, cst.BooleanOperation)
                and type(side.operator) is type(node.operator)
                and not side.lpar
            ):
                out += ProfilerDevices._operands(side)
            else:
                out.append(side)
        return out

    def _group(self, eng, node, names) -> list[_Check] | None:
        """The checks of a whole ``or`` of ``==`` (``and`` of ``!=``) on one subject, or None."""
        if not isinstance(node, cst.BooleanOperation):
            return None
        positive = isinstance(node.operator, cst.Or)
        checks = [self._check(eng, o, names) for o in self._operands(node)]
        if any(c is None or c.positive != positive for c in checks):
            return None
        if len({_normal(_code(c.subject)) for c in checks}) != 1:
            return None
        return checks

    def _top_group(self, eng, node, names):
        """The boolean operation that holds ``node`` as one of its flattened operands (one
        operator, up to a parenthesised one), if it is a group."""
        top, parent = None, eng.parent(node)
        while isinstance(parent, cst.BooleanOperation):
            if top is not None and type(parent.operator) is not type(top.operator):
                break
            top = parent
            if parent.lpar:
                break
            parent = eng.parent(parent)
        return top if top is not None and self._group(eng, top, names) else None

    # -- the profile's activity, with the event filter that reads it (HN551) -----------------
    def on_ref(self, eng, original, updated):
        """``activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]`` of a
        ``torch.profiler.profile`` -> the current accelerator's activity, where the same function
        filters the profile's events by device type with a check this run makes neutral."""
        if not isinstance(original, cst.Attribute) or original.attr.value != "CUDA":
            return None
        names = eng.qualnames(original)
        specs = [
            s
            for s in eng.specs_for(self.name, original)
            if names & set(s.names) and not names & self._names(eng)
        ]
        if not specs:
            return None
        why = self._activity_unit(eng, original)
        if why:
            eng.fail(specs[0], original, why)
            return None
        eng.done(specs[0], original)
        eng.add_needed_import("torch", node=original)
        accel = cst.parse_expression("torch.accelerator.current_accelerator().type.upper()")
        return cst.Call(
            cst.Name("getattr"),
            [
                cst.Arg(updated.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(accel),
            ],
        )

    def _activity_unit(self, eng, original: cst.Attribute) -> str:
        """Why the activity is left ("" when it is rewritten): it must be an element of the
        ``activities=`` list of ``torch.profiler.profile(...)`` naming CPU and CUDA only, in a
        function that checks an event's device type against CUDA (HN554) at a site the intent
        gate lets through: profiling the accelerator and reading its events are one unit."""
        elem = eng.parent(original)
        seq = eng.parent(elem) if isinstance(elem, cst.Element) else None
        arg = eng.parent(seq) if isinstance(seq, (cst.List, cst.Tuple)) else None
        call = eng.parent(arg) if isinstance(arg, cst.Arg) else None
        if not (
            isinstance(call, cst.Call)
            and arg.keyword is not None
            and arg.keyword.value == "activities"
            and eng.qualnames(call.func) & PROFILES
        ):
            return "not the activities of a torch.profiler.profile(...), kept"
        for e in seq.elements:
            if not isinstance(e.value, cst.Attribute) or e.value.attr.value not in ("CPU", "CUDA"):
                return "the activity list names more than the host and CUDA, kept"
        line = eng.line(original)
        fns = [
            n
            for n in ast.walk(eng.ctx.tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.lineno <= line <= n.end_lineno
        ]
        if not fns:
            return "no function reads the profile's events by device type, kept"
        fn = max(fns, key=lambda n: n.lineno)
        spans = [(c.lineno, c.end_lineno) for c in ast.walk(fn) if _cuda_event_check(c)]
        gate = eng.gate
        for rule, ln in sorted(gate.candidates) if gate is not None else ():
            if any(a <= ln <= b for a, b in spans) and eng.fixes(rule, ln):
                return ""
        if gate is None and spans:
            return ""
        return (
            "no event filter of this function is made neutral in this run (a trace to read, "
            "or a check of CUDA's own events), kept"
        )

    # -- the rewrite -------------------------------------------------------------------------
    def on_node(self, eng, original, updated):
        if not isinstance(original, (cst.Comparison, cst.BooleanOperation)):
            return None
        names = self._names(eng)
        if not names:
            return None
        if isinstance(original, cst.Comparison):
            check = self._check(eng, original, names)
            if check is None or self._top_group(eng, original, names) is not None:
                return None  # not ours, or rewritten with its whole group
            checks = [check]
        else:
            checks = self._group(eng, original, names)
            if checks is None:
                return None
            if not original.lpar and self._top_group(eng, original, names) is not None:
                return None  # an operand of a longer group: the group is rewritten whole
        specs = [sm for c in checks for sm in self._specs(eng, c)]
        if not specs:
            return None
        for spec, member in specs:
            eng.done(spec, member)
        new = self._neutral(eng, checks[0])
        if isinstance(original, cst.BooleanOperation) and isinstance(
            eng.parent(original), (cst.If, cst.While)
        ):
            return new  # `if (a or b):` over three lines -> `if s != DeviceType.CPU:`
        return new.with_changes(lpar=original.lpar, rpar=original.rpar)

    def _neutral(self, eng, check: _Check) -> cst.Comparison:
        """``<subject> != <enum>.CPU`` (``==`` for a negative check), or ``not in`` / ``in`` the
        file's own host list for this subject."""
        cuda = next(m for m in check.members if isinstance(m, cst.Attribute))
        subject = check.subject.deep_clone()
        hosts = self._host_list(eng, check, cuda)
        ws = dict(
            whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")
        )
        if hosts is not None:
            op = cst.NotIn(**ws) if check.positive else cst.In(**ws)
            return cst.Comparison(subject, [cst.ComparisonTarget(op, hosts)])
        cpu = cuda.with_changes(attr=cst.Name("CPU"))
        op = cst.NotEqual(**ws) if check.positive else cst.Equal(**ws)
        if check.subject_left:
            return cst.Comparison(subject, [cst.ComparisonTarget(op, cpu)])
        return cst.Comparison(cpu, [cst.ComparisonTarget(op, subject)])

    def _host_list(self, eng, check: _Check, cuda: cst.Attribute):
        """The file's own list of host types for the same subject (``<subject> in
        [<enum>.CPU, <enum>.MKLDNN, ...]``), as an expression, or None."""
        subject = _normal(_code(check.subject))
        base = _normal(_code(cuda.value))
        for node in ast.walk(eng.ctx.tree):
            if not (
                isinstance(node, ast.Compare)
                and len(node.ops) == 1
                and isinstance(node.ops[0], ast.In)
                and isinstance(node.comparators[0], (ast.List, ast.Tuple, ast.Set))
                and ast.unparse(node.left) == subject
            ):
                continue
            elts = node.comparators[0].elts
            if (
                len(elts) >= 2
                and all(
                    isinstance(e, ast.Attribute) and e.attr in HOST and ast.unparse(e.value) == base
                    for e in elts
                )
                and any(e.attr == "CPU" for e in elts)
            ):
                return cst.parse_expression(ast.unparse(node.comparators[0]))
        return None


def _cuda_event_check(node: ast.AST) -> bool:
    """``<x>.device_type`` / ``<x>.device_type()`` compared with ``<...>DeviceType.CUDA`` (or a
    list holding it): the event filter HN554 reports."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return False
    sides = [node.left, node.comparators[0]]
    subject = any(
        isinstance(getattr(x, "func", x), ast.Attribute)
        and getattr(x, "func", x).attr == "device_type"
        for x in sides
    )
    members = [e for x in sides for e in (x.elts if isinstance(x, (ast.List, ast.Tuple)) else [x])]
    cuda = any(
        isinstance(m, ast.Attribute)
        and m.attr == "CUDA"
        and ast.unparse(m.value).endswith("DeviceType")
        for m in members
    )
    return subject and cuda
