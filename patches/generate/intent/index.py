"""The per-file index the kinds read: parents, the node at each span, the CUDA tokens in order,
comments, same-file calls, and the structure around a site (its statement, block, definitions,
the code it guards). Built once per file from the file's ``ast``."""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Callable, Iterable

from audits import vocabulary
from patches.generate.intent.answers import answer_chain
from patches.generate.intent.bindings import bindings
from patches.generate.intent.child_source import child_sources
from patches.generate.intent.comments import comments
from patches.generate.intent.constants import constant_reads, module_constants
from patches.generate.intent.data import is_cuda_word, library_flags
from patches.generate.intent.filters import filtered_after
from patches.generate.intent.libraries import library_uses
from patches.generate.intent.nodes import (
    DEFS,
    Span,
    compound,
    exits,
    finding_span,
    inside,
    span_of,
    unpassed_defaults,
)
from patches.generate.intent.ops import argument_calls, cuda_only_ops, op_calls
from patches.generate.intent.reach import name_calls, reach_elsewhere
from patches.generate.intent.words import words

Hits = list[tuple[int, str]]  # (line, what stays CUDA there)
Remaining = Callable[[Span, Span], Hits]

# a device other than CUDA named in a message: its text is about devices, not CUDA's contract
_OTHERS = "|".join(("cpu", "meta", *vocabulary.NAMED_BACKENDS))
OTHER_DEVICE = re.compile(rf"\b(?:{_OTHERS})\b", re.IGNORECASE)


def _availability(test: ast.AST) -> bool:
    """``test`` asks whether a device is there: ``X.is_available()`` or ``not
    X.is_available()``, alone or as a term of an ``and`` chain (``opt.cuda and not
    torch.cuda.is_available()``: the check that the device asked for is there). The messages of
    such a check are prose."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_availability(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "is_available"
    )


DEVICE_NAME = re.compile(r"(?i)(?:\w+_)?device(?:_type|_index|s)?")


def library_flag(stmt: ast.stmt, qualify=None) -> bool:
    """``stmt`` only sets or asserts a CUDA library's flag (``torch.backends.cudnn.benchmark =
    True``, ``assert torch.backends.cudnn.enabled, "..."``; ``cudnn.benchmark = True`` under
    ``import torch.backends.cudnn as cudnn`` where ``qualify(line, dotted)`` resolves imports)."""
    if isinstance(stmt, ast.Assign):
        subjects = stmt.targets
    elif isinstance(stmt, ast.Assert):
        subjects = [stmt.test]
    else:
        return False
    return all(_qualified(t, qualify).startswith(library_flags()) for t in subjects)


def _qualified(node: ast.AST, qualify) -> str:
    text = ast.unparse(node)
    return (qualify and qualify(node.lineno, text)) or text


def _names_a_device(test: ast.AST) -> bool:
    """``test`` singles a device out: a CUDA word or a device in its names or device strings
    (``x.is_cuda``, ``t.device.type != "cuda"``, ``torch.cuda.device_count() < 2``,
    ``a.device != b.device``). A check of a value (``if not usage < golden * tolerance:``) does
    not, and the words of its refusal describe the value, not a device's contract."""
    for n in ast.walk(test):
        if isinstance(n, ast.Name):
            text = n.id
        elif isinstance(n, ast.Attribute):
            text = n.attr
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            text = n.value
        else:
            continue
        if is_cuda_word(text) or OTHER_DEVICE.search(text) or DEVICE_NAME.fullmatch(text):
            return True
    return False


@dataclass(frozen=True)
class Token:
    span: Span
    text: str
    node: ast.AST | None = None


