"""What a kind looks at (``Probe``: one finding in its file, with the structure around it) and
what it answers (``Evidence``)."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

from patches.generate.intent.index import Hits, Index, Remaining
from patches.generate.intent.nodes import Span, finding_span


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
    not CUDA work on a device's timeline)."""

    unguarded: frozenset[str] = frozenset()
    defined_in: dict[str, dict[str, str]] = field(default_factory=dict)
    renames: dict[str, str] = field(default_factory=dict)
    neutral_later: frozenset[Span] = frozenset()


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
    def reach(self) -> Remaining:
        """``remaining``, also one same-file call deep."""
        return self.index.reach(self.remaining)

    @functools.cached_property
    def guarded(self) -> list[tuple[str, list[Span]]]:
        return self.index.guarded(self.node, self.top)
