"""Per-backend device probes, one per accelerator, -> one probe of ``torch.accelerator`` (the
CUDA arm's HN101/HN102/HN704), upstream's form (``common_distributed``'s skip helpers, torch 2.14
-> 2.15)::

    if TEST_CUDA and torch.cuda.device_count() >= x:
        return True                                        if (torch.accelerator.is_available()
    if TEST_HPU and torch.hpu.device_count() >= x:    ->       and torch.accelerator.device_count() >= x):
        return True                                            return True
    if TEST_XPU and torch.xpu.device_count() >= x:
        return True

and a disjunction asking whether any of them is there (or its negation written with ``and``)::

    if not (TEST_CUDA or TEST_HPU or TEST_XPU):       ->   if not torch.accelerator.is_available():
    if not torch.cuda.is_available() and not is_xpu_available():   ->   (the same)

A **probe** of backend ``b`` is ``torch.b.is_available()``, its test flag (``TEST_B``) or a
project's helper of another backend (``is_xpu_available()``: accelerate's, peft's), a count
``torch.b.device_count() <op> N``, or the two joined by ``and``. A **sequence** is a run of sibling
``if`` statements (no ``elif``/``else``), each testing a probe of another backend, CUDA's among
them, all of one shape with the same ``<op> N``, and all with the same body: the body runs when any
of those accelerators answers, and a process has one accelerator type, which ``torch.accelerator``
asks about (the others too: MPS, MTIA, PrivateUse1). The first ``if`` gets the accelerator's probe
(``is_available() and`` kept before a count, as the arms had it), the others go. A **disjunction**
is an ``or`` of availability probes of two or more backends, CUDA's among them, or an ``and``
of their negations.

Under a negated disjunction (the arm that runs where no accelerator is there), a skip table's
CUDA key goes to its neutral sibling where the module's own table holds one (upstream's form,
``common_distributed``, torch 2.14 -> 2.15)::

    sys.exit(TEST_SKIPS["no_cuda"].exit_code)  ->  sys.exit(TEST_SKIPS["no_accelerator"].exit_code)

(``TEST_SKIPS`` a module-level dict literal with both keys; the key is a companion of the probe.)

Left: arms whose bodies differ (a per-backend exit code or message), thresholds that differ, an
arm with an ``else``, a single CUDA arm (the plain renames decide it), probes in a function that
also works on a backend by name (``if torch.xpu.is_available(): mem = torch.xpu.
get_device_properties().total_memory`` beside ``not (torch.cuda.is_available() or torch.xpu.
is_available())``: the probe picks between per-backend arms, and the accelerator's module may
lack what the arm calls), and anything the gate leaves (a docstring about CUDA on the unit).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from audits.vocabulary import NAMED_BACKENDS
from patches.generate.codemods.families.base import Family
from patches.generate.intent import Span, span_of

BACKENDS = ("cuda", *NAMED_BACKENDS)
FLAGS = {f"TEST_{b.upper()}": b for b in BACKENDS}
AVAILABLE = "torch.accelerator.is_available()"
COUNT = "torch.accelerator.device_count()"
_HELPER = re.compile(rf"is_(?:torch_)?({'|'.join(NAMED_BACKENDS)})_available")
_CUDA_KEY = re.compile(r"(?<![a-z0-9])cuda(?![a-z0-9])")
_NEUTRAL_KEY = "accelerator"
_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


@dataclass(frozen=True)
class Unit:
    cuda_line: int  # the CUDA probe's line: its findings start the unit
    text: str  # what replaces the probe(s)
    spans: tuple[Span, ...]  # the other backends' probes and arms: rewritten with CUDA's
    at: tuple[int, int, int, int]  # (line, column, end line, end column): the key of ``units``
    arms: tuple[int, ...] = ()  # a sequence's other ``if`` lines (removed); () for a disjunction
    tests: tuple[tuple[int, int], ...] = ()  # line ranges of the probes replaced
    flags: tuple[str, ...] = ()  # test flags named there (their imports may go)
    keys: tuple[tuple[tuple[int, int], str], ...] = ()  # (line, column) of a CUDA key -> sibling

    @property
    def start(self) -> int:
        return self.at[0]

    @property
    def end(self) -> int:
        return self.at[2]


def _module(node: ast.AST, attr: str) -> str | None:
    """``b`` for a no-argument call ``torch.b.<attr>()``."""
    if not (isinstance(node, ast.Call) and not node.args and not node.keywords):
        return None
    f = node.func
    if not (isinstance(f, ast.Attribute) and f.attr == attr and isinstance(f.value, ast.Attribute)):
        return None
    owner = f.value
    ok = isinstance(owner.value, ast.Name) and owner.value.id == "torch"
    return owner.attr if ok and owner.attr in BACKENDS else None


def _available(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return FLAGS.get(node.id)
    if (b := _probe_function(node)) is not None:
        return b
    if _is_call(node, "torch.backends.mps.is_available"):
        return "mps"
    return _module(node, "is_available")


def _probe_function(node: ast.AST) -> str | None:
    """``b`` for a no-argument call of a project's availability helper of another backend
    (``is_xpu_available()``, ``is_torch_npu_available()``: accelerate's, transformers')."""
    if not (isinstance(node, ast.Call) and not node.args and not node.keywords):
        return None
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    m = _HELPER.fullmatch(name)
    return m.group(1) if m else None


def _is_call(node: ast.AST, dotted: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and not node.args
        and not node.keywords
        and ast.unparse(node.func) == dotted
    )


def _count(node: ast.AST) -> tuple[str, str] | None:
    """(backend, ``<op> N``) of ``torch.b.device_count() <op> N``."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return None
    b, op = _module(node.left, "device_count"), _OPS.get(type(node.ops[0]))
    return (b, f"{op} {ast.unparse(node.comparators[0])}") if b and op else None


