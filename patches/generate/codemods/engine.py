"""The libcst transformer that applies the fixes for one region of a file.

A region is the statement holding a finding (or a compound statement's header), parsed alone:
libcst's cost grows with the text it sees, and the file-level facts the families need (scopes,
import bindings) come from one ``ast`` pass over the file (``context.FileContext``), not from
libcst's ScopeProvider/QualifiedNameProvider. Import additions and removals are only recorded
here and applied to the whole file afterwards (``imports.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import ExpressionContextProvider, ParentNodeProvider, PositionProvider

from audits.model import expand_name
from patches.generate.codemods.context import FileContext
from patches.generate.torch_floor import too_new


@dataclass(frozen=True)
class FixSpec:
    """How to fix one catalogue rule: the family that rewrites it and the names involved.

    ``names`` are what the rule matches (dotted names, identifiers, method or attribute names);
    ``replacement`` is the catalogue's (``{name}`` = last component of the matched name), already
    mapped to the chosen target; ``args`` is the catalogue's ``fix.args``.
    """

    rule: str
    family: str  # key into FAMILIES
    names: tuple[str, ...]
    replacement: str
    safety: str
    args: tuple[tuple[str, object], ...] = ()
    ours: frozenset[str] = frozenset()  # --target accelerator_api: names our layer provides

    def new_for(self, matched: str) -> str:
        new = expand_name(self.replacement, matched)
        last = new.rsplit(".", 1)[-1]
        if last in self.ours and not new.startswith("torch.testing."):
            return f"accelerator_api.{last}"
        return new

    def arg(self, key: str, default=None):
        return dict(self.args).get(key, default)


@dataclass
class Outcome:
    applied: list[tuple[str, int]] = field(default_factory=list)  # (rule, line)
    failed: list[tuple[str, int, str]] = field(default_factory=list)  # (rule, line, why)


class Engine(cst.CSTTransformer):
    """Dispatches Call / Name / Attribute nodes at finding lines to the family handlers."""

    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider, ExpressionContextProvider)

    def __init__(
        self,
        ctx: FileContext,
        gated: list[tuple[FixSpec, frozenset[int]]],
        families: dict,
        delta: int = 0,
        gate=None,
    ) -> None:
        super().__init__()
        self.ctx = ctx
        self.gate = gate  # intent.Gate of the file, or None (no findings given: no gate)
        self.delta = delta  # region line + delta = file line
        # The file's own module, so a rename never makes a module import from itself.
        self.module_name = ctx.module_name
        self.gated = gated
        self.families = families
        self.outcome = Outcome()
        self.adds: list[tuple[str, str | None]] = []  # (module, name) or (module, None)
        self.removes: set[str] = set()  # local names whose import may now be unused
        self.device_lines: set[str] = set()  # names of module-level device lines written
        self.uses: set[str] = set()  # names the rewritten region uses
        self.floor = getattr(ctx, "torch_floor", None)  # torch_floor.Floor or None

    # -- helpers the families use ---------------------------------------------------------
    def line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line + self.delta

    def end_line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).end.line + self.delta

    def qualnames(self, node: cst.CSTNode) -> set[str]:
        dotted = dotted_name(node)
        q = self.ctx.qualify(self.line(node), dotted) if dotted else None
        return {q} if q else set()

    def in_scope(self, node: cst.CSTNode, name: str) -> bool:
        return self.ctx.in_scope(self.line(node), name)

    def defined_locally(self, node: cst.Name) -> bool:
        """Whether ``node``'s name is bound in this file by something other than an import."""
        return self.ctx.defined_locally(self.line(node), node.value)

    def parent(self, node: cst.CSTNode):
        return self.get_metadata(ParentNodeProvider, node, None)

    def is_attr_name(self, node: cst.Name) -> bool:
        parent = self.get_metadata(ParentNodeProvider, node, None)
        return isinstance(parent, cst.Attribute) and parent.attr is node

    def expr_context(self, node: cst.CSTNode):
        return self.get_metadata(ExpressionContextProvider, node, None)

    def fixes(self, rule: str, line: int) -> bool:
        """The intent gate lets ``rule``'s site at ``line`` through (it may be in another region:
        a family rewriting a companion of that site asks)."""
        return self.gate is None or self.gate.fixes(rule, line)

    def specs_for(self, family: str, node: cst.CSTNode):
        """(spec) for each spec of ``family`` whose finding lines include ``node``'s line."""
        mine = [(s, lines) for s, lines in self.gated if s.family == family]
        if not mine:
            return []
        line = self.line(node)
        return [s for s, lines in mine if line in lines]

    def add_needed_import(
        self, module: str, name: str | None = None, node: cst.CSTNode | None = None
    ) -> None:
        if name is None and node is not None:
            # A function that imports torch locally (a lazy import, often on purpose) needs no
            # new module-level import.
            found = self.ctx.binding(self.line(node), module)
            if found and "import" in found[1] and found[0].imports.get(module) == module:
                return
        self.adds.append((module, name))

    def remove_unused_import_by_node(self, node: cst.CSTNode) -> None:
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name):
            self.removes.add(root.value)

    def reference(
        self, original: cst.BaseExpression, old: str, new: str, bare: bool = False
    ) -> cst.BaseExpression:
        """An expression naming ``new`` written where ``original`` named ``old``; schedules imports.

        Same module (``TEST_CUDA`` -> ``TEST_ACCELERATOR``): keep the reference's style, only
        the last name changes; a bare imported name stays bare (``from m import NEW``).
        Otherwise the full dotted ``new`` with ``import <root>``: ``torch.accelerator.synchronize``
        reads unambiguously where a bare ``synchronize`` would not. ``bare``: a bare name stays
        bare whatever module it came from (test-harness identifiers read best that way).
        """
        old_mod = old.rsplit(".", 1)[0] if "." in old else ""
        new_mod, new_attr = new.rsplit(".", 1)
        if old_mod == new_mod and isinstance(original, cst.Attribute):
            return original.with_changes(attr=cst.Name(new_attr))
        self.remove_unused_import_by_node(original)
        if isinstance(original, cst.Name) and (old_mod == new_mod or not old_mod or bare):
            self.add_needed_import(new_mod, new_attr)
            return cst.Name(new_attr)
        self.add_needed_import(new.split(".")[0], node=original)
        return cst.parse_expression(new)

    def done(self, spec: FixSpec, node: cst.CSTNode) -> None:
        self.outcome.applied.append((spec.rule, self.line(node)))

    def fail(self, spec: FixSpec, node: cst.CSTNode, why: str) -> None:
        self.outcome.failed.append((spec.rule, self.line(node), why))

    # -- dispatch ---------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        return False  # import statements are handled by the import bookkeeping, not renamed

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def _dispatch(self, hook: str, original, updated):
        """The first family's answer to ``hook`` (``on_call``, ``on_literal``, ``on_node``,
        ``on_ref``), held to the project's torch floor (``_floored``); else ``updated``."""
        applied = len(self.outcome.applied)
        for fam in self.families.values():
            ask = getattr(fam, hook, None)
            new = ask(self, original, updated) if ask is not None else None
            if new is not None:
                return self._floored(original, new, applied)
        return updated

    def _floored(self, original, new, applied: int):
        """``new``, unless it calls an API newer than the project's torch floor: then the sites
        it and the code under it rewrote (``applied`` on: this answer's) are left
        (``torch_floor``) and ``original`` stays as it was."""
        if self.floor is None or new is original:
            return new
        code = cst.Module([]).code_for_node
        newer = too_new(code(original), code(new), self.floor)
        if not newer:
            return new
        first, last = self.line(original), self.end_line(original)
        undo = [
            (i, site)
            for i, site in enumerate(self.outcome.applied)
            if i >= applied or first <= site[1] <= last
        ]
        api, since = newer[0]
        why = f"needs torch>={since} ({api}); the project supports {self.floor}"
        for i, (rule, line) in reversed(undo):
            del self.outcome.applied[i]
            self.outcome.failed.append((rule, line, why))
        return original

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return self._dispatch("on_call", original, updated)

    def leave_SimpleString(
        self, original: cst.SimpleString, updated: cst.SimpleString
    ) -> cst.BaseExpression:
        return self._dispatch("on_literal", original, updated)

    # Whole idioms (idioms_*.py families): expressions and statements a family may replace as
    # a unit (`"cuda" if "cuda" in d else "cpu"`, `f"cuda:{i}"`, `flag = True`,
    # `memory_stats()["allocated_bytes.all.peak"]`).
    def leave_IfExp(self, original, updated):
        return self._node(original, updated)

    def leave_Comparison(self, original, updated):
        return self._node(original, updated)

    def leave_UnaryOperation(self, original, updated):
        return self._node(original, updated)

    def leave_BooleanOperation(self, original, updated):
        return self._node(original, updated)

    def leave_FormattedString(self, original, updated):
        return self._node(original, updated)

    def leave_BinaryOperation(self, original, updated):
        return self._node(original, updated)

    def leave_Assign(self, original, updated):
        return self._node(original, updated)

    def leave_Param(self, original, updated):
        return self._node(original, updated)

    def leave_Subscript(self, original, updated):
        return self._node(original, updated)

    # Statements a family rewrites whole (``ctx.blocks``: a device-pick block, a sync helper;
    # the module, for a statement written before its first one).
    def leave_If(self, original, updated):
        return self._node(original, updated)

    def leave_SimpleStatementLine(self, original, updated):
        return self._node(original, updated)

    def leave_Module(self, original, updated):
        return self._node(original, updated)

    def _node(self, original, updated):
        return self._dispatch("on_node", original, updated)

    def leave_Attribute(
        self, original: cst.Attribute, updated: cst.Attribute
    ) -> cst.BaseExpression:
        return self._ref(original, updated)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return self._ref(original, updated)

    def _ref(self, original, updated):
        return self._dispatch("on_ref", original, updated)


def dotted_name(node: cst.CSTNode) -> str | None:
    """``"a.b.c"`` for a pure Name/Attribute chain ``a.b.c``, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))
