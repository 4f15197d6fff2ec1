"""``x.cuda()`` (HN501), ``device="cuda"`` and ``x.to("cuda")`` (HN502) in a test module that
places on CUDA in several places and holds no device for them: the module gets one
``DEVICE_TYPE`` and every such place moves to it, upstream's form
(``torch/testing/_internal/common_fsdp.py`` in torch 2.4 -> 2.13: ``device=DEVICE_TYPE``)::

    import torch                          import torch
                                          DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    def init(model):               ->     def init(model):
        return model.cuda()                   return model.to(DEVICE_TYPE)

On CUDA ``.to("cuda")`` is the current CUDA device, as ``.cuda()`` was; without an accelerator
the CPU, so the harness runs on a CPU-only machine too. ``DEVICE_TYPE`` is written after the
imports, before the first statement that could run a site. Only for test modules (a library
module would pick its device at import time), only with at least ``MIN_SITES`` plain places
(``.cuda()`` / ``.cuda(non_blocking=...)``, a plain ``"cuda"`` device) that no other family
rewrites (no ``device`` or ``device_type`` in scope, not a method of a class holding
``self.device``), and only where the
module binds no ``DEVICE_TYPE`` itself (``OwnDevice`` reuses a module-level one). A module that
also places tensors on CUDA device indices (``.cuda(rank)``: per-rank multi-GPU tests) is left
whole: its plain calls mean "the device this rank set", and one device type beside calls that
stay CUDA would be half a migration.
"""

from __future__ import annotations

import ast

import libcst as cst
import libcst.matchers as m

from patches.generate.codemods.families.base import Family, is_test_file
from patches.generate.codemods.families.expect_device import expectations
from patches.generate.codemods.families.held_self import class_device
from patches.generate.codemods.families.idioms_common import (
    TYPE_OR_CPU,
    cuda_call_to,
    first_line_of,
    insert_device_line,
)
from patches.generate.codemods.families.literals import DEFAULTS, device_param
from patches.generate.codemods.families.method_to_device import storage_form
from patches.generate.codemods.families.own_device import TO_DEVICE
from patches.generate.codemods.families.script_plan import after_imports as _after_imports
from patches.generate.codemods.families.script_plan import binds as _binds
from patches.generate.codemods.families.script_plan import first_line as _first
from patches.generate.codemods.families.script_plan import is_plain_cuda as _plain
from patches.generate.torch_floor import forbids

NAME = "DEVICE_TYPE"
MIN_SITES = 2  # one call is a local decision; several are the module's device
_CUDA_METHOD = m.Call(func=m.Attribute(attr=m.Name("cuda")))
_HELD = ("device", "device_type")
LITERAL = "device-literal"


