"""The script-flags family's shared pieces: ``Unit``, its AST helpers, and local-name units."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from patches.generate.codemods.families.script_device import is_script
from patches.generate.intent import is_call

_AVAILABLE = "torch.cuda.is_available"
_WORD = re.compile(r"(?i)cuda")


def _neutral(name: str) -> str:
    return _WORD.sub(lambda m: "ACCEL" if m.group().isupper() else "accel", name)


@dataclass(frozen=True)
class Unit:
    kind: str  # "name" (a local), "flag" (an argparse option's dest), "attr" (a namespace's)
    old: str
    new: str
    anchor: int  # the line whose fix makes the value neutral (the assignment), 0 for a flag
    define: int  # the assignment / add_argument line
    reads: tuple[tuple[int, int], ...]  # (first, last) lines of each statement unit reading it
    namespaces: frozenset[str] = frozenset()  # a flag: the names holding the parsed namespace
    parent: "Unit | None" = None  # a name set only under `if <parent>:`: renamed with it
    target: tuple = ()  # an "attr": the span of the attribute the assignment sets
    end: int = 0  # an "attr": the assignment's last line


def _stmt_unit(node, parents) -> tuple[int, int]:
    """The lines of the statement reading ``node``; the whole ``if``/``while`` when it is in the
    test (what it guards becomes reachable on every accelerator)."""
    p = parents.get(node)
    while p is not None and not isinstance(p, ast.stmt):
        p = parents.get(p)
    if p is None:
        return node.lineno, node.end_lineno
    return p.lineno, p.end_lineno  # an `if`'s test: p is the `if`, body and all


def bindings_of(tree, name: str) -> list[ast.AST]:
    """Every node of ``tree`` that binds ``name`` (an assignment target, a parameter, a def or
    class, an import, a ``global``/``nonlocal``)."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            out.append(n)
        elif isinstance(n, ast.arg) and n.arg == name:
            out.append(n)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if n.name == name:
                out.append(n)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == name for a in n.names):
                out.append(n)
        elif isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            out.append(n)
    return out


def identifiers(nodes) -> set[str]:
    """Every identifier among ``nodes`` (names, attributes, parameters, definitions, import
    aliases): a new name must be none of them."""
    out = set()
    for n in nodes:
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.alias):
            out.add(n.asname or n.name.split(".")[0])
    return out


def _local_units(ctx, parents, taken) -> list[Unit]:
    out = []
    for node in ctx.nodes:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _WORD.search(node.targets[0].id)
        ):
            continue
        name = node.targets[0].id
        if not any(is_call(ctx, c, _AVAILABLE) for c in ast.walk(node.value)):
            continue
        scope = ctx.scope_at(node.lineno)
        if scope is ctx.module and not is_script(ctx):
            continue  # a library's module-level name: another module may import it
        new = _neutral(name)
        if new in taken:
            continue
        stores, reads, ok = 0, [], True
        for n in ctx.nodes:
            if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
                ok = False
            elif isinstance(n, ast.arg) and n.arg == name:
                ok = False
            elif isinstance(n, ast.Name) and n.id == name:
                b = ctx.binding(n.lineno, name)
                if b is None or b[0] is not scope:
                    ok = False  # another binding of the same name: leave them all
                elif isinstance(n.ctx, ast.Load):
                    reads.append(_stmt_unit(n, parents))
                else:
                    stores += 1
        if ok and stores == 1:
            out.append(Unit("name", name, new, node.lineno, node.lineno, tuple(reads)))
    return out + [g for u in out for g in _guarded(ctx, parents, taken, u)]


def _guarded(ctx, parents, taken, flag: Unit) -> list[Unit]:
    """CUDA-named locals set once in the body of ``if <flag>:`` from code with no CUDA word
    (``cuda_kwargs = {"num_workers": 1, "pin_memory": True}``): the options of the run on the
    accelerator, renamed with the flag."""
    out = []
    for node in ctx.nodes:
        tests = (
            {f"{ns}.{flag.old}" for ns in flag.namespaces} if flag.kind == "attr" else {flag.old}
        )
        if not (isinstance(node, ast.If) and ast.unparse(node.test) in tests):
            continue
        for stmt in node.body:
            if not (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and _WORD.search(stmt.targets[0].id)
                and not _WORD.search(ast.unparse(stmt.value))
            ):
                continue
            name, scope = stmt.targets[0].id, ctx.scope_at(stmt.lineno)
            new = _neutral(name)
            if new in taken:
                continue
            uses = [n for n in ctx.nodes if isinstance(n, ast.Name) and n.id == name]
            if any(ctx.scope_at(n.lineno) is not scope for n in uses) or [
                n for n in uses if not isinstance(n.ctx, ast.Load)
            ] != [stmt.targets[0]]:
                continue
            reads = tuple(_stmt_unit(n, parents) for n in uses if isinstance(n.ctx, ast.Load))
            out.append(Unit("name", name, new, flag.anchor, stmt.lineno, reads, parent=flag))
    return out