class Index:
    """Per-file facts: parents, CUDA tokens, the node at a finding."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.parents: dict[ast.AST, ast.AST] = ctx.parents
        self.at: dict[Span, ast.AST] = {}
        tokens: list[Token] = []
        for node in ctx.nodes:
            if not hasattr(node, "end_lineno") or isinstance(node, ast.stmt):
                continue
            self.at[span_of(node)] = node
            text = self._token_text(node)
            if text and is_cuda_word(text) and not self._renamed(node, text):
                tokens.append(Token(span_of(node), text, node))
        tokens.sort(key=lambda t: t.span)
        self.calls = self._local_calls(ctx.tree, ctx.nodes)
        self.name_calls = name_calls(ctx.nodes)  # calls of another file's function, maybe
        self.bindings = bindings(ctx.nodes)
        self.constants = module_constants(ctx.tree, self.bindings)
        self.constant_reads = constant_reads(ctx.nodes, self.constants)
        self.op_calls = op_calls(ctx, cuda_only_ops(getattr(ctx, "tree_index", None), ctx))
        self.argument_calls = argument_calls(ctx)
        self.library_uses = library_uses(ctx)
        self.child_sources = child_sources(ctx.tree, ctx.nodes)
        self.words = words(ctx.nodes)  # the author's own identifiers: no evidence
        self.comments = comments(ctx.source)
        self.tokens = tokens
        self.after_spans = self._after_refusals(ctx.nodes)
        self._starts = [t.span[0] for t in tokens]

    def _renamed(self, node: ast.AST, text: str) -> bool:
        """A name of a helper this run's helper rename makes neutral (``_bnb_cuda`` ->
        ``_bnb_accelerator``, its body with it): no CUDA once the series is applied."""
        named = isinstance(node, (ast.Name, ast.Attribute))
        return named and text in getattr(self.ctx, "renamed_helpers", ())

    def _token_text(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            return node.attr
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            # a device-like string, or the message of a raise/assert/return: a refusal that
            # says CUDA ("Cannot create CUDA storage with quantized dtype") states the contract
            # of the check it guards; other text with spaces (a help line, the message of a
            # missing-device check, a message whose examples name other devices too: 'Only
            # device without device id (e.g. "cpu" or "cuda")') is for people
            text = node.value
            if not any(c.isspace() for c in text):
                return text
            return text if self._message(node) and not OTHER_DEVICE.search(text) else None
        if isinstance(node, (ast.arg, ast.keyword)):
            return node.arg
        if isinstance(node, ast.alias):  # `from torch._inductor import cudagraph_trees`
            return node.name
        return None

    def _message(self, node) -> bool:
        """The text is the message of a refusal whose check singles a device out (a refusal with
        no check, too). Not that of a check of a value (``_names_a_device``), nor that of
        a check that the device is there (``if not torch.cuda.is_available(): raise
        RuntimeError("... only takes effect when CUDA is available")``, ``assert
        torch.cuda.is_available(), "needs CUDA"``): the text names the device its author had,
        the check asks for a device, and the check is judged by the code it guards. Unless the
        check is the arm of a dispatch on a named choice (``elif nproc_per_node == "gpu": if not
        torch.cuda.is_available(): raise ValueError("Cuda is not available.")``, other choices
        in other arms): there the text says which device the choice means."""
        n = self.parents.get(node)
        while n is not None and not isinstance(n, ast.stmt):
            n = self.parents.get(n)
        if isinstance(n, ast.Assert):
            return not _availability(n.test) or self._choice_arm(n)
        if isinstance(n, ast.Raise):
            p = self.parents.get(n)
            test = getattr(p, "test", None) if isinstance(p, ast.If) and n in p.body else None
            if test is None:
                return True
            return (not _availability(test) and _names_a_device(test)) or self._choice_arm(p)
        return isinstance(n, ast.Return)

    def _choice_arm(self, stmt) -> bool:
        """``stmt`` is in the body of an arm of an ``if``/``elif`` chain that compares a value
        with a string (``elif choice == "gpu":``) and has other arms."""
        p = self.parents.get(stmt)
        if not (isinstance(p, ast.If) and stmt in p.body):
            return False
        up = self.parents.get(p)
        chained = bool(p.orelse) or (isinstance(up, ast.If) and p in up.orelse)
        t = p.test
        named = isinstance(t, ast.Compare) and any(
            isinstance(c, ast.Constant) and isinstance(c.value, str) for c in t.comparators
        )
        return chained and named

    def show(self, node: ast.AST) -> str:
        """A short text for a CUDA token: its whole dotted name (``torch.cuda.get_device_capability``)."""
        if isinstance(node, (ast.arg, ast.keyword)):
            return f"{node.arg}="
        while isinstance(self.parents.get(node), ast.Attribute):
            node = self.parents[node]
        text = ast.unparse(node)
        return text if len(text) <= 60 else text[:57] + "..."

    def tokens_in(self, span: Span) -> Iterable[Token]:
        i = bisect.bisect_left(self._starts, span[0])
        while i < len(self.tokens) and self.tokens[i].span[0] <= span[1]:
            t = self.tokens[i]
            if t.span[1] <= span[1]:
                yield t
            i += 1

    def constants_read_in(self, span: Span) -> list[tuple[Span, str]]:
        """The reads of module constants inside ``span``."""
        return _within(self.constant_reads, span)

    def ops_called_in(self, span: Span) -> list[tuple[Span, str]]:
        """The calls of CUDA-only operators (``ops.py``) inside ``span``."""
        return _within(self.op_calls, span)

    def arguments_in(self, span: Span) -> list[tuple[Span, str]]:
        """The calls passing an argument only CUDA takes (``ops.argument_calls``) in ``span``."""
        return _within(self.argument_calls, span)

    def libraries_used_in(self, span: Span) -> list[tuple[Span, str]]:
        """The uses of CUDA-only libraries' names (``libraries.py``) inside ``span``."""
        return _within(self.library_uses, span)

    def library_hits(self, span: Span) -> Hits:
        """Those uses as hits (line, what)."""
        return [(sp[0][0], what) for sp, what in self.libraries_used_in(span)]

    def node_of(self, f) -> ast.AST | None:
        """The expression a finding is about (a call finding's func -> the call)."""
        node = self.at.get(finding_span(f))
        if node is None:
            return None
        parent = self.parents.get(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            return parent
        return node

    # -- one call away: a same-file function or method, resolved by name -----------------------
    def _local_calls(self, tree, nodes) -> list[tuple[Span, ast.Call, ast.AST]]:
        """(span, call, callee) for every call of a module-level function (``f(...)``) or of a
        method of the enclosing class (``self.f(...)``, ``cls.f(...)``) defined in this file,
        and of a module-level class named for CUDA (``_CudaGeneratorWrapper(i)``: the callee is
        its whole body, the methods the object it builds will run; speechbrain's RNG saver). A
        class named otherwise is a larger thing (``Backend(name)``) than the guard's need."""
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
        funcs = {d.name: d for d in tree.body if isinstance(d, kinds)}
        funcs |= {
            d.name: d for d in tree.body if isinstance(d, ast.ClassDef) and is_cuda_word(d.name)
        }
        out = []
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            callee = None
            if isinstance(node.func, ast.Name):
                callee = funcs.get(node.func.id)
            elif (
                isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("self", "cls")
            ):
                callee = self._method(node, node.func.attr)
            if callee is not None:
                out.append((span_of(node), node, callee))
        out.sort(key=lambda x: x[0])
        return out

    def _method(self, node, name: str) -> ast.AST | None:
        cls = next((d for d in self.defs(node) if isinstance(d, ast.ClassDef)), None)
        if cls is None:
            return None
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
        return next((d for d in cls.body if isinstance(d, kinds) and d.name == name), None)

    def reach(self, remaining: Remaining, depth: int = 1) -> Remaining:
        """``remaining`` that also looks ``depth`` calls deep: the body of a same-file function
        or method called inside the span (not the one holding the site itself), and so on, and
        the defaults of the parameters the call leaves out (``_pair(m, k, n)`` of ``def
        _pair(..., device="cuda")``)."""

        def reach(sp: Span, own: Span, depth: int = depth) -> Hits:
            hits = remaining(sp, own)
            if hits or depth <= 0:
                return hits
            for csp, call, callee in self.calls:
                if csp[0] > sp[1]:
                    break
                if not inside(csp, sp) or inside(own, span_of(callee)):
                    continue
                h = reach(span_of(callee.body), own, depth - 1) or [
                    x for d in unpassed_defaults(call, callee) for x in remaining(span_of(d), own)
                ]
                if h:
                    return [(call.lineno, f"{callee.name}() uses {h[0][1]} (line {h[0][0]})")]
            return reach_elsewhere(self.ctx, self.name_calls, sp)

        return reach

    # -- structure ----------------------------------------------------------------------------
    def defs(self, node) -> list[ast.AST]:
        """The definitions (function, class) holding ``node``, innermost first."""
        out, n = [], node
        while n is not None:
            p = self.parents.get(n)
            if isinstance(p, DEFS) and n in p.body:
                out.append(p)
            n = p
        return out

    def top(self, node) -> tuple[ast.AST, ast.stmt]:
        """(the outermost expression holding ``node`` below its statement, the statement)."""
        n, top = node, node
        while True:
            p = self.parents.get(n)
            if p is None or isinstance(p, ast.stmt):
                return top, p if p is not None else n
            n = p
            if hasattr(n, "end_lineno"):
                top = n

    def block_of(self, stmt) -> list | None:
        p = self.parents.get(stmt)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(p, field, None)
            if isinstance(block, list) and stmt in block:
                return block
        return None

    def after(self, stmt) -> list[ast.stmt]:
        block = self.block_of(stmt)
        return block[block.index(stmt) + 1 :] if block is not None else []

    def _work_after(self, stmt) -> list[Span]:
        """The statements after ``stmt`` in its block, less those that only set or assert a CUDA
        library's flag (``[library_flags]``: they run anywhere and do nothing off CUDA)."""
        return [span_of(s) for s in self.after(stmt) if not library_flag(s, self.ctx.qualify)]

    def _instance_methods(self, stmt) -> list[Span]:
        """The class's other methods, where ``stmt`` is a statement of its ``__init__``: what
        ``__init__`` asserts holds for every method of the instance it makes (nnU-Net's benchmark
        trainer asserts CUDA there and reads the GPU's name when training ends, round 37)."""
        init = self.parents.get(stmt)
        cls = self.parents.get(init)
        if not (isinstance(init, ast.FunctionDef) and init.name == "__init__"):
            return []
        if not isinstance(cls, ast.ClassDef) or stmt not in init.body:
            return []
        return [span_of(m) for m in cls.body if isinstance(m, DEFS) and m is not init]

    def _after_refusals(self, nodes) -> set[Span]:
        """The statements after a CUDA precondition: a refusal unless the device is there
        (``assert``, or an ``if`` under ``_availability`` whose body ends in ``raise``) whose
        check names CUDA. Another backend named there (a script's ``if opt.mps and not
        torch.backends.mps.is_available(): raise ...`` after its CUDA one) is no CUDA work the
        check guards: the program asks each device it knows (``remaining``). Not after a check of
        what a backend has (``if TEST_CUDA and torch.cuda.device_count() < x: sys.exit(80)``
        beside XPU's own exit code), nor after an arm that returns the device's own value (``if
        torch.cuda.is_available(): return torch.cuda.get_device_name()`` before XPU's): those
        arms are a per-device dispatch. Read from the file's structure, so a statement after
        both a refusal and a dispatch arm reads the same whichever site is judged first."""
        out: set[Span] = set()
        for node in nodes:
            refusal = isinstance(node, ast.Assert) or (
                isinstance(node, ast.If) and node.body and isinstance(node.body[-1], ast.Raise)
            )
            if refusal and _availability(node.test) and self._names_cuda(node.test):
                out.update(self._work_after(node))
        return out

    def _names_cuda(self, test: ast.AST) -> bool:
        return any(is_cuda_word(self._token_text(n) or "") for n in ast.walk(test))

    def guarded(self, node, top) -> list[tuple[str, list[Span]]]:
        """(kind, spans) of the code the site guards or iterates over: ``cuda-chain`` (the rest
        of its boolean chain, or its predicate's other early answers: ``answers.py``),
        ``cuda-guarded`` (an ``if``/``IfExp``/``while`` body, the block after an ``assert`` (in
        ``__init__``, the class's methods too) or an early exit, a decorated definition),
        ``cuda-loop``, ``cuda-comprehension``."""
        out: list[tuple[str, list[Span]]] = []
        n, negated = node, False
        while True:
            p = self.parents.get(n)
            if isinstance(p, ast.BoolOp):
                rest = [v for v in p.values if v is not n]
                if rest:
                    out.append(("cuda-chain", [span_of(v) for v in rest]))
            elif isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not):
                negated = not negated
            elif isinstance(p, ast.Compare) or isinstance(p, ast.Call):
                pass  # `device_count() > 1`, `bool(P)`, `range(device_count())`, `f.attr(...)`
            elif isinstance(p, (ast.GeneratorExp, ast.ListComp, ast.SetComp)) and n is p.elt:
                pass  # `all(t.is_cuda for t in ts)`: the check, asked of each
            elif isinstance(p, (ast.List, ast.Tuple)) and self._marks(p):
                pass  # `pytestmark = [skipif(...), skipif(...)]`: each mark guards the module
            else:
                end = self._guard_end(p, n, negated)
                if end is not None:
                    out += end
                break
            n = p
        # `@skipIf(not P, ...)` / `@skipUnless(P, ...)`: the decorated definition.
        dec = self.parents.get(top)
        if isinstance(dec, DEFS) and top in dec.decorator_list and isinstance(top, ast.Call):
            out.append(("cuda-guarded", _decorated(dec, top)))
        return out

    def _guard_end(self, p, n, negated: bool) -> list[tuple[str, list[Span]]] | None:
        """What the construct ``p`` that ends the climb from ``n`` guards (None: nothing)."""
        if isinstance(p, ast.IfExp) and p.test is n:
            return [("cuda-guarded", [span_of(p.orelse if negated else p.body)])]
        if isinstance(p, (ast.If, ast.While)) and p.test is n:
            # the whole dispatch: a branch that names another backend makes it deliberate
            out = [("cuda-guarded", [span_of(b) for b in (p.body, p.orelse) if b])]
            if isinstance(p, ast.If) and (exits(p.body) or exits(p.orelse)):
                after = self._work_after(p) + [span_of(s) for s in filtered_after(self, p)]
                if after:
                    out.append(("cuda-guarded", after))
            return out + answer_chain(self.block_of(p), p)
        if isinstance(p, ast.Assert) and p.test is n:
            # `assert torch.cuda.is_available()` guards what follows
            after = self._work_after(p) + self._instance_methods(p)
            return [("cuda-guarded", after)] if after else None
        if isinstance(p, ast.For) and p.iter is n:
            return [("cuda-loop", [span_of(p.body + p.orelse)])]
        if isinstance(p, ast.comprehension) and p.iter is n:
            comp = self.parents.get(p)
            parts = [getattr(comp, a) for a in ("elt", "key", "value") if hasattr(comp, a)]
            parts += [c for g in comp.generators for c in g.ifs]
            return [("cuda-comprehension", [span_of(x) for x in parts])]
        if isinstance(p, DEFS) and n in p.decorator_list:
            return [("cuda-guarded", _decorated(p, n))]
        if self._marks(p):
            # a module's `pytestmark = pytest.mark.skipif(...)` guards every test of the module
            return [("cuda-guarded", [span_of(s) for s in self.ctx.tree.body if s is not p])]
        return None

    def _marks(self, node) -> bool:
        """``node`` is a module-level ``pytestmark = ...`` or the list or tuple it assigns."""
        stmt = self.parents.get(node) if isinstance(node, (ast.List, ast.Tuple)) else node
        return (
            isinstance(stmt, ast.Assign)
            and self.parents.get(stmt) is self.ctx.tree
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets)
        )

    def unit(self, f) -> list[Span]:
        """The spans whose rewrites only work together with ``f``'s: its own statement (the
        header of a compound one) and the code it guards or iterates over (an ``if``/``IfExp``
        body, the rest of an ``and`` chain, the block after an ``assert`` or an early exit, a
        loop body). ``Gate.units`` puts the sites inside one patch."""
        node = self.node_of(f)
        if node is None:
            return [finding_span(f)]
        top, stmt = self.top(node)
        spans = [self.statement_span(top, stmt)]
        for _kind, sps in self.guarded(node, top):
            spans += sps
        return spans

    @staticmethod
    def statement_span(top, stmt) -> Span:
        """The site's statement, or the header expression of a compound one."""
        return span_of(stmt) if not compound(stmt) else span_of(top)