def _indexed(call: ast.AST) -> bool:
    """``x.cuda(i)`` / ``x.cuda(device=i)`` with something other than a device (``t.device``,
    ``t.get_device()``, a name ending in ``device``, ``OwnDevice``'s): a CUDA device index
    (``.cuda(rank)``), per-device placement one device type does not express. Also the form a
    rewrite gives it (``x.to(torch.device(device_type, rank))``, ``x.to(torch.device(i))``), so a
    second run decides the module as the first did."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return False
    if call.func.attr == "to" and call.args:
        return _device_index(call.args[0])
    if call.func.attr != "cuda":
        return False
    named = [*call.args, *(k.value for k in call.keywords if k.arg == "device")]
    return any(not _own_device(a) for a in named)


def _own_device(a: ast.AST) -> bool:
    """``t.device``, ``t.get_device()``, a name ending in ``device``: a device, not an index."""
    if isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute):
        return a.func.attr == "get_device" and not a.args
    return (isinstance(a, ast.Attribute) and a.attr == "device") or (
        isinstance(a, ast.Name) and a.id.endswith("device")
    )


def _device_index(a: ast.AST) -> bool:
    """``torch.device(<type>, <index>)`` or ``torch.device(<index>)`` (not a string, a device
    type's name, nor a tensor's own device index)."""
    if not (isinstance(a, ast.Call) and ast.unparse(a.func) == "torch.device" and a.args):
        return False
    if len(a.args) == 2:
        return True
    (only,) = a.args
    if isinstance(only, ast.Constant):
        return isinstance(only.value, int)
    if isinstance(only, ast.Name):
        return not only.id.lower().endswith(("type", "device"))
    return not _own_device(only) and not isinstance(only, (ast.JoinedStr, ast.Attribute))


def _literal_places(tree: ast.Module, node: ast.AST) -> list[int]:
    """The lines of a plain ``"cuda"`` that is a call's ``device=``, ``x.to("cuda")``'s device,
    or a positional argument a function of the module takes as its ``device`` (the string's own
    line: a call may span several)."""
    if not isinstance(node, ast.Call):
        return []
    values = [k.value for k in node.keywords if k.arg == "device"]
    if isinstance(node.func, ast.Attribute) and node.func.attr == "to" and node.args:
        values.append(node.args[0])
    at = device_param(tree, node.func.id) if isinstance(node.func, ast.Name) else None
    if at is not None and at < len(node.args):
        if not any(isinstance(a, ast.Starred) for a in node.args[:at]):
            values.append(node.args[at])
    return [v.lineno for v in values if isinstance(v, ast.Constant) and v.value == "cuda"]


def _unheld(ctx, line: int) -> bool:
    """No family has a device for a ``.cuda()`` on ``line``: none in scope, no ``self.device``."""
    return not any(ctx.in_scope(line, n) for n in _HELD) and not class_device(ctx, line)


class ModuleLineFamily(Family):
    """A family that writes one module-level line before ``anchor`` for its ``sites``: the
    anchor's top-level statement joins the step of the family it serves (``serves[0]``).
    ``_find(ctx, lines)`` sets both, once per file."""

    def __init__(self) -> None:
        self.anchor: int | None = None  # the statement the module's line is written before
        self.sites: frozenset[int] = frozenset()  # lines rewritten on that line's name
        self.done_prepare = False

    def _find(self, ctx, lines: frozenset[int]) -> None:
        raise NotImplementedError

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        if spec.family not in self.serves:
            return lines
        if not self.done_prepare:
            self.done_prepare = True
            self._find(ctx, lines)
        if self.anchor is None or not self.sites & lines:
            return lines
        top = next(s for s in ctx.tree.body if _first(s) <= self.anchor <= s.end_lineno)
        ctx.blocks.add((self.anchor, top.end_lineno))
        return lines | {self.anchor}


class ModuleDevice(ModuleLineFamily):
    """HN501's lines (``to-device``) and HN502's (``device-literal``: ``device="cuda"``,
    ``x.to("cuda")``): the sites this family takes, and the anchor statement (one region;
    ``DEVICE_TYPE`` is written before it) joins the step of either rule that first uses it."""

    name = "module-device"
    serves = (TO_DEVICE, LITERAL, DEFAULTS)

    def _find(self, ctx, lines: frozenset[int]) -> None:
        if not is_test_file(ctx.path) or ctx.path.endswith("__init__.py"):
            return
        if forbids(ctx, TYPE_OR_CPU):
            return  # the line needs a newer torch than the project's: no ``.to(DEVICE_TYPE)``
        if _binds(ctx.tree, NAME) or any(_indexed(n) for n in ctx.nodes):
            return
        held = [n.lineno for n in ctx.nodes if _plain(n)]
        held += [ln for n in ctx.nodes for ln in _literal_places(ctx.tree, n)]
        sites = frozenset(ln for ln in held if _unheld(ctx, ln))
        top = _after_imports(ctx)
        # an expectation of a placement's device type names DEVICE_TYPE too (expect_device)
        said = sum(e.placement in sites for e in expectations(ctx).values())
        if len(sites) + said < MIN_SITES or top is None or top.lineno > min(sites):
            return
        self.anchor, self.sites = _first(top), sites
        # the device-literal family's places (``literals.module_type_at``)
        ctx.module_device_sites = (NAME, sites)

    def _taken(self, eng) -> bool:
        """Some site of this step passes the gate (else no ``DEVICE_TYPE`` is written)."""
        rules = {s.rule for s, _ in eng.gated if s.family in self.serves}
        return any(eng.fixes(r, ln) for r in rules for ln in self.sites)

    def on_call(self, eng, original, updated):
        return storage_form(eng, original, self._on_cuda(eng, original, updated))

    def _on_cuda(self, eng, original, updated):
        if self.anchor is None or not m.matches(original, _CUDA_METHOD):
            return None
        line = eng.line(original)
        if line not in self.sites:
            return None
        specs = eng.specs_for(TO_DEVICE, original)
        new = cuda_call_to(updated, NAME) if specs else None
        if new is None:
            return None
        eng.done(specs[0], original)
        return new

    def on_node(self, eng, original, updated):
        """``DEVICE_TYPE = ...`` before the anchor statement (its region is parsed alone, at
        module level: the anchor is the region's first statement)."""
        if not isinstance(original, cst.Module) or self.anchor is None:
            return None
        if first_line_of(eng, original) != self.anchor:
            return None
        specs = [s for s, _ in eng.gated if s.family in self.serves]
        if not specs or not self._taken(eng):
            return None
        return insert_device_line(eng, specs[0], original, updated, NAME)
