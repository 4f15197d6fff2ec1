"""The fixed-point gate: which candidate sites of one file this run rewrites, and why the others
are left (the evidence of the kinds in ``kinds.ORDER``)."""

from __future__ import annotations

import ast
import functools
from typing import Iterable

from patches.generate.intent.index import Index, Remaining
from patches.generate.intent.kinds import REGISTRY
from patches.generate.intent.nodes import SKIP_GATES, Site, Span, finding_span, inside, last_name
from patches.generate.intent.paths import is_test_file
from patches.generate.intent.probe import Evidence, Options, Probe
from patches.generate.intent.remaining import remaining_of

# evidence not about CUDA: a site left only for these keeps no other site CUDA
_NOT_CUDA = ("redundant", "unguarded", "torch-optional", "type-checking")


def evidence(probe: Probe, late: bool = True) -> list[Evidence]:
    """Why the site of ``probe`` is left (empty: nothing says so): every kind of the registry in
    order, one evidence per kind and per thing that stays CUDA; the ``LATE`` kinds only when
    ``late``."""
    out: list[Evidence] = []
    for kind in REGISTRY:
        if getattr(kind, "LATE", False) and not late:
            continue
        if getattr(kind, "ALONE", False) and out:
            continue
        if getattr(kind, "NEEDS_NODE", True) and probe.node is None:
            continue
        out += kind.detect(probe)
    seen, kept = set(), []
    for e in out:
        key = e.detail if e.kind.startswith("cuda-") and "(line" in e.detail else e
        if e.kind in seen or key in seen:
            continue
        seen |= {e.kind, key}
        kept.append(e)
    return kept


