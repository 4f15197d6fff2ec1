"""Tree modules a test loads from a file path at its top level, not by import (unsloth-zoo's
``test_block_swap.py``: ``spec_from_file_location("...", os.path.join(_HERE, "unsloth_zoo",
"block_swap.py"))``, ``_mod = module_from_spec(_spec)``, ``BlockSwap = _mod.BlockSwap``, so that
the test runs without the package's ``__init__``). For ``cuda-reached``: a gate guards what the
names taken from such a module run, as it does for imported ones (round 39).

The file is found by the string constants of the path expression (through the module's own
names bound to one, a few steps): joined by ``/``, their tail that ends in ``.py`` must name one
tree file by its last parts."""

from __future__ import annotations

import ast

_STEPS = 3  # module-level names followed to find a path's constants (``SCRIPT = ROOT / "x.py"``)


def loaded_bindings(tree: ast.Module, files) -> dict:
    """("module", alias) -> file for each module-level ``alias = module_from_spec(spec)`` whose
    spec a ``spec_from_file_location`` over a tree file made, and name -> [(file, attr)] for the
    names then bound to its attributes (``A, B = mod.A, mod.B``, ``A = mod.A``)."""
    values = _module_values(tree)
    specs: dict[str, str] = {}
    out: dict = {}
    for stmt in tree.body:
        target, value = _single(stmt)
        if target is None:
            continue
        if _calls(value, "spec_from_file_location") and len(value.args) > 1:
            found = _file_of(value.args[1], values, files)
            if found is not None:
                specs[target] = found
        elif _calls(value, "module_from_spec") and value.args:
            arg = value.args[0]
            if isinstance(arg, ast.Name) and arg.id in specs:
                out[("module", target)] = specs[arg.id]
    if out:
        _attributes(tree, out)
    return out


def _attributes(tree: ast.Module, out: dict) -> None:
    """Bind the names assigned from a loaded module's attributes."""
    for stmt in tree.body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        t, v = stmt.targets[0], stmt.value
        pairs = (
            zip(t.elts, v.elts)
            if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple)
            else [(t, v)]
        )
        for name, attr in pairs:
            if isinstance(name, ast.Name) and isinstance(attr, ast.Attribute):
                mod = out.get(("module", getattr(attr.value, "id", None)))
                if mod is not None:
                    out.setdefault(name.id, []).append((mod, attr.attr))


def _single(stmt) -> tuple[str | None, ast.AST | None]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        if isinstance(stmt.targets[0], ast.Name):
            return stmt.targets[0].id, stmt.value
    return None, None


def _calls(value, name: str) -> bool:
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    return (getattr(f, "attr", None) or getattr(f, "id", None)) == name


def _module_values(tree: ast.Module) -> dict[str, ast.AST]:
    out = {}
    for stmt in tree.body:
        target, value = _single(stmt)
        if target is not None:
            out[target] = value
    return out


def _constants(expr, values: dict, steps: int = _STEPS) -> list[str]:
    """The string constants of ``expr`` in order, through module-level names."""
    out: list[str] = []
    for n in ast.walk(expr):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.append(n.value)
        elif isinstance(n, ast.Name) and n.id in values and steps:
            out += _constants(values[n.id], values, steps - 1)
    return out


def _file_of(expr, values: dict, files) -> str | None:
    """The one tree file the path ``expr`` names, else None."""
    parts = [p for c in _constants(expr, values) for p in c.split("/") if p not in ("", ".")]
    while parts and not parts[-1].endswith(".py"):
        parts.pop()
    if not parts:
        return None
    for size in range(len(parts), 0, -1):
        tail = "/".join(parts[-size:])
        hits = [f for f in files if f == tail or f.endswith("/" + tail)]
        if len(hits) == 1:
            return hits[0]
    return None
