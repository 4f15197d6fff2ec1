"""HN101 ``torch.cuda.is_available()``: one family that owns its analysis and its state.

The neutral predicate answers "is there any accelerator", so the rewrite is right only when the
code it guards is neutral too (the shared intent gate, ``patches/generate/intent/``, decides that for every
family). What is HN101's own:

* the device-pick idiom (upstream's own rewrite, pytorch/tutorials#3167): ``"cuda" if
  torch.cuda.is_available() else other`` and its ``if ...: d = "cuda" else: d = other`` form,
  whose CUDA literal is rewritten in the same step as the predicate (``prepare`` adds the
  literal's line to the step);
* the device-pick *block* (``if torch.cuda.is_available(): d = "cuda" / elif <mps>: d = "mps"
  / else: d = "cpu"``) rewritten whole (``pick_block``), and the pick over several backends as
  an expression or a function's whole body (``pick_arms``);
* in test files, ``@skipIf(not torch.cuda.is_available(), ...)`` / ``@skipUnless(...)`` become
  upstream's ``TEST_ACCELERATOR`` gate;
* the built check beside it: ``torch.backends.cuda.is_built() and torch.cuda.is_available()``
  (either order, inside a longer ``and`` too) -> ``torch.accelerator.is_available()``, in the
  step the availability check is rewritten (a companion: the gate counts it fixed with the
  check). ``is_available()`` is False on a build without CUDA, so the built check adds nothing
  beside it (upstream's benchmark timer: ``if torch.accelerator.is_available():
  torch.accelerator.synchronize()``). The built check alone, or in an ``or``, stays.
"""

from __future__ import annotations

import ast

import libcst as cst

from patches.generate.codemods.families import pick_arms, pick_block
from patches.generate.codemods.families.base import COMMON_UTILS, is_test_file
from patches.generate.codemods.families.call_rename import CallRename
from patches.generate.codemods.families.idioms_common import (
    and_terms,
    api_target,
    conjuncts,
    join_and,
    statement,
)
from patches.generate.intent import CUDA_DEVICE_STR, Span, cuda_literal, is_call, span_of

IS_AVAILABLE = "torch.cuda.is_available"
IS_BUILT = "torch.backends.cuda.is_built"
_CURRENT = "torch.accelerator.current_accelerator()"


def _bare(ctx, node: ast.AST, name: str) -> bool:
    return is_call(ctx, node, name) and not node.args and not node.keywords


def built_checks(ctx) -> dict[int, list[Span]]:
    """availability-check line -> the spans of the ``torch.backends.cuda.is_built()`` terms of an
    ``and`` chain holding that bare ``torch.cuda.is_available()`` call."""
    out: dict[int, list[Span]] = {}
    for node in ctx.nodes:
        if not (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And)):
            continue
        terms = conjuncts(node)
        built = [span_of(t) for t in terms if _bare(ctx, t, IS_BUILT)]
        for t in terms if built else ():
            if _bare(ctx, t, IS_AVAILABLE):
                out.setdefault(t.lineno, []).extend(
                    b for b in built if b not in out.get(t.lineno, [])
                )
    return out


def _single_assign(stmts):
    if len(stmts) == 1 and isinstance(stmts[0], ast.Assign) and len(stmts[0].targets) == 1:
        return stmts[0]
    return None


def _pick_if(ctx, node: ast.If) -> ast.Assign | None:
    """``if P: d = "cuda" else: d = other`` -> the ``d = "cuda"`` statement."""
    body, other = _single_assign(node.body), _single_assign(node.orelse)
    if body is None or other is None or cuda_literal(ctx, body.value) is None:
        return None
    if ast.dump(body.targets[0]) != ast.dump(other.targets[0]):
        return None
    return body


def picks(ctx) -> dict[int, tuple[int, Span]]:
    """literal line -> (line of the bare ``is_available()`` call whose device-pick it is, the
    literal's span)."""
    out: dict[int, tuple[int, Span]] = {}
    for node in ctx.nodes:
        if isinstance(node, ast.IfExp):
            test, lit = node.test, node.body
        elif isinstance(node, ast.If):
            assign = _pick_if(ctx, node)
            test, lit = node.test, (assign.value if assign is not None else None)
        else:
            continue
        if (
            lit is not None
            and isinstance(test, ast.Call)
            and not test.args
            and not test.keywords
            and is_call(ctx, test, IS_AVAILABLE)
            and cuda_literal(ctx, lit) is not None
        ):
            out[lit.lineno] = (test.lineno, span_of(lit))
    return out


