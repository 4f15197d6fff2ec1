"""A script's legacy tensor-type alias picked by its CUDA flag (HN507), the PyTorch-GAN shape::

    cuda = True if torch.cuda.is_available() else False
    ...
    if cuda:
        generator.cuda()
    Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
    ...
    valid = Variable(Tensor(imgs.size(0), 1).fill_(1.0), requires_grad=False)
    real_imgs = Variable(imgs.type(Tensor))

becomes (with ``script_flags``' rename of the flag and ``script_device``'s ``.cuda()``)::

    accel = True if torch.accelerator.is_available() else False
    ...
    if accel:
        generator.to(device)
    device = torch.accelerator.current_accelerator() if accel else torch.device("cpu")


    def Tensor(*args):
        return torch.FloatTensor(*args).to(device)
    ...
    valid = Variable(Tensor(imgs.size(0), 1).fill_(1.0), requires_grad=False)
    real_imgs = Variable(imgs.to(device, torch.float32))

The alias becomes a factory of the same CPU type moved to the device the flag picks (the
legacy constructor keeps its meaning: sizes, or data such as a NumPy array), and ``x.type(Alias)``
the ``.to`` of that device and the type's dtype (``_DTYPES``, the legacy names as data). With the
flag false everything stays on the CPU as before; with it true on the current accelerator, as
``torch.cuda.FloatTensor`` put it on the current CUDA device. Where ``script_device`` gives the
script its ``device`` (the accelerator's type, or "cpu") and the flag is exactly the availability
check the gate makes neutral, that ``device`` is the same value and is used; else the device is
written once, at the first alias, from the flag.

The unit (every alias of the file) is left whole, with the reason, where: the file is not a script
(another module could import the alias, ``script_plan.is_script``); an alias is used other than
as ``Alias(...)`` (positional arguments) or ``x.type(Alias)`` (``isinstance(x, Tensor)``, the
alias handed elsewhere, a keyword such as ``device=``); an alias or the flag is bound more than
once; the flag is not a name that is true only with an accelerator (``... and
torch.cuda.is_available()``, ``True if torch.cuda.is_available() else False``); the file binds its
own ``device``; or the gate keeps a site of the unit. A legacy type used directly
(``torch.cuda.FloatTensor(3)``, ``x.type(torch.cuda.LongTensor)``) is ``script_legacy_calls``'.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.idioms_common import expr
from patches.generate.codemods.families.script_device import gets_device
from patches.generate.codemods.families.script_plan import (
    LEGACY_DTYPES,
    binds_device,
    is_script,
    plan,
)
from patches.generate.codemods.families.script_units import bindings_of
from patches.generate.intent import is_call

NAME = "device"
_AVAILABLE = "torch.cuda.is_available"
_DTYPES = LEGACY_DTYPES


@dataclass(frozen=True)
class Alias:
    name: str  # the alias (`Tensor`)
    kind: str  # the legacy type (`FloatTensor`)
    line: int  # the assignment
    types: tuple[int, ...]  # lines of `x.type(Alias)`


@dataclass(frozen=True)
class LegacyUnit:
    flag: str
    exact: bool  # the flag is the availability check itself (no user switch in it)
    flag_line: int
    aliases: tuple[Alias, ...]
    why: str = ""  # non-empty: the unit is left, for this reason
    lines: frozenset[int] = frozenset()  # the alias statements (also of a unit left)


def _flag_value(ctx, value) -> tuple[bool, bool]:
    """(true only with an accelerator, the availability check alone)."""

    def avail(n) -> bool:
        return isinstance(n, ast.Call) and is_call(ctx, n, _AVAILABLE)

    if avail(value):
        return True, True
    if (
        isinstance(value, ast.IfExp)
        and isinstance(value.body, ast.Constant)
        and value.body.value is True
        and isinstance(value.orelse, ast.Constant)
        and value.orelse.value is False
    ):
        inner, exact = _flag_value(ctx, value.test)
        return inner, exact
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And):
        return any(avail(v) for v in value.values), False
    return False, False


def _legacy(ctx, node, prefix: str) -> str | None:
    """``torch.cuda.FloatTensor`` (prefix ``torch.cuda.``) -> ``FloatTensor``."""
    if not isinstance(node, ast.Attribute):
        return None
    q = ctx.qualify(node.lineno, ast.unparse(node))
    if q and q.startswith(prefix) and q[len(prefix) :] in _DTYPES:
        return q[len(prefix) :]
    return None


def _alias(ctx, parents, node: ast.Assign, kind: str) -> Alias | str:
    """The alias ``node`` binds with the lines of its ``x.type(Alias)`` reads, or why it is left:
    every use is ``Alias(...)`` (positional arguments) or ``x.type(Alias)``."""
    name = node.targets[0].id
    if len(bindings_of(ctx.tree, name)) != 1:
        return f"{name} is bound more than once"
    scope = ctx.scope_at(node.lineno)
    types = []
    for n in ctx.nodes:
        if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
            continue
        if scope is not ctx.module and ctx.scope_at(n.lineno) is not scope:
            return f"{name} is used outside the function that binds it (line {n.lineno})"
        p = parents.get(n)
        if isinstance(p, ast.Call) and p.func is n and not p.keywords:
            continue  # Alias(...): the factory takes positional arguments
        if (
            isinstance(p, ast.Call)
            and isinstance(p.func, ast.Attribute)
            and p.func.attr == "type"
            and p.args == [n]
            and not p.keywords
        ):
            types.append(p.lineno)
            continue
        return f"{name} is used other than called or given to .type() (line {n.lineno})"
    return Alias(name, kind, node.lineno, tuple(types))


def _found(ctx) -> list[tuple[ast.Assign, str, str]]:
    """``A = torch.cuda.<T> if <flag> else torch.<T>``: (the assignment, T, the flag), by line."""
    found = []
    for node in ctx.nodes:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.IfExp)
            and isinstance(node.value.test, ast.Name)
        ):
            continue
        kind = _legacy(ctx, node.value.body, "torch.cuda.")
        if kind is None or _legacy(ctx, node.value.orelse, "torch.") != kind:
            continue
        found.append((node, kind, node.value.test.id))
    return sorted(found, key=lambda x: x[0].lineno)


@functools.lru_cache(maxsize=16)
def unit(ctx) -> LegacyUnit | None:
    """The file's aliases and the flag that picks them (None: no alias of this shape)."""
    parents = {c: p for p in ctx.nodes for c in ast.iter_child_nodes(p)}
    found = _found(ctx)
    if not found:
        return None
    flags = {f for _, _, f in found}
    flag = sorted(flags)[0]

    def left(why: str) -> LegacyUnit:
        return LegacyUnit(flag, False, 0, (), why, frozenset(n.lineno for n, _, _ in found))

    if not is_script(ctx):
        return left("not a script: another module may import the alias")
    if len(flags) > 1:
        return left(f"the aliases follow different flags ({', '.join(sorted(flags))})")
    binds = bindings_of(ctx.tree, flag)
    if len(binds) != 1 or not isinstance(parents.get(binds[0]), ast.Assign):
        return left(f"{flag} is bound more than once, or not by one assignment")
    fassign = parents[binds[0]]
    if len(fassign.targets) != 1 or fassign.targets[0] is not binds[0]:
        return left(f"{flag} is bound with other names")
    ok, exact = _flag_value(ctx, fassign.value)
    if not ok:
        return left(f"{flag} is not true only with an accelerator (no availability check in it)")
    if binds_device(ctx.tree) and not gets_device(ctx):
        return left(f"the file binds its own {NAME}: which device the alias means is its choice")
    if len({id(ctx.scope_at(node.lineno)) for node, _, _ in found}) > 1:
        return left("the aliases are bound in different scopes")
    aliases = []
    for node, kind, _ in found:
        alias = _alias(ctx, parents, node, kind)
        if isinstance(alias, str):
            return left(alias)
        aliases.append(alias)
    return LegacyUnit(
        flag, exact, fassign.lineno, tuple(aliases), "", frozenset(a.line for a in aliases)
    )