class Gate:
    """The decision for every candidate site of one file::

    gate = Gate(ctx, findings, candidates, companions, options)  # candidates: {(rule, line)}
    left = gate.settle(failed)   # {(rule, line): [Evidence, ...]}; failed: sites a family could
                                 # not rewrite (they stay CUDA too)
    gate.fixes(rule, line)       # the decision for one site

    A family's ``companions`` (spans it rewrites together with a site, e.g. HN101's device-pick
    literal) count as fixed with that site."""

    def __init__(
        self,
        ctx,
        findings,
        candidates: set[Site],
        companions=None,
        options: Options | None = None,
        index: Index | None = None,
    ) -> None:
        self.index = index or Index(ctx)  # ``index``: the file's, built once for every gate
        self.options = options or Options()
        self.findings = [f for f in findings if f.kind != "branch"]
        self.candidates = set(candidates)
        self.companions: dict[Site, list[Span]] = companions or {}
        self.left: dict[Site, list[Evidence]] = {}
        self.failed: set[Site] = set()  # sites a family could not rewrite (``settle``)
        self._by_line: dict[int, list] = {}
        for f in self.findings:
            self._by_line.setdefault(f.line, []).append(f)

    def fixes(self, rule: str, line: int) -> bool:
        return (rule, line) in self.candidates and (rule, line) not in self.left

    def stays(self, line: int) -> bool:
        """What is on ``line`` stays CUDA in this run: no finding there (nothing rewrites it), or
        one that is not a candidate, is left, or that its family could not rewrite."""
        found = self._by_line.get(line, ())
        return not found or any(
            not self.fixes(f.rule, line) or (f.rule, line) in self.failed for f in found
        )

    def settle(self, failed: Iterable[Site] = (), late: bool = True) -> dict[Site, list[Evidence]]:
        """Iterate to the least fixed point: a site is left when evidence remains with every
        site not left counted as fixed; ``failed`` sites (a family could not rewrite them) stay
        CUDA too. The ``LATE`` kinds speak (when ``late``) after the others have settled, so that
        a site they would also leave is named by what its code is."""
        failed = self.failed = set(failed)
        left = self._settle(dict(self.left), failed, late=False)
        if late and self.late_speaks(left, failed):
            left = self._settle(left, failed, late=True)
        self.left = left
        return left

    def late_speaks(self, left: dict[Site, list[Evidence]], failed: set[Site]) -> bool:
        """A ``LATE`` kind has evidence for a site still let through (asked alone: the others
        had none at the fixed point)."""
        late = [k for k in REGISTRY if getattr(k, "LATE", False)]
        for f in self.findings:
            site = (f.rule, f.line)
            if site in self.candidates and site not in left and site not in failed:
                if f.rule in self.options.exact:
                    continue
                probe = Probe(self.index, f, lambda *_: [], self.options)
                if probe.node is not None and any(k.detect(probe) for k in late):
                    return True
        return False

    def _settle(self, left: dict[Site, list[Evidence]], failed: set[Site], late: bool):
        """``settle``'s fixed point from ``left``, asking the ``LATE`` kinds when ``late``."""
        # an exact refactor's site is rewritten but still names CUDA, and a partial one's neutral
        # call exists on some accelerators only: not fixed for the others (a partial site counts
        # the other partial sites fixed: a pool made by the device's module, used by it)
        exact = {c for c in self.candidates if c[0] in self.options.exact}
        partial = {c for c in self.candidates if c[0] in self.options.partial}
        for _ in range(20):
            gone = {k for k, ev in left.items() if ev and all(e.kind in _NOT_CUDA for e in ev)}
            among = (self.candidates - set(left) - failed - exact) | gone
            fixed = among - partial
            spans = self._fixed_spans(fixed)
            gates = self._gates if gone else set()
            strict = (fixed - gone, self._fixed_spans(fixed - gone)) if gates else None
            wider = (among, self._fixed_spans(among)) if partial else (fixed, spans)
            new = dict(left)
            for f in self.findings:
                site = (f.rule, f.line)
                if site not in self.candidates or site in new or site in failed:
                    continue
                if f.rule in self.options.exact:
                    continue  # an exact refactor: the same behaviour on every device
                mine = wider if site in partial else strict if site in gates else (fixed, spans)
                remaining = self._remaining(mine[1], mine[0], f)
                ev = evidence(Probe(self.index, f, remaining, self.options), late)
                if ev:
                    new[site] = ev
            if new.keys() == left.keys():
                break
            left = new
        return left

    @functools.cached_property
    def _gates(self) -> set[Site]:
        """The candidate sites in a test module's skip gates (a skip decorator, ``pytestmark``, an
        ``if`` whose body skips):
        the machines a gate admits run its tests' code as this run leaves it, so for a gate a
        site left only as ``unguarded`` still names CUDA (gsplat's ``device =
        torch.device("cuda:0")`` at import, read by the tests its gates admit)."""
        if not is_test_file(self.index.ctx.path):
            return set()
        out = set()
        for f in self.findings:
            site = (f.rule, f.line)
            node = self.index.node_of(f) if site in self.candidates else None
            while node is not None and not isinstance(node, ast.stmt):
                parent = self.index.parents.get(node)
                if isinstance(node, ast.Call) and last_name(node.func) in SKIP_GATES:
                    out.add(site)
                    break
                node = parent
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
            ):
                out.add(site)
            if isinstance(node, ast.If) and _skips(node.body):
                out.add(site)  # `if device == gpu and not ...: pytest.skip(...)` (torchsde)
        return out

    def _remaining(self, spans: dict[int, list[Span]], fixed: set[Site], me) -> Remaining:
        own_extra = self.companions.get((me.rule, me.line), [])
        return remaining_of(self.index, self._by_line, spans, fixed, me, own_extra)

    def neutral(self, sites: set[Site]) -> frozenset[Span]:
        """The spans of ``sites`` this gate lets through, or leaves only for reasons that are
        not about CUDA (``redundant``, ``unguarded``)."""
        return frozenset(
            finding_span(f)
            for f in self.findings
            if (f.rule, f.line) in sites
            and all(e.kind in _NOT_CUDA for e in self.left.get((f.rule, f.line), []))
        )

    def units(self) -> list[set[Site]]:
        """The sites this run rewrites, joined when one lies in the other's ``Index.unit`` (a
        guard and the query it guards, two calls of one statement): each set must land in one
        patch, or a prefix of the series holds a half-neutral unit (``torch.cuda.device_count()
        if torch.accelerator.is_available() else 8``)."""
        fixed = [f for f in self.findings if self.fixes(f.rule, f.line)]
        parent: dict[Site, Site] = {(f.rule, f.line): (f.rule, f.line) for f in fixed}

        def root(x: Site) -> Site:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for f in fixed:
            spans = self.index.unit(f)
            for g in fixed:
                if g is not f and any(inside(finding_span(g), sp) for sp in spans):
                    parent[root((g.rule, g.line))] = root((f.rule, f.line))
        out: dict[Site, set[Site]] = {}
        for x in parent:
            out.setdefault(root(x), set()).add(x)
        return [u for u in out.values() if len(u) > 1]

    def _fixed_spans(self, fixed: set[Site]) -> dict[int, list[Span]]:
        out: dict[int, list[Span]] = {}
        for f in self.findings:
            if (f.rule, f.line) in fixed:
                sp = finding_span(f)
                out.setdefault(sp[0][0], []).append(sp)
        for site, sps in self.companions.items():
            if site in fixed:
                for sp in sps:
                    out.setdefault(sp[0][0], []).append(sp)
        return out


def _skips(body: list[ast.stmt]) -> bool:
    """The block ends in a skip: ``pytest.skip(...)``, ``self.skipTest(...)``, ``raise
    unittest.SkipTest(...)``."""
    last = body[-1] if body else None
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        return "skip" in last_name(last.value.func).lower()
    if isinstance(last, ast.Raise) and last.exc is not None:
        exc = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
        return "skip" in last_name(exc).lower()
    return False