class AvailabilityGuard(CallRename):
    """``torch.cuda.is_available()`` -> ``torch.accelerator.is_available()``, its device-pick
    literal, or ``TEST_ACCELERATOR`` in a test gate (see the module docstring)."""

    name = "guard"
    claims = (IS_AVAILABLE,)

    def __init__(self) -> None:
        self.picks: dict[int, tuple[int, Span]] | None = None  # literal line -> (call, span)
        self.blocks: dict[int, pick_block.Block] | None = None  # call line -> pick block
        self.chains: dict[int, pick_arms.Chain] | None = None  # call line -> expression pick
        self.flags: dict[int, pick_block.FlagBlock] | None = None  # call line -> flag-form pick
        self.built: dict[int, list[Span]] | None = None  # call line -> its chain's built checks

    def _built(self, ctx) -> dict[int, list[Span]]:
        if self.built is None:
            self.built = built_checks(ctx)
        return self.built

    def _flags(self, ctx) -> dict[int, pick_block.FlagBlock]:
        if self.flags is None:
            self.flags = pick_block.flag_blocks(ctx)
        return self.flags

    def _picks(self, ctx):
        if self.picks is None:
            self.picks = picks(ctx)
        return self.picks

    def _blocks(self, ctx) -> dict[int, pick_block.Block]:
        if self.blocks is None:
            # a function that is only the pick: its whole body, not its first `if`
            self.blocks = pick_block.blocks(ctx) | pick_arms.functions(ctx)
        return self.blocks

    def _chains(self, ctx) -> dict[int, pick_arms.Chain]:
        if self.chains is None:
            self.chains = pick_arms.chains(ctx)
        return self.chains

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        """The call lines plus the device-pick literals (and whole pick blocks) they rewrite in
        the same step."""
        more = {lit for lit, (c, _) in self._picks(ctx).items() if c in lines}
        for ln, spans in self._built(ctx).items():
            if ln in lines:
                more.update(sp[0][0] for sp in spans)
        for ln, b in self._blocks(ctx).items():
            if ln in lines:
                more.update(range(b.start, b.end + 1))
                ctx.blocks.add((b.start, b.end))
        for ln, f in self._flags(ctx).items():
            if ln in lines:
                more.update(range(f.start, f.end + 1))
                ctx.blocks.add((f.start, f.end))
                for a, z in f.drop:  # one region with the check's line: never an empty body
                    more.update(range(a, z + 1))
                    ctx.blocks.add((min(a, ln), max(z, ln)))
        return lines | frozenset(more)

    def companions(self, ctx, spec, lines: frozenset[int]) -> dict[tuple[str, int], list]:
        out: dict[tuple[str, int], list] = {}
        for call, sp in self._picks(ctx).values():
            if call in lines:
                out.setdefault((spec.rule, call), []).append(sp)
        for ln, b in self._blocks(ctx).items():
            if ln in lines:
                out.setdefault((spec.rule, ln), []).extend(b.spans)
        for ln, c in self._chains(ctx).items():
            if ln in lines:
                out.setdefault((spec.rule, ln), []).extend(c.spans)
        for ln, f in self._flags(ctx).items():
            if ln in lines:
                out.setdefault((spec.rule, ln), []).extend(f.spans)
        for ln, spans in self._built(ctx).items():
            if ln in lines:
                out.setdefault((spec.rule, ln), []).extend(spans)
        return out

    def on_node(self, eng, original, updated):
        """A whole device-pick block or expression (``pick_block``), in the step its
        ``is_available()`` is."""
        if isinstance(original, cst.IfExp):
            return self._chain(eng, original)
        if isinstance(original, cst.BooleanOperation):
            return self._drop_built(eng, original, updated)
        flag = self._flag_node(eng, original, updated)
        if flag is not None:
            return flag
        if not isinstance(original, (cst.If, cst.SimpleStatementLine)):
            return None
        line, end = eng.line(original), eng.end_line(original)
        blocks = self._blocks(eng.ctx).values()
        b = next((b for b in blocks if b.start == line or (line, end) in b.stmts), None)
        specs = eng.specs_for(self.name, original)
        if b is None or not specs or not eng.fixes(specs[0].rule, b.call_line):
            return None
        if b.stmts[1:] and (line, end) in b.stmts[1:]:
            return cst.RemovalSentinel.REMOVE  # the function form's other statements
        if not isinstance(original, cst.If) or line != b.start:
            return None
        if end != (b.stmts[0][1] if b.stmts else b.end):
            return None  # a header region (parsed with a `pass` body), not the block
        eng.outcome.applied.append((specs[0].rule, b.call_line))
        self._literals_done(eng, b.start, b.end)
        api = self._imports(eng, specs[0], original)
        text = pick_block.replacement(b, f"{_CURRENT}.type", api)
        return statement(eng, text).with_changes(leading_lines=original.leading_lines)

    def _drop_built(self, eng, original, updated):
        """An ``and`` chain's ``torch.backends.cuda.is_built()`` terms, where a term of it is the
        availability check this step rewrites (``built_checks``)."""
        if not isinstance(original.operator, cst.And):
            return None
        terms, new = and_terms(original), and_terms(updated)
        if len(terms) != len(new):
            return None

        def bare(t, name) -> bool:
            return isinstance(t, cst.Call) and not t.args and name in eng.qualnames(t.func)

        built = [bare(t, IS_BUILT) for t in terms]
        checks = [t for t in terms if bare(t, IS_AVAILABLE)]
        if not any(built) or not any(
            (specs := eng.specs_for(self.name, t)) and eng.fixes(specs[0].rule, eng.line(t))
            for t in checks
        ):
            return None
        for t, b in zip(terms, built):
            if b:
                eng.remove_unused_import_by_node(t.func)
        return join_and([n for n, b in zip(new, built) if not b], updated)

    def _flag_node(self, eng, original, updated):
        """The flag-form pick's ``if`` (rewritten whole) and the other arms' names (deleted), in
        the step its availability check is rewritten."""
        if not isinstance(original, (cst.If, cst.SimpleStatementLine)):
            return None
        line = eng.line(original)
        for f in self._flags(eng.ctx).values():
            specs = [s for s, ls in eng.gated if s.family == self.name]
            if not specs or not eng.fixes(specs[0].rule, f.call_line):
                continue
            if isinstance(original, cst.If) and line == f.start and eng.end_line(original) == f.end:
                self._literals_done(eng, f.start, f.end)
                text = pick_block.flag_replacement(f, self._imports(eng, specs[0], original))
                new = statement(eng, text)  # the test as other families left it (a renamed flag)
                return new.with_changes(test=updated.test, leading_lines=original.leading_lines)
            if isinstance(original, cst.SimpleStatementLine) and any(
                a == line and eng.end_line(original) == z for a, z in f.drop
            ):
                return cst.RemovalSentinel.REMOVE
        return None

    def _chain(self, eng, original: cst.IfExp):
        """The expression pick (``pick_arms.Chain``), at its outermost conditional: the CUDA
        check may be any of its arms' tests."""
        exps = pick_arms.if_arms(original)
        tests = [e.test for e in exps if isinstance(e.test, cst.Call)]
        test = next((t for t in tests if IS_AVAILABLE in eng.qualnames(t.func)), None)
        if test is None:
            return None
        line = eng.line(test)
        c = self._chains(eng.ctx).get(line)
        specs = eng.specs_for(self.name, test)
        if c is None or c.arms != len(exps) or not specs or not eng.fixes(specs[0].rule, line):
            return None
        eng.done(specs[0], test)
        self._literals_done(eng, eng.line(original), eng.end_line(original))
        api = self._imports(eng, specs[0], original)
        new = cst.parse_expression(pick_block.value_text(c.kind, f"{_CURRENT}.type", api))
        return new.with_changes(lpar=original.lpar, rpar=original.rpar)

    def _literals_done(self, eng, start: int, end: int) -> None:
        """The unit's literals' own findings (HN502, HN503, HN509) go with it (and their own
        family's failure to rewrite one alone is moot: the unit's rewrite removes it)."""
        done = set()
        for spec, lines in eng.gated:
            if spec.family != self.name and {"cuda", "torch.device"} & set(spec.names):
                for ln in lines:
                    if start <= ln <= end and eng.fixes(spec.rule, ln):
                        eng.outcome.applied.append((spec.rule, ln))
                        done.add((spec.rule, ln))
        failed = eng.outcome.failed
        failed[:] = [f for f in failed if (f[0], f[1]) not in done]

    def _imports(self, eng, spec, node) -> bool:
        api = api_target(spec)
        eng.add_needed_import("torch", node=node)
        if api:
            eng.add_needed_import("accelerator_api", node=node)
        return api

    def on_literal(self, eng, original, updated):
        return self._pick(eng, original)

    def on_call(self, eng, original, updated):
        specs = eng.specs_for(self.name, original)
        if not specs:
            return None
        names = eng.qualnames(original.func)
        if names == {"torch.device"}:
            return self._pick(eng, original)
        if IS_AVAILABLE in names and _test_gate(eng, original, updated):
            # Upstream's form in test files: `@skipIf(not TEST_ACCELERATOR, ...)`.
            eng.done(specs[0], original)
            eng.remove_unused_import_by_node(original.func)
            eng.add_needed_import(COMMON_UTILS, "TEST_ACCELERATOR")
            return cst.Name("TEST_ACCELERATOR")
        return super().on_call(eng, original, updated)

    def _pick(self, eng, original):
        """The CUDA literal of a device-pick in the form of the current accelerator: ``"cuda"``
        -> ``torch.accelerator.current_accelerator().type``, ``torch.device("cuda")`` ->
        ``torch.accelerator.current_accelerator()``, an index ``N`` (``"cuda:N"``,
        ``torch.device("cuda", N)``) -> ``torch.device(...current_accelerator().type, N)``, and
        as a string where it was one (``"cuda:N"`` -> ``f"{...current_accelerator().type}:N"``:
        funasr's CLI hands its pick to code that calls ``device.startswith("cuda")``). Only in
        the IfExp body / assigned value, in the step (and only where) the call is
        rewritten: a call the gate keeps keeps its literal."""
        call_line = (self.picks or {}).get(eng.line(original), (None,))[0]
        specs = eng.specs_for(self.name, original)
        if call_line is None or not specs or not eng.fixes(specs[0].rule, call_line):
            return None
        parent = eng.parent(original)
        if not (
            (isinstance(parent, cst.IfExp) and parent.body is original)
            or (isinstance(parent, cst.Assign) and parent.value is original)
        ):
            return None
        if isinstance(original, cst.SimpleString):
            text = original.evaluated_value if not original.prefix.lower().strip("ru") else None
            m_ = CUDA_DEVICE_STR.fullmatch(text) if isinstance(text, str) else None
            if m_ is None:
                return None
            index, device = m_.group(1), False
        elif (
            isinstance(original, cst.Call)
            and original.args
            and isinstance(original.args[0].value, cst.SimpleString)
        ):
            m_ = CUDA_DEVICE_STR.fullmatch(original.args[0].value.evaluated_value or "")
            if m_ is None or original.args[0].keyword is not None:
                return None
            index, device = m_.group(1), True
            if len(original.args) == 2 and isinstance(original.args[1].value, cst.Integer):
                index = original.args[1].value.value
            elif len(original.args) != 1:
                return None
        else:
            return None
        eng.add_needed_import("torch", node=original)
        line = eng.line(original)
        for spec, lines in eng.gated:  # the literal's own findings (HN502, HN503, ...)
            if (
                spec.family != self.name
                and line in lines
                and {"cuda", "torch.device"} & set(spec.names)
            ):
                eng.done(spec, original)
        if index is not None and not device:
            return cst.parse_expression(f'f"{{{_CURRENT}.type}}:{index}"')
        if index is not None:
            return cst.parse_expression(f"torch.device({_CURRENT}.type, {index})")
        return cst.parse_expression(_CURRENT if device else f"{_CURRENT}.type")


def _test_gate(eng, original: cst.Call, updated: cst.Call) -> bool:
    """``torch.cuda.is_available()`` as the condition of a ``@skipIf(not ...)`` /
    ``@skipUnless(...)`` decorator in a test file (not common_utils itself, which defines it)."""
    if updated.args or not is_test_file(eng.ctx.path) or eng.module_name == COMMON_UTILS:
        return False
    node = original
    parent = eng.parent(node)
    negated = isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)
    if negated:
        node, parent = parent, eng.parent(parent)
    call = eng.parent(parent) if isinstance(parent, cst.Arg) and parent.keyword is None else None
    if not isinstance(call, cst.Call) or not call.args or call.args[0] is not parent:
        return False
    func = (
        call.func.attr.value
        if isinstance(call.func, cst.Attribute)
        else getattr(call.func, "value", "")
    )
    want = "skipIf" if negated else "skipUnless"
    return func == want and isinstance(eng.parent(call), cst.Decorator)
