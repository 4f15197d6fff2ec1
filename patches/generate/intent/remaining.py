""" "What stays CUDA" in a span, for one round of the gate: a CUDA token that no fixed site (or
its family's companion spans) covers, or a finding this round does not fix. Tokens a fixed
finding covers do not count: its rewrite removes them. A plain name is judged by what the file
binds to it (``bindings``), not by its spelling."""

from __future__ import annotations

import ast

from patches.generate.intent.child_source import cuda_in_source
from patches.generate.intent.data import is_cuda_word, other_backend_only
from patches.generate.intent.defaults import default_reads
from patches.generate.intent.index import Hits, Index, Remaining
from patches.generate.intent.nodes import Site, Span, finding_span, inside

_NOWHERE: Span = ((0, 0), (0, 0))


class _Remaining:
    def __init__(self, index: Index, by_line, spans, fixed, me, own_extra) -> None:
        self.index, self.by_line, self.spans, self.fixed = index, by_line, spans, fixed
        self.mine = (me.rule, me.line)
        self.own_extra = own_extra
        self.judging: set[str] = set()

    def covered(self, sp: Span) -> bool:
        for line in range(max(1, sp[0][0] - 20), sp[0][0] + 1):
            for fs in self.spans.get(line, ()):
                if inside(sp, fs):
                    return True
        return any(inside(sp, c) for c in self.own_extra)

    def neutral_name(self, node) -> bool:
        """A plain name whose every binding the file shows, with values that stay CUDA nowhere
        (``has_cuda = any(...)`` once its device check is rewritten): its spelling is no
        evidence."""
        if not isinstance(node, ast.Name) or node.id in self.judging:
            return False
        values = self.index.bindings.get(node.id, [None])
        if None in values:
            return False
        self.judging.add(node.id)
        try:
            return not any(self(v, _NOWHERE) for v in values)
        finally:
            self.judging.discard(node.id)

    def token_hit(self, unit: Span, own: Span) -> Hits:
        after = unit in self.index.after_spans  # code after a check: other backends are no work
        for t in self.index.tokens_in(unit):
            if inside(t.span, own) or t.node in self.index.words or self.covered(t.span):
                continue
            if after and other_backend_only(t.text):
                continue
            if self.neutral_name(t.node):
                continue
            return [(t.span[0][0], self.index.show(t.node))]
        return []

    def constant_hit(self, unit: Span, own: Span) -> Hits:
        """A module constant read in ``unit`` whose value stays CUDA (``constants.py``)."""
        after = unit in self.index.after_spans
        for sp, name in self.index.constants_read_in(unit):
            if inside(sp, own) or name in self.judging or is_cuda_word(name):
                continue  # a CUDA-spelled name is a token: token_hit judges it
            self.judging.add(name)
            try:
                for value in self.index.constants[name]:
                    hits = self(value, _NOWHERE)
                    if after:
                        hits = [h for h in hits if not other_backend_only(h[1])]
                    if hits:
                        return [(sp[0][0], f"{name}, set from {hits[0][1]} at line {hits[0][0]}")]
            finally:
                self.judging.discard(name)
        return []

    def op_hit(self, unit: Span, own: Span) -> Hits:
        """A call in ``unit`` of an operator only CUDA implements (``ops.py``)."""
        return _first_outside(
            self.index.ops_called_in(unit),
            own,
            lambda name: f"{name.rsplit('.', 1)[-1]} (an operator only CUDA implements)",
        )

    def argument_hit(self, unit: Span, own: Span) -> Hits:
        """A call in ``unit`` passing an argument only CUDA takes (``ops.argument_calls``)."""
        return _first_outside(
            self.index.arguments_in(unit), own, lambda what: f"{what}, which only CUDA takes"
        )

    def library_hit(self, unit: Span, own: Span) -> Hits:
        """A use in ``unit`` of a name bound to a CUDA-only library (``libraries.py``)."""
        return _first_outside(self.index.libraries_used_in(unit), own, str)

    def child_hit(self, unit: Span, own: Span) -> Hits:
        """Python source in ``unit`` for another interpreter that keeps CUDA work (``child_source``)."""
        for sp, text in self.index.child_sources:
            if inside(sp, unit) and not inside(sp, own):
                what = cuda_in_source(text)
                if what:
                    return [(sp[0][0], f"the Python source it hands on keeps {what}")]
        return []

    def default_hit(self, unit: Span, own: Span) -> Hits:
        """A read in ``unit`` of a parameter whose CUDA default stays (``defaults.py``); not in
        a callee's whole body, where ``index.reach`` judges the defaults a call leaves out."""
        reads = getattr(self.index, "default_reads", None)
        if reads is None:
            reads = self.index.default_reads = default_reads(self.index.ctx.nodes)
        for sp, what, default, body in reads:
            if sp[0] > unit[1]:
                break
            if unit == body:  # a callee's whole body (``reach``): its caller may pass the value
                continue
            if inside(sp, unit) and not inside(sp, own) and not self.covered(default):
                return [(sp[0][0], what)]
        return []

    def finding_hit(self, line: int, unit: Span, own: Span) -> Hits:
        for f in self.by_line.get(line, ()):
            sp = finding_span(f)
            site = (f.rule, f.line)
            if site in self.fixed or site == self.mine or self.covered(sp):
                continue
            if inside(sp, unit) and not inside(sp, own):
                node = self.index.at.get(sp)
                what = self.index.show(node) if node is not None else f.source.strip()
                return [(f.line, f"{f.rule} {what[:60]}")]
        return []

    def __call__(self, unit: Span, own: Span) -> Hits:
        """The first token hit and, per line, the first finding hit."""
        hits = (
            self.token_hit(unit, own)
            or self.constant_hit(unit, own)
            or self.op_hit(unit, own)
            or self.argument_hit(unit, own)
            or self.library_hit(unit, own)
            or self.child_hit(unit, own)
            or self.default_hit(unit, own)
        )
        for line in range(unit[0][0], unit[1][0] + 1):
            hits += self.finding_hit(line, unit, own)
        return sorted(hits)


def _first_outside(items: list[tuple[Span, str]], own: Span, show) -> Hits:
    """The first of ``items`` (sorted (span, name)) outside ``own``, as a hit shown by ``show``."""
    for sp, name in items:
        if not inside(sp, own):
            return [(sp[0][0], show(name))]
    return []


def remaining_of(
    index: Index,
    by_line: dict[int, list],
    spans: dict[int, list[Span]],
    fixed: set[Site],
    me,
    own_extra: list[Span],
) -> Remaining:
    """``remaining(unit, own)`` for finding ``me``: the first CUDA token and, per line, the first
    finding not fixed inside ``unit`` (``own`` excluded), as sorted (line, what) hits. ``spans``: the
    spans of the fixed sites by first line; ``own_extra``: ``me``'s own companion spans."""
    return _Remaining(index, by_line, spans, fixed, me, own_extra)
