"""A remote device on CUDA (HN509's ``"<worker>/cuda[:N]"`` / ``"rank:<n>/cuda[:N]"``,
torch.distributed.remote_device's format: sharding placements, RemoteModule targets) -> an
f-string on the module's device type, upstream's form (``torch/testing/_internal/distributed/
_shard/sharded_tensor/_test_ops_common.py`` in torch 2.13 -> 2.14)::

    import torch                         import torch

                                         device_type = acc.type if (acc := torch.accelerator.current_accelerator()) else "cpu"

    PLACEMENTS = [                 ->    PLACEMENTS = [
        "rank:0/cuda:0",                     f"rank:0/{device_type}:0",
        "rank:1/cuda:1",                     f"rank:1/{device_type}:1",
    ]                                    ]

On CUDA the placement is the same string as before; on another accelerator its device; without
one ``rank:0/cpu:0``, which ``torch.distributed._remote_device`` parses as the CPU. A test module
(``base.is_test_file``, not a package ``__init__``) gets ``device_type`` written after its imports
(``idioms_common.insert_device_line``, the line ``ModuleDevice`` and ``ScriptDevice`` write),
unless it binds the name itself: a module-level ``device_type`` bound before the first site is
used as it is; one bound anywhere else (a parameter, a local) leaves the sites outside its scope.
Library code is rewritten only where a ``device_type`` is already in scope (a module picks no
device at import time). ``f"{worker}/cuda:0"`` gets the same treatment in its text part.
"""

from __future__ import annotations

import ast

import libcst as cst

from audits.python.strings import full_text, remote_device
from patches.generate.codemods.families.base import is_test_file
from patches.generate.codemods.families.idioms_common import (
    first_line_of,
    insert_device_line,
    string_value,
)
from patches.generate.codemods.families.module_device import ModuleLineFamily, _binds
from patches.generate.codemods.families.script_plan import after_imports as _after_imports
from patches.generate.codemods.families.script_plan import first_line
from patches.generate.torch_floor import forbids

NAME = "device_type"
FAMILY = "device-defaults"  # HN509's family: a "cuda" string anywhere else
# upstream's module-level device type (the accelerator's, CPU when there is none)
UPSTREAM_FORM = 'acc.type if (acc := torch.accelerator.current_accelerator()) else "cpu"'
_CUDA = ("cuda",)


def _is_remote(node: ast.AST) -> bool:
    text = full_text(node)
    return text is not None and remote_device(text, _CUDA)


def _module_binding(tree: ast.Module) -> int | None:
    """The line of a module-level ``device_type = ...`` (the first), else None."""
    for stmt in tree.body:
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == NAME for t in targets):
            return stmt.lineno
    return None


class RemoteDevices(ModuleLineFamily):
    name = "remote-devices"
    serves = (FAMILY,)

    def _find(self, ctx, lines: frozenset[int]) -> None:
        """The sites a module-level ``device_type`` serves, and where to write it."""
        if not is_test_file(ctx.path) or ctx.path.endswith("__init__.py"):
            return
        if forbids(ctx, UPSTREAM_FORM):
            return  # the line needs a newer torch than the project's
        sites = frozenset(
            n.lineno
            for n in ctx.nodes
            if isinstance(n, (ast.Constant, ast.JoinedStr)) and n.lineno in lines and _is_remote(n)
        )
        if not sites:
            return
        bound = _module_binding(ctx.tree)
        if bound is not None:  # the module's own: the sites after it
            self.sites = frozenset(s for s in sites if s > bound)
            return
        if _binds(ctx.tree, NAME):
            return  # a parameter or a local of that name: not the module's to add
        top = _after_imports(ctx)
        if top is None or top.lineno > min(sites):
            return
        self.anchor, self.sites = first_line(top), sites

    def _usable(self, eng, node) -> bool:
        """A device type is there for ``node``: the module's (written or its own) or one
        bound before it in its scope."""
        line = eng.line(node)
        return line in self.sites or eng.ctx.bound_before(line, NAME)

    def _taken(self, eng) -> bool:
        rules = {s.rule for s, _ in eng.gated if s.family == FAMILY}
        return any(eng.fixes(r, ln) for r in rules for ln in self.sites)

    def on_literal(self, eng, original, updated):
        value = string_value(original)
        if value is None or not remote_device(value, _CUDA):
            return None
        specs = eng.specs_for(FAMILY, original)
        if not specs or not self._usable(eng, original):
            return None
        worker, _, device = value.rpartition("/")
        index = device[len("cuda") :]  # "" or ":N"
        body = worker.replace("{", "{{").replace("}", "}}")
        text = f"{body}/{{{NAME}}}{index}"
        q = original.quote
        if q in text or "\\" in text:
            return None
        eng.done(specs[0], original)
        return cst.FormattedString(
            parts=[
                cst.FormattedStringText(f"{body}/"),
                cst.FormattedStringExpression(cst.Name(NAME)),
                *([cst.FormattedStringText(index)] if index else []),
            ],
            start=f"f{q}",
            end=q,
        )

    def on_node(self, eng, original, updated):
        if isinstance(original, cst.FormattedString):
            return self._fstring(eng, original, updated)
        if not isinstance(original, cst.Module) or self.anchor is None:
            return None
        if first_line_of(eng, original) != self.anchor:
            return None
        specs = [s for s, _ in eng.gated if s.family == FAMILY]
        if not specs or not self._taken(eng):
            return None
        return insert_device_line(eng, specs[0], original, updated, NAME, UPSTREAM_FORM)

    def _fstring(self, eng, original: cst.FormattedString, updated: cst.FormattedString):
        """``f"{worker}/cuda:0"`` -> ``f"{worker}/{device_type}:0"``: the ``/cuda`` of its last
        text part (the one the device follows)."""
        try:
            node = ast.parse(cst.Module([]).code_for_node(original).strip(), mode="eval").body
        except SyntaxError:
            return None
        if not _is_remote(node):
            return None
        specs = eng.specs_for(FAMILY, original)
        if not specs or not self._usable(eng, original):
            return None
        parts = list(updated.parts)
        for i in range(len(parts) - 1, -1, -1):
            p = parts[i]
            if isinstance(p, cst.FormattedStringText) and "/cuda" in p.value:
                head, _, tail = p.value.rpartition("/cuda")
                if tail and not tail.startswith(":"):
                    return None
                new = [
                    cst.FormattedStringText(f"{head}/"),
                    cst.FormattedStringExpression(cst.Name(NAME)),
                    *([cst.FormattedStringText(tail)] if tail else []),
                ]
                eng.done(specs[0], original)
                return updated.with_changes(parts=[*parts[:i], *new, *parts[i + 1 :]])
        return None
