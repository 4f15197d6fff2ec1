"""The helper rename's per-file edit: ``Helper`` (one helper and its uses) and the transformer
that renames its definition, callers and comments and binds the deprecated alias."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from patches.generate.helper_rename_body import translate


@dataclass
class Helper:
    name: str
    new: str
    path: str  # the defining file
    owner: str  # the class holding it, "" for a module function
    line: int  # the def statement's span in the original file
    end_line: int
    reason: str = ""  # why it is not renamed ("" = renamed)
    refs: dict[str, list[tuple[int, int, int]]] = field(default_factory=dict)  # path -> spans

    @property
    def renamed(self) -> bool:
        return not self.reason

    def describe(self) -> str:
        where = f"{self.owner}.{self.name}" if self.owner else self.name
        return f"`{where}` ({self.path}:{self.line})"


class _Rename(cst.CSTTransformer):
    def __init__(
        self, helpers: list[Helper], defining: list[Helper], alias: str, path: str
    ) -> None:
        self.by_name = {h.name: h for h in helpers}
        self.defining = {h.name: h for h in defining}
        self.alias = alias
        self.path = path
        self.depth = 0  # function nesting
        self.hits = 0  # CUDA queries the definitions' bodies asked
        self.wrote_alias = False

    def _module_fn(self, name: str) -> Helper | None:
        h = self.by_name.get(name)
        return h if h is not None and not h.owner else None

    def visit_FunctionDef(self, node) -> None:
        self.depth += 1

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        h = self.defining.get(original.name.value)
        if h is None or self.depth != 0:
            return updated
        new, hits = translate(updated, h.new)
        self.hits += hits
        self.wrote_alias = True
        return cst.FlattenSentinel([new, *_alias_lines(h, self.alias)])

    def leave_Attribute(self, original, updated):
        if original.attr.value in self.by_name:
            return updated.with_changes(attr=cst.Name(self.by_name[original.attr.value].new))
        return updated

    def leave_Name(self, original, updated):
        h = self._module_fn(original.value)
        if h is not None:
            return updated.with_changes(value=h.new)
        return updated

    def leave_ImportAlias(self, original, updated):
        name = original.name
        if isinstance(name, cst.Name) and self._module_fn(name.value):
            h = self._module_fn(name.value)
            return updated.with_changes(name=cst.Name(h.new))
        return updated

    def leave_Comment(self, original, updated):
        value = updated.value
        for h in self.by_name.values():
            value = re.sub(rf"\b{re.escape(h.name)}\b", h.new, value)
        return updated.with_changes(value=value)


def _alias_lines(h: Helper, alias: str) -> list[cst.BaseStatement]:
    """The old name bound to the new one after the definition: ``deprecated(...)(new)`` in
    upstream's layout (wrapped where one line would pass 88 columns), a plain alias, or none
    (``alias == "none"``: a test module's helper, which no caller outside the tree imports)."""
    if alias == "none":
        return []
    indent = 4 if h.owner else 0
    if alias == "deprecated":
        stmt = f'{h.name} = deprecated("Use {h.new} instead")({h.new})'
        if indent + len(stmt) > 88:
            stmt = f'{h.name} = deprecated(\n    "Use {h.new} instead",\n)({h.new})'
    else:
        stmt = f"{h.name} = {h.new}  # deprecated alias: use {h.new}"
    blank = [cst.EmptyLine(indent=False)] * (1 if h.owner else 2)
    comment = cst.EmptyLine(
        comment=cst.Comment("# Backward compatibility alias for callers still using the old name.")
    )
    line = cst.parse_statement(stmt)
    return [line.with_changes(leading_lines=[*blank, comment])]
