"""Every prefix of the whole-torch ``--unsafe-fixes`` series works (issue 20: bisectable series).

    .venv/bin/python tests/benchmarks/bisect_series.py [--subset torch/utils] [--no-import]

On a COPY of the installed torch's ``*.py`` files (a git repo): generate the series, then apply
it one patch at a time with ``git am``; after each patch every file it changed must compile, and
no attribute may be read from a neutral object that lacks it (``torch.accelerator.
current_stream().cuda_stream``: ``torch.Stream`` has no ``cuda_stream``), checked against the
real types. At the end, every changed module is imported from a full copy of the installed
torch package with the series' files laid over it (modules that do not import unpatched either
are reported apart). Prints one line per failing prefix and a summary; exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_patches import copy_torch  # noqa: E402

from patches.common import gitutil  # noqa: E402
from patches.generate.cli import main as generate  # noqa: E402

# Neutral calls whose result type is known: attributes read from it must exist on that type.
PRODUCERS = {
    "torch.Stream": torch.Stream,
    "torch.Event": torch.Event,
    "torch.accelerator.current_stream": torch.Stream,
}


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _own(scope: ast.AST) -> list[ast.AST]:
    """The nodes of ``scope`` outside the functions, classes and comprehensions nested in it."""
    out, stack = [], list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        out.append(node)
        if not isinstance(node, (*_FUNCS, *_COMPS)):
            stack.extend(ast.iter_child_nodes(node))
    return out


def _made(scope: ast.AST, nodes: list[ast.AST], around: dict[str, type]) -> dict[str, type]:
    """Name -> the neutral type a producer call assigned it in ``scope`` (or around it)."""
    made = dict(around)
    if isinstance(scope, _COMPS):
        for gen in scope.generators:
            for t in ast.walk(gen.target):
                made.pop(getattr(t, "id", None), None)
    for node in nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            typ = PRODUCERS.get(_dotted(node.value.func))
            for t in node.targets:
                if isinstance(t, ast.Name) and typ is not None:
                    made[t.id] = typ
    return made


def bad_attributes(text: str) -> list[str]:
    """``<neutral producer>(...).attr`` (directly or through a local name) with no such attr.
    A name is read in the scope that binds it: a function's locals are its own, and a
    comprehension's targets shadow the names around it."""
    out: list[str] = []
    todo: list[tuple[ast.AST, dict[str, type]]] = [(ast.parse(text), {})]
    while todo:
        scope, around = todo.pop()
        nodes = _own(scope)
        made = _made(scope, nodes, around)
        for node in nodes:
            if isinstance(node, _FUNCS):
                todo.append((node, {}))
            elif isinstance(node, _COMPS):
                todo.append((node, made))
            if not isinstance(node, ast.Attribute):
                continue
            v = node.value
            typ = None
            if isinstance(v, ast.Call):
                typ = PRODUCERS.get(_dotted(v.func))
            elif isinstance(v, ast.Name):
                typ = made.get(v.id)
            if typ is not None and not hasattr(typ, node.attr):
                out.append(f"line {node.lineno}: {typ.__name__} has no {node.attr}")
    return sorted(set(out))


def imports(site: Path, modules: list[str]) -> dict[str, str]:
    """module -> error for the modules that fail to import from ``site``."""
    code = (
        "import importlib, sys, json\nbad = {}\n"
        "for m in sys.argv[1:]:\n"
        "    try:\n        importlib.import_module(m)\n"
        "    except BaseException as e:\n        bad[m] = f'{type(e).__name__}: {e}'[:200]\n"
        "print(json.dumps(bad))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(site))
    r = subprocess.run(
        [sys.executable, "-c", code, *modules], env=env, capture_output=True, text=True, cwd=site
    )
    import json

    return json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout.strip() else {"*": r.stderr}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--subset", default="", help="comma-separated path prefixes (default: all)")
    ap.add_argument("--no-import", action="store_true", help="skip the final import check")
    args = ap.parse_args()
    subset = [s for s in args.subset.split(",") if s]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
        root = copy_torch(tmp, subset)
        assert generate([str(root), "--out", str(tmp / "s"), "--unsafe-fixes"]) == 0
        names = (tmp / "s" / "series").read_text().split()
        changed_all: set[str] = set()
        for i, name in enumerate(names, 1):
            gitutil.am(root, [tmp / "s" / name])
            changed = gitutil.git("diff", "--name-only", "HEAD~1", "HEAD", cwd=root).stdout.split()
            changed_all.update(changed)
            for rel in changed:
                text = (root / rel).read_text(encoding="utf-8")
                try:
                    compile(text, rel, "exec", dont_inherit=True)
                except SyntaxError as e:
                    failures += 1
                    print(f"prefix {i} ({name}): {rel} does not compile: {e}")
                    continue
                for b in bad_attributes(text):
                    failures += 1
                    print(f"prefix {i} ({name}): {rel} {b}")
        print(f"{len(names)} patches, {len(changed_all)} files: every prefix compiled and checked")
        if not args.no_import and changed_all:
            site = tmp / "site"
            src = Path(torch.__file__).parent
            shutil.copytree(src, site / "torch", ignore=shutil.ignore_patterns("__pycache__"))
            mods = sorted(
                r.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
                for r in changed_all
            )
            before = imports(site, mods)
            for rel in changed_all:
                shutil.copy2(root / rel, site / rel)
            after = imports(site, mods)
            new = {m: e for m, e in after.items() if m not in before}
            for m, e in sorted(new.items()):
                failures += 1
                print(f"import {m}: {e}")
            print(
                f"imports: {len(mods)} changed modules, {len(mods) - len(after)} import after the "
                f"series, {len(before)} did not import before it either, {len(new)} newly broken"
            )
    print("OK" if not failures else f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
