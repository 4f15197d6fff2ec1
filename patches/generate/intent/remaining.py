""" "What stays CUDA" in a span, for one round of the gate: a CUDA token that no fixed site (or
its family's companion spans) covers, or a finding this round does not fix. Tokens a fixed
finding covers do not count: its rewrite removes them."""

from __future__ import annotations

from patches.generate.intent.index import Hits, Index, Remaining
from patches.generate.intent.nodes import Site, Span, finding_span, inside


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
    mine = (me.rule, me.line)

    def covered(sp: Span) -> bool:
        for line in range(max(1, sp[0][0] - 20), sp[0][0] + 1):
            for fs in spans.get(line, ()):
                if inside(sp, fs):
                    return True
        return any(inside(sp, c) for c in own_extra)

    def token_hit(unit: Span, own: Span) -> Hits:
        for t in index.tokens_in(unit):
            if not (inside(t.span, own) or covered(t.span)):
                return [(t.span[0][0], index.show(t.node))]
        return []

    def finding_hit(line: int, unit: Span, own: Span) -> Hits:
        for f in by_line.get(line, ()):
            sp = finding_span(f)
            if (f.rule, f.line) in fixed or (f.rule, f.line) == mine or covered(sp):
                continue
            if inside(sp, unit) and not inside(sp, own):
                node = index.at.get(sp)
                what = index.show(node) if node is not None else f.source.strip()
                return [(f.line, f"{f.rule} {what[:60]}")]
        return []

    def remaining(unit: Span, own: Span) -> Hits:
        """The first token hit and, per line, the first finding hit."""
        hits = token_hit(unit, own)
        for line in range(unit[0][0], unit[1][0] + 1):
            hits += finding_hit(line, unit, own)
        return sorted(hits)

    return remaining
