"""Count the sites a `device="cuda"` -> operand-device rule would reach (docs/replay.md, round 14).

A site: a local bound to a call with a ``device="cuda..."`` keyword (``torch.arange(8,
device="cuda")``) that later meets, in one binary operation, a value derived from a parameter of
the same function (``x.to(torch.float) @ powers_of_two``): the tensor whose device upstream used
(``dense.device``). Reads files with ``ast`` only; nothing is imported.

    python tests/benchmarks/operand_device_scan.py [ROOT]     # default: the installed torch
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def _cuda_device_call(node: ast.AST) -> bool:
    return any(
        isinstance(c, ast.Call)
        and any(
            k.arg == "device"
            and isinstance(k.value, ast.Constant)
            and str(k.value.value).startswith("cuda")
            for k in c.keywords
        )
        for c in ast.walk(node)
    )


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _derived(fn: ast.FunctionDef) -> set[str]:
    """The parameters (less self/cls) and every local assigned from them, transitively."""
    args = fn.args
    out = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]} - {"self", "cls"}
    changed = bool(out)
    while changed:
        changed = False
        for st in ast.walk(fn):
            if isinstance(st, ast.Assign) and _names(st.value) & out:
                new = set().union(*map(_names, st.targets)) - out
                changed |= bool(new)
                out |= new
    return out


def sites(fn: ast.FunctionDef) -> list[ast.Assign]:
    derived = _derived(fn)
    found = []
    for st in ast.walk(fn):
        if not (
            isinstance(st, ast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], ast.Name)
            and _cuda_device_call(st.value)
        ):
            continue
        name = st.targets[0].id
        for b in ast.walk(fn):
            if isinstance(b, ast.BinOp):
                left, right = _names(b.left), _names(b.right)
                if (name in left and right & (derived - {name})) or (
                    name in right and left & (derived - {name})
                ):
                    found.append(st)
                    break
    return found


def main(argv: list[str]) -> int:
    if argv:
        root = Path(argv[0])
    else:
        import torch  # only to find the installed tree

        root = Path(torch.__file__).parent
    hits = []
    for path in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hits += [(path.relative_to(root), fn.name, st) for st in sites(fn)]
    for rel, name, st in hits:
        print(f"{rel}:{st.lineno} {name}: {ast.unparse(st)[:100]}")
    print(f"{len(hits)} site(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