def probe(test: ast.AST) -> tuple[str, str] | None:
    """(backend, shape) of a probe: shape ``avail``, ``count <op> N`` or ``both <op> N``."""
    if (b := _available(test)) is not None:
        return b, "avail"
    if (c := _count(test)) is not None:
        return c[0], f"count {c[1]}"
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and len(test.values) == 2:
        a, c = _available(test.values[0]), _count(test.values[1])
        if a is not None and c is not None and a == c[0]:
            return a, f"both {c[1]}"
    return None


def _replacement(shape: str) -> str:
    kind, _, rest = shape.partition(" ")
    if kind == "avail":
        return AVAILABLE
    return f"{COUNT} {rest}" if kind == "count" else f"{AVAILABLE} and {COUNT} {rest}"


def _sequence(run: list[ast.If]) -> Unit | None:
    probes = [probe(s.test) for s in run]
    names = [p[0] for p in probes]
    if len(run) < 2 or "cuda" not in names or len(set(names)) != len(names):
        return None
    if (
        len({p[1] for p in probes}) != 1
        or len({ast.dump(ast.Module(s.body, [])) for s in run}) != 1
    ):
        return None
    cuda = run[names.index("cuda")]
    spans = [span_of(s.test) for s in run if s is not cuda] + [span_of(s.body) for s in run[1:]]
    first, last = run[0], run[-1]
    return Unit(
        cuda.test.lineno,
        _replacement(probes[0][1]),
        tuple(spans),
        (first.lineno, first.col_offset, last.end_lineno, last.end_col_offset),
        tuple(s.lineno for s in run[1:]),
        tuple((s.test.lineno, s.test.end_lineno) for s in run),
        _flags(s.test for s in run),
    )


def _runs(stmts: list[ast.stmt]):
    """Maximal runs of sibling ``if`` statements with no ``else`` whose tests are probes."""
    run: list[ast.If] = []
    for s in [*stmts, None]:
        if isinstance(s, ast.If) and not s.orelse and probe(s.test) is not None:
            run.append(s)
            continue
        if run:
            yield run
        run = []


def _negated(node: ast.AST) -> ast.AST | None:
    ok = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    return node.operand if ok else None


