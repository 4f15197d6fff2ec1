"""What a kind looks at (``Probe``: one finding in its file, with the structure around it) and
what it answers (``Evidence``)."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

from patches.generate.intent.data import calls, collective_name, data
from patches.generate.intent.index import Hits, Index, Remaining
from patches.generate.intent.nodes import Span, cpu_literal, finding_span, last_name, negative


@dataclass(frozen=True)
class Evidence:
    kind: str  # a kind of the registry (``kinds.KINDS``)
    line: int  # where the evidence is
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


def first_hit(kind: str, hits: Hits) -> list[Evidence]:
    """The first thing that stays CUDA, as one ``kind`` Evidence ("what (line N)"), or none."""
    if not hits:
        return []
    line, what = hits[0]
    return [Evidence(kind, line, f"{what} (line {line})")]


@dataclass(frozen=True)
class Options:
    """What the gate knows about the run beside the file: the rules whose plain rewrite needs an
    availability check (``unguarded``), the files defining a rule's replacement (rule -> {tree
    path: the replacement's name}), a call family's renames (old name -> new name), and the
    spans of findings this run leaves that a run with more rules rewrites (``neutral_later``:
    not CUDA work on a device's timeline). ``exact``: rules whose rewrite is an exact refactor
    (``cuda=True`` <-> ``device_type="cuda"``: the same behaviour on every device, still naming
    CUDA): the gate asks no evidence for their sites, and their rewritten text still counts as
    CUDA for the other sites' units. ``partial``: rules whose neutral call exists on some
    accelerators' modules only (``torch.get_device_module(device).MemPool``: CUDA's and XPU's):
    their sites are judged as any other, and their rewritten text still counts as device-specific
    for the other sites' units (a ``device.type == "cuda"`` guarding a pool stays)."""

    unguarded: frozenset[str] = frozenset()
    defined_in: dict[str, dict[str, str]] = field(default_factory=dict)
    renames: dict[str, str] = field(default_factory=dict)
    neutral_later: frozenset[Span] = frozenset()
    exact: frozenset[str] = frozenset()
    partial: frozenset[str] = frozenset()


@dataclass
class Probe:
    """One finding ``f`` of the file ``index`` describes, as this round of the gate sees it:
    ``remaining(span, own)`` -> what stays CUDA inside ``span`` (``own`` excluded)."""

    index: Index
    f: object
    remaining: Remaining
    options: Options

    @functools.cached_property
    def node(self) -> ast.AST | None:
        return self.index.node_of(self.f)

    @property
    def ctx(self):
        return self.index.ctx

    @property
    def own(self) -> Span:
        return finding_span(self.f)

    @functools.cached_property
    def defs(self) -> list[ast.AST]:
        return self.index.defs(self.node) if self.node is not None else []

    def climb(self):
        """(node, parent) from the site up through the expressions holding it; the last parent is
        its statement (or None)."""
        n = self.node
        while n is not None and not isinstance(n, ast.stmt):
            parent = self.index.parents.get(n)
            yield n, parent
            n = parent

    def picked(self) -> tuple[ast.IfExp, ast.AST] | None:
        """The first ``IfExp`` whose test holds the site, and the arm it picks where the site
        says CUDA (the other arm for a negated test: ``negative``); None where there is none."""
        for n, parent in self.climb():
            if isinstance(parent, ast.IfExp) and parent.test is n:
                return parent, parent.orelse if negative(n) else parent.body
        return None

    @functools.cached_property
    def cpu_pick(self) -> ast.IfExp | None:
        """The ``IfExp`` holding the site as its test or as its CUDA arm whose other arm is the
        CPU (``"cuda" if torch.cuda.is_available() else "cpu"``, ``torch.device("cpu")``): a
        CUDA-or-CPU device pick; None where there is none."""
        for n, parent in self.climb():
            if not isinstance(parent, ast.IfExp):
                continue
            if parent.test is n:
                other = parent.body if negative(n) else parent.orelse
            elif n is parent.body or n is parent.orelse:
                other = parent.orelse if n is parent.body else parent.body
            else:
                return None
            return parent if cpu_literal(other) else None
        return None

    @functools.cached_property
    def functions(self) -> list[ast.AST]:
        """The functions holding the site, innermost first."""
        return [d for d in self.defs if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))]

    @functools.cached_property
    def outermost_function(self) -> ast.AST | None:
        """The outermost function holding the site (a test method, with the helpers and classes
        it defines), or None at module or class level."""
        return self.functions[-1] if self.functions else None

    @functools.cached_property
    def _top(self) -> tuple[ast.AST, ast.stmt]:
        return self.index.top(self.node)

    @property
    def top(self) -> ast.AST:
        """The outermost expression holding the site below its statement."""
        return self._top[0]

    @property
    def stmt(self) -> ast.stmt:
        return self._top[1]

    @functools.cached_property
    def device_query(self) -> bool:
        """The site calls a device-index query (``[queries] calls``: ``set_device``,
        ``device_count``, ``current_device``)."""
        node = self.node
        if not isinstance(node, ast.Call):
            return False
        q = self.ctx.qualify(node.lineno, ast.unparse(node.func))
        return q in calls("queries")

    def collective_free(self, hits):
        """``hits`` less the collective backend's name (``'nccl'``) where the site is a
        device-index query: a branch or chain on that backend picks "a backend on a device", and
        the query is the one the backend's peers on other accelerators need too
        (``[collectives]``)."""
        if not self.device_query or not self._creates_group:
            return hits
        return [h for h in hits if not collective_name(h[1])]

    @functools.cached_property
    def _creates_group(self) -> bool:
        """The function holding the site creates a process group whose backend is a variable
        (``init_process_group(backend=backend, ...)``: ``[collectives] group_calls``)."""
        fn = next((d for d in self.defs if not isinstance(d, ast.ClassDef)), None)
        if fn is None:
            return False
        names = data()["collectives"]["group_calls"]
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if last_name(f) not in names:
                continue
            args = [k.value for k in node.keywords if k.arg == "backend"] or node.args[:1]
            if args and isinstance(args[0], (ast.Name, ast.Attribute)):
                return True
        return False

    @functools.cached_property
    def reach(self) -> Remaining:
        """``remaining``, also one same-file call deep."""
        return self.index.reach(self.remaining)

    @functools.cached_property
    def reach2(self) -> Remaining:
        """``remaining``, also two same-file calls deep (a predicate's callers' guards)."""
        return self.index.reach(self.remaining, depth=2)

    @functools.cached_property
    def guarded(self) -> list[tuple[str, list[Span]]]:
        return self.index.guarded(self.node, self.top)

    @functools.cached_property
    def arms(self) -> tuple[list[ast.AST], list[ast.AST]]:
        """(the branch the site's condition selects, the other one): an ``if``/``IfExp`` body
        and its ``else``, swapped where the condition is negated (``not``, ``!=``); both empty
        when the site is no such condition."""
        n, negated = self.node, False
        while n is not None:
            if isinstance(n, (ast.UnaryOp, ast.Compare)) and negative(n):
                negated = not negated
            parent = self.index.parents.get(n)
            if isinstance(parent, (ast.If, ast.IfExp)) and parent.test is n:
                body, orelse = (
                    b if isinstance(b, list) else [b] for b in (parent.body, parent.orelse)
                )
                return (orelse, body) if negated else (body, orelse)
            elif not isinstance(
                parent, (ast.BoolOp, ast.UnaryOp, ast.Compare, ast.Attribute, ast.Call)
            ):
                return [], []
            n = parent
        return [], []