def _decorated(d, dec) -> list[Span]:
    """What a skip gate ``dec`` of the definition ``d`` guards: its body, its other decorators
    and its parameters' defaults (mace's benchmark test, ``device: str = "cuda"``)."""
    args = getattr(d, "args", None)
    defaults = [*args.defaults, *(k for k in args.kw_defaults if k)] if args else []
    return [span_of(d.body), *_other_decorators(d, dec), *(span_of(x) for x in defaults)]


def _other_decorators(d, dec) -> list[Span]:
    """The spans of ``d``'s decorators other than ``dec``: a skip gate guards the parametrisation
    beside it too (skorch: ``@pytest.mark.skipif(not torch.cuda.is_available(), ...)`` over
    ``@pytest.mark.parametrize("device", ["cpu", "cuda"])``)."""
    return [span_of(x) for x in d.decorator_list if x is not dec]


def _within(items: list[tuple[Span, str]], span: Span) -> list[tuple[Span, str]]:
    """The (span, name) of sorted ``items`` that lie inside ``span``."""
    i = bisect.bisect_left(items, span[0], key=lambda it: it[0][0])
    out = []
    while i < len(items) and items[i][0][0] <= span[1]:
        if items[i][0][1] <= span[1]:
            out.append(items[i])
        i += 1
    return out