def alias_line(ctx, line: int) -> bool:
    """``line`` is an alias statement of the file's unit (rewritten whole, or left with it)."""
    u = unit(ctx)
    return u is not None and line in u.lines


def type_to(call: cst.Call, dtype: str) -> cst.Call:
    """``x.type(<legacy type>)`` -> ``x.to(device, torch.<dtype>)``."""
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return call.with_changes(
        func=call.func.with_changes(attr=cst.Name("to")),
        args=(
            call.args[0].with_changes(value=cst.Name(NAME), comma=comma),
            cst.Arg(cst.parse_expression(f"torch.{dtype}")),
        ),
    )


def _lines(u: LegacyUnit) -> frozenset[int]:
    return frozenset(ln for a in u.aliases for ln in (a.line, *a.types))


class LegacyTypes(Family):
    """The alias statements and their ``x.type(Alias)`` reads land in one step (``prepare``)."""

    name = "legacy-types"

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        u = unit(ctx)
        if u is None or u.why or not (lines & _lines(u)):
            return lines
        return lines | _lines(u)

    def _ready(self, eng, u: LegacyUnit) -> str:
        """Why the unit is left this run ("" where it is rewritten)."""
        if u.why:
            return u.why
        gate = eng.gate
        if gate is None:
            return ""
        for a in u.aliases:
            held = [f for f in gate.findings if f.line == a.line and not gate.fixes(f.rule, f.line)]
            if held:
                return f"the gate keeps {held[0].rule} at line {a.line}, an alias of the unit"
        return ""

    def _device(self, eng, u: LegacyUnit) -> tuple[bool, str]:
        """(write the device at the first alias, why the unit is left). Not written: the
        script's ``device``, which ``script_device`` writes (the accelerator's type, or "cpu"),
        is the same value: the flag is the availability check alone, made neutral this run."""
        gate = eng.gate
        p = plan(eng.ctx)
        writes = p is not None and (
            gate is None
            or any(gate.fixes(f.rule, f.line) for f in gate.findings if f.line in p.uses)
        )
        if not writes:
            if binds_device(eng.ctx.tree):
                return False, f"the file binds its own {NAME}"
            return True, ""
        flag_neutral = gate is None or all(
            gate.fixes(f.rule, f.line) for f in gate.findings if f.line == u.flag_line
        )
        if u.exact and flag_neutral:
            return False, ""
        return False, (
            f"the script's {NAME} follows the accelerator, {u.flag} (line {u.flag_line}) "
            "does not: a user switch, or a check the gate keeps"
        )

    def on_ref(self, eng, original, updated):
        """HN507 sites of an alias statement of a unit left: say why they stay."""
        if not isinstance(original, cst.Attribute):
            return None
        specs = eng.specs_for(self.name, original)
        if not specs or not (eng.qualnames(original) & set(specs[0].names)):
            return None
        u = unit(eng.ctx)
        if u is not None and any(a.line == eng.line(original) for a in u.aliases):
            return None  # the alias statement is rewritten whole (on_node)
        if u is not None and u.why and eng.line(original) in u.lines:
            eng.fail(specs[0], original, u.why)
        return None  # elsewhere: script_legacy_calls's

    def on_call(self, eng, original: cst.Call, updated: cst.Call):
        """``x.type(Alias)`` -> ``x.to(<device>, torch.<dtype>)``."""
        u = unit(eng.ctx)
        func = original.func
        if u is None or not (
            isinstance(func, cst.Attribute)
            and func.attr.value == "type"
            and len(original.args) == 1
            and isinstance(original.args[0].value, cst.Name)
        ):
            return None
        line = eng.line(original)
        alias = next(
            (a for a in u.aliases if a.name == original.args[0].value.value and line in a.types),
            None,
        )
        if alias is None or not eng.specs_for(self.name, original):
            return None
        if self._ready(eng, u) or self._device(eng, u)[1]:
            return None
        eng.add_needed_import("torch", node=original)
        return type_to(updated, _DTYPES[alias.kind])

    def on_node(self, eng, original, updated):
        """The alias statement -> the device (first alias, where written here) and the factory."""
        if not isinstance(original, cst.SimpleStatementLine) or len(original.body) != 1:
            return None
        u = unit(eng.ctx)
        if u is None:
            return None
        line = eng.line(original)
        alias = next((a for a in u.aliases if a.line == line), None)
        specs = eng.specs_for(self.name, original)
        if alias is None or not specs:
            return None
        why = self._ready(eng, u)
        write, why = self._device(eng, u) if not why else (False, why)
        if why:
            eng.fail(specs[0], original, why)
            return None
        eng.add_needed_import("torch", node=original)
        eng.done(specs[0], original)
        stmts = []
        if write and alias is u.aliases[0]:
            test = updated.body[0].value.test  # the flag, as renamed in this run
            flag = cst.Module(body=[]).code_for_node(test)
            value = expr(
                eng,
                specs[0],
                original,
                f'torch.accelerator.current_accelerator() if {flag} else torch.device("cpu")',
                f'torch.device(accelerator_api.device_type() if {flag} else "cpu")',
            )
            stmts.append(
                cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(NAME))], value)])
            )
        fn = cst.parse_statement(
            f"def {alias.name}(*args):\n    return torch.{alias.kind}(*args).to({NAME})\n"
        )
        lead = list(original.leading_lines)
        if isinstance(eng.parent(original), cst.Module):  # PEP 8: two blank lines before a def
            blank = [cst.EmptyLine(), cst.EmptyLine()]
            if stmts:
                stmts[0] = stmts[0].with_changes(leading_lines=lead)
                lead = []
            fn = fn.with_changes(leading_lines=blank + [x for x in lead if x.comment])
        elif stmts:
            stmts[0] = stmts[0].with_changes(leading_lines=lead)
        else:
            fn = fn.with_changes(leading_lines=lead)
        out = [*stmts, fn]
        return cst.FlattenSentinel(out)