def _disjunction(node: ast.BoolOp) -> Unit | None:
    """``A or B`` of availability probes, or ``not A and not B`` (none of them is there)."""
    if isinstance(node.op, ast.Or):
        probes, text = node.values, AVAILABLE
    else:
        probes, text = [_negated(v) for v in node.values], f"not {AVAILABLE}"
    names = [_available(v) if v is not None else None for v in probes]
    if None in names or "cuda" not in names or len(set(names)) != len(names):
        return None
    cuda = node.values[names.index("cuda")]
    spans = tuple(span_of(v) for v in node.values if v is not cuda)
    return Unit(
        cuda.lineno,
        text,
        spans,
        (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset),
        (),
        ((node.lineno, node.end_lineno),),
        _flags([node]),
    )


def _flags(tests) -> tuple[str, ...]:
    """The test flags and helper functions named in ``tests`` (their imports may go)."""
    return tuple(
        sorted(
            {
                n.id
                for t in tests
                for n in ast.walk(t)
                if isinstance(n, ast.Name) and (n.id in FLAGS or _HELPER.fullmatch(n.id))
            }
        )
    )


_PROBES = ("is_available", "device_count")


def _dispatches(ctx, node: ast.AST) -> bool:
    """The function holding ``node`` does other work on a backend by name (``torch.xpu.
    get_device_properties()``): its probes choose between per-backend arms, not "any
    accelerator", and stay."""
    scope = ctx.scope_at(node.lineno)
    while scope is not None and not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        scope = scope.parent
    for n in ast.walk(scope.node) if scope is not None else ():
        owner = n.value if isinstance(n, ast.Attribute) else None
        if (
            isinstance(owner, ast.Attribute)
            and owner.attr in BACKENDS
            and isinstance(owner.value, ast.Name)
            and owner.value.id == "torch"
            and n.attr not in _PROBES
        ):
            return True
    return False


def _tables(ctx) -> dict[str, set[str]]:
    """Module-level dict literals by name -> their string keys (``TEST_SKIPS = {...}``)."""
    out: dict[str, set[str]] = {}
    for stmt in ctx.tree.body:
        target = (
            stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        )
        target = stmt.target if isinstance(stmt, ast.AnnAssign) else target
        if isinstance(target, ast.Name) and isinstance(stmt.value, ast.Dict):
            keys = stmt.value.keys
            out[target.id] = {k.value for k in keys if isinstance(k, ast.Constant)}
    return out


def _absent_arm(ctx, node: ast.BoolOp) -> list[ast.stmt] | None:
    """The body of the ``if`` that ``node`` tests as "no accelerator is there" (``not (A or
    B)``, ``not A and not B``), else None."""
    head = node
    if isinstance(node.op, ast.Or):
        head = ctx.parents.get(node)
        if not (isinstance(head, ast.UnaryOp) and isinstance(head.op, ast.Not)):
            return None
    owner = ctx.parents.get(head)
    return owner.body if isinstance(owner, ast.If) and owner.test is head else None


def _neutral_keys(ctx, node: ast.BoolOp, unit: Unit) -> Unit:
    """``unit`` with the CUDA keys of a module table in its absent arm, where the table holds
    the neutral sibling (``"no_cuda"`` -> ``"no_accelerator"``)."""
    body = _absent_arm(ctx, node)
    tables = _tables(ctx) if body else {}
    keys, spans = [], []
    for sub in (n for stmt in body or () for n in ast.walk(stmt)):
        if not (isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name)):
            continue
        key = sub.slice
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        sibling = _CUDA_KEY.sub(_NEUTRAL_KEY, key.value)
        if sibling != key.value and sibling in tables.get(sub.value.id, ()):
            keys.append(((key.lineno, key.col_offset), sibling))
            spans.append(span_of(key))
    if not keys:
        return unit
    return dataclasses.replace(unit, spans=unit.spans + tuple(spans), keys=tuple(keys))


@functools.lru_cache(maxsize=8)
def units(ctx) -> dict[tuple[int, int, int, int], Unit]:
    """Position (``Unit.at``) -> the sequence or disjunction there, where the function does no
    other work on a backend by name."""
    out = {}
    holders = {}  # the statement lists holding a probe's ``if``, once each
    for node in ctx.nodes:
        if isinstance(node, ast.If) and not node.orelse and probe(node.test) is not None:
            parent = ctx.parents.get(node)
            holders[id(parent)] = parent
        elif isinstance(node, ast.BoolOp) and (u := _disjunction(node)) is not None:
            if not _dispatches(ctx, node):
                out[u.at] = _neutral_keys(ctx, node, u)
    for parent in holders.values():
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            for run in _runs(stmts) if isinstance(stmts, list) else ():
                for i in range(len(run)):  # the longest run of one shape from each start
                    u = _sequence(run[i:])
                    if u is not None and not _dispatches(ctx, run[0]):
                        out[u.at] = u
                        break
    return out


