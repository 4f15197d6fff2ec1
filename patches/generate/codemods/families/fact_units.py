"""Fact units (``fact_guard``): a device query a script only reports and the simple statements
right after it that read it, found with ``ast`` once per file."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from patches.generate.codemods.families.sync_guard import runs_on_cpu
from patches.generate.intent.nodes import qualified

PROPERTIES = "torch.cuda.get_device_properties"
MEMORY_INFO = ("torch.cuda.mem_get_info", "torch.cuda.memory.mem_get_info")
# fields of every backend's device properties (CUDA's and XPU's both have them)
COMMON_FIELDS = frozenset({"name", "total_memory"})
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)


@dataclass(frozen=True)
class Unit:
    head: int  # the query's assignment (one line: the unit needs no other statement there)
    end: int  # the last line of the last statement reading what it binds
    query: str  # PROPERTIES or one of MEMORY_INFO


def _bound(stmt: ast.stmt) -> set[str]:
    return {
        n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _reads(stmt: ast.stmt, names: set[str]) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)
        for n in ast.walk(stmt)
    )


def _head(ctx, stmt: ast.stmt) -> tuple[str, set[str]] | None:
    """(the query, the names it binds) for ``x = <fact query>(...)`` / ``a, b = ...``, a common
    field read in the value (``x = <properties>.total_memory / 2**30``) or in a call made for its
    effect (``print(f"{<properties>.name}")``, binding nothing)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        outer = stmt.value
        args = [*outer.args, *(k.value for k in outer.keywords)]
        found = [a for a in args if _field_read(ctx, a, alone=False)]
        return (PROPERTIES, set()) if len(found) == 1 and _calls(stmt) == 2 else None
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    elts = target.elts if isinstance(target, ast.Tuple) else [target]
    if not elts or not all(isinstance(e, ast.Name) for e in elts):
        return None
    if not isinstance(value, ast.Call):
        return (PROPERTIES, {e.id for e in elts}) if _field_read(ctx, value) else None
    query = qualified(ctx, value.func)
    if query != PROPERTIES and query not in MEMORY_INFO:
        return None
    return query, {e.id for e in elts}


def _calls(node: ast.AST) -> int:
    return sum(isinstance(n, ast.Call) for n in ast.walk(node))


def _field_read(ctx, value: ast.expr, alone: bool = True) -> bool:
    """``value`` reads a common field of the properties and calls nothing else:
    ``torch.cuda.get_device_properties(0).total_memory / 2**30`` (``alone``: not the bare call)."""
    calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)]
    if len(calls) != 1 or qualified(ctx, calls[0].func) != PROPERTIES:
        return False
    if not alone and value is calls[0]:
        return False
    return any(
        isinstance(n, ast.Attribute) and n.value is calls[0] and n.attr in COMMON_FIELDS
        for n in ast.walk(value)
    )


def _unit(ctx, block: list[ast.stmt], i: int) -> Unit | None:
    head = _head(ctx, block[i])
    if head is None or not runs_on_cpu(ctx, block[i].lineno):
        return None
    query, own = head
    names = set(own)  # own, and what the readers bind from it
    last = block[i]
    for stmt in block[i + 1 :]:
        if not isinstance(stmt, _SIMPLE) or not _reads(stmt, names):
            break
        if stmt.lineno <= last.end_lineno:
            return None  # `a; b`: the statement does not own its line
        names |= _bound(stmt)
        last = stmt
    span = range(block[i].lineno, last.end_lineno + 1)
    for node in ast.walk(ctx.scope_at(block[i].lineno).node):
        if isinstance(node, ast.Name) and node.id in names and node.lineno not in span:
            return None  # read or bound outside the unit: the check would leave it unbound
        if isinstance(node, (ast.Global, ast.Nonlocal)) and names & set(node.names):
            return None
        if query == PROPERTIES and isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in own:
                if node.attr not in COMMON_FIELDS:
                    return None  # device_module leaves it
    return Unit(block[i].lineno, last.end_lineno, query)


def units(ctx) -> dict[int, Unit]:
    """Head line -> the fact unit there, for the file (cached on ``ctx``)."""
    found = getattr(ctx, "_fact_units", None)
    if found is not None:
        return found
    found = {}
    for node in ast.walk(ctx.tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or not block or not isinstance(block[0], ast.stmt):
                continue
            for i, stmt in enumerate(block):
                if i and stmt.lineno <= block[i - 1].end_lineno:
                    continue
                unit = _unit(ctx, block, i)
                if unit is not None:
                    found[unit.head] = unit
    # a query that reads another's facts is a reader of that unit, not a unit of its own
    found = {
        h: u
        for h, u in found.items()
        if not any(o.head < h <= o.end for o in found.values() if o is not u)
    }
    ctx._fact_units = found
    return found


def unit_at(ctx, line: int) -> Unit | None:
    return next((u for u in units(ctx).values() if u.head <= line <= u.end), None)


def checked_by_unit(eng, line: int) -> bool:
    """``line`` is in a unit this step checks (its query is rewritten here): a value read there
    needs no check of its own."""
    unit = unit_at(eng.ctx, line)
    if unit is None:
        return False
    return any(
        unit.query in spec.names and unit.head in lines and eng.fixes(spec.rule, unit.head)
        for spec, lines in eng.gated
    )
