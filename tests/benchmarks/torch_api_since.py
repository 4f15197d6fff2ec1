"""The first torch release that holds each neutral API the codemod writes, read from the wheels.

    .venv/bin/python tests/benchmarks/torch_api_since.py [--versions 2.1.0,2.2.0,...] [--check]

For each release, pip downloads the macOS arm64 wheel (``--no-deps``, no install: its Python
files are every platform's, and it is a tenth of a Linux build) into
``${XDG_CACHE_HOME:-~/.cache}/hwneutral/wheels/since`` and reads it as a zip with ``ast``:
``torch.a.b.name`` is there when the longest module ``torch/a/b`` defines ``name`` (a function,
a class, an assignment, an import, ``__all__``, or a star import that does), or when
``torch/__init__.py`` star-imports ``torch._C`` and its stub declares a class ``name`` with a
constructor (``torch.Stream(device)`` is usable from 2.4, the class is older). The installed
torch answers for its own release. Prints API, first release, and the table's entry
(``patches/generate/torch_since.toml``); ``--check`` exits 1 when one differs. The ``[mps]``
entries are the first release whose ``ATen/mps/MPSAllocatorInterface.h`` makes MPS's allocator a
``c10::DeviceAllocator`` (torch.accelerator's memory calls need one).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from patches.generate import torch_floor  # noqa: E402

VERSIONS = "2.1.0,2.2.0,2.3.0,2.4.0,2.5.0,2.6.0,2.7.0,2.8.0,2.9.0,2.10.0,2.11.0"


def wheel(version: str, cache: Path) -> Path:
    found = sorted(cache.glob(f"torch-{version}-*macosx*_arm64.whl"))
    if found:
        return found[0]
    cmd = [sys.executable, "-m", "pip", "download", f"torch=={version}", "--no-deps", "-q"]
    cmd += ["--only-binary=:all:", "--platform", "macosx_11_0_arm64", "--python-version", "3.11"]
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)
    subprocess.run([*cmd, "-d", str(cache)], check=True, env=env)
    return sorted(cache.glob(f"torch-{version}-*macosx*_arm64.whl"))[0]


class Tree:
    """A torch tree's Python sources: a wheel (zip) or an installed package's folder."""

    def __init__(self, source: Path) -> None:
        self.zip = zipfile.ZipFile(source) if source.is_file() else None
        self.root = source if self.zip is None else None

    def read(self, rel: str) -> str | None:
        try:
            if self.zip is not None:
                return self.zip.read(rel).decode("utf-8")
            return (self.root / rel).read_text()
        except (KeyError, OSError):
            return None

    def module(self, dotted: str) -> tuple[str, ast.Module] | None:
        for rel in (dotted.replace(".", "/") + ".py", dotted.replace(".", "/") + "/__init__.py"):
            text = self.read(rel)
            if text is not None:
                return rel, ast.parse(text)
        return None


def defines(tree: Tree, module: str, name: str, depth: int = 0) -> bool:
    found = tree.module(module)
    if found is None or depth > 3:
        return False
    rel, mod = found
    for node in _module_level(mod):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[-1]) == name for a in node.names):
                return True
    package = module if rel.endswith("__init__.py") else module.rsplit(".", 1)[0]
    for node in _module_level(mod):  # a star import under an `if` too (torch.distributed's)
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            source = f"{base}.{node.module}" if node.level else node.module
            if source == "torch._C" and _stub_class(tree, name):
                return True
            if source and source != "torch._C" and defines(tree, source, name, depth + 1):
                return True
    return False


def _module_level(mod: ast.Module):
    """The module's statements and what they hold, not the bodies of its functions and classes
    (a local ``device_index = ...`` defines no ``torch.accelerator.device_index``)."""
    todo = list(mod.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            todo += ast.iter_child_nodes(node)


def _stub_class(tree: Tree, name: str) -> bool:
    """``torch/_C/__init__.pyi`` declares class ``name`` with a constructor."""
    text = tree.read("torch/_C/__init__.pyi")
    if text is None:
        return False
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return any(
                isinstance(f, ast.FunctionDef) and f.name in ("__new__", "__init__")
                for f in node.body
            )
    return False


def present(tree: Tree, api: str) -> bool:
    module, _, name = api.rpartition(".")
    return defines(tree, module, name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--versions", default=VERSIONS)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    cache = base / "hwneutral" / "wheels" / "since"
    cache.mkdir(parents=True, exist_ok=True)
    import torch

    versions = args.versions.split(",")
    trees = [(v, Tree(wheel(v, cache))) for v in versions]
    trees.append((torch.__version__.split("+")[0], Tree(Path(torch.__file__).parent.parent)))
    table = torch_floor.since_table()
    bad = 0
    print(f"{'API':55} {'first':8} table")
    for api in sorted(table):
        first = next((v for v, t in trees if present(t, api)), None)
        want = ".".join(first.split(".")[:2]) if first else "absent"
        # in the oldest release read: the table may name an older one, never a newer one
        oldest = first == versions[0] and torch_floor.key(table[api]) <= torch_floor.key(want)
        ok = want == table[api] or oldest
        want = f"<={want}" if first == versions[0] else want
        bad += not ok
        print(f"{api:55} {want:8} {table[api]}{'' if ok else '   <- differs'}")
    print(f"{len(table)} APIs, {bad} differ")
    bad += _check_mps(trees)
    return 1 if args.check and bad else 0


_MPS_HEADER = "torch/include/ATen/mps/MPSAllocatorInterface.h"
_DEVICE_ALLOCATOR = re.compile(r"class\s+IMPSAllocator\s*:\s*public\s+c10::DeviceAllocator")


def _check_mps(trees) -> int:
    """``[mps]``: the first release read whose MPS allocator is a ``c10::DeviceAllocator``
    (torch.accelerator's memory calls go through one); the number of entries that differ."""
    first = next((v for v, t in trees if _DEVICE_ALLOCATOR.search(t.read(_MPS_HEADER) or "")), None)
    want = ".".join(first.split(".")[:2]) if first else "absent"
    table = torch_floor.mps_table()
    bad = sum(since != want for since in table.values())
    print(f"[mps] MPS's allocator a DeviceAllocator from {want}: {len(table)} APIs, {bad} differ")
    return bad


if __name__ == "__main__":
    raise SystemExit(main())