class ProbeCollapse(Family):
    name = "probe-collapse"
    serves = ("guard", "call", "rename")  # HN101, HN102, HN704 in the CUDA probe

    def _mine(self, ctx, lines):
        return [u for u in units(ctx).values() if u.cuda_line in lines]

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        mine = self._mine(ctx, lines)
        ctx.blocks.update((u.start, u.end) for u in mine if u.arms)
        keys = frozenset(at[0] for u in mine for at, _ in u.keys)
        return lines | keys | frozenset(ln for u in mine for ln in range(u.start, u.end + 1))

    def companions(self, ctx, spec, lines: frozenset[int]) -> dict[tuple[str, int], list]:
        return {(spec.rule, u.cuda_line): list(u.spans) for u in self._mine(ctx, lines)}

    def _ready(self, eng, u: Unit) -> bool:
        """Every finding of the unit is this run's to fix (a safe-only run collapses nothing
        whose probes are review rules)."""
        gate = eng.gate
        found = [f for f in (gate.findings if gate else ()) if u.start <= f.line <= u.end]
        ours = {s.rule for s, _ in eng.gated}
        return bool(found) and all(f.rule in ours and eng.fixes(f.rule, f.line) for f in found)

    def _applied(self, eng, u: Unit, node) -> None:
        for spec, lines in eng.gated:
            for ln in lines:
                if u.start <= ln <= u.end and eng.fixes(spec.rule, ln):
                    eng.outcome.applied.append((spec.rule, ln))
        eng.removes.update(u.flags)  # their imports go where nothing else uses them
        gone = set(eng.outcome.applied)
        eng.outcome.failed = [f for f in eng.outcome.failed if (f[0], f[1]) not in gone]
        eng.add_needed_import("torch", node=node)

    def _probe_of(self, eng, node):
        """The ready unit whose replaced probes hold ``node``: its names and calls are this
        family's (no rename of them, whose imports would outlive the collapse)."""
        line = eng.line(node)
        for u in units(eng.ctx).values():
            if any(a <= line <= b for a, b in u.tests) and self._ready(eng, u):
                return u
        return None

    def on_call(self, eng, original, updated):
        return updated if self._probe_of(eng, original) is not None else None

    def on_ref(self, eng, original, updated):
        return updated if self._probe_of(eng, original) is not None else None

    def on_literal(self, eng, original, updated):
        """A skip table's CUDA key under a ready unit's absent arm -> its neutral sibling."""
        r = eng.get_metadata(PositionProvider, original)
        at = (eng.line(original), r.start.column)
        for u in units(eng.ctx).values():
            sibling = dict(u.keys).get(at)
            if sibling is not None and not updated.prefix and self._ready(eng, u):
                return updated.with_changes(value=f"{updated.quote}{sibling}{updated.quote}")
        return None

    def on_node(self, eng, original, updated):
        if isinstance(original, cst.If):
            line = eng.line(original)
            seq = next((u for u in units(eng.ctx).values() if u.arms and u.start == line), None)
            arm = next((u for u in units(eng.ctx).values() if line in u.arms), None)
            if seq is not None and self._ready(eng, seq):
                self._applied(eng, seq, original)
                return updated.with_changes(test=cst.parse_expression(seq.text))
            if arm is not None and self._ready(eng, arm):
                return cst.RemovalSentinel.REMOVE
            return None
        if isinstance(original, cst.BooleanOperation):
            r = eng.get_metadata(PositionProvider, original)  # parentheses left out, as ``ast``
            at = (eng.line(original), r.start.column, eng.end_line(original), r.end.column)
            u = units(eng.ctx).get(at)
            if u is None or u.arms or not self._ready(eng, u):
                return None
            self._applied(eng, u, original)
            return cst.parse_expression(u.text)
        return None
