"""The import rules of docs/architecture.md, checked on the source so they cannot rot.

The graph is built with ``ast`` from every import statement in the project's packages, including
the ones inside functions (a lazy import still ties two modules together, and a lazy import of
``accelerator_api`` can patch torch). Nothing is imported to build it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from audits.resolve import absolute_module

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("audits", "patches", "accelerator_api", "kernels")

# package -> the project packages it must never import (docs/architecture.md, "Packages and their
# boundaries"): data flows one way, the device and the neutral layer know nothing of the tools.
FORBIDDEN = {
    "audits": ("patches", "kernels", "accelerator_api"),
    "patches": ("kernels", "accelerator_api"),
    "accelerator_api": ("audits", "patches", "kernels"),
    "kernels": ("audits", "patches"),
}

# Cycles that are another open item's work; each entry must still exist (a stale entry fails too).
KNOWN_CYCLES: dict[frozenset[str], str] = {}


def project_sources() -> dict[str, tuple[bytes, bool]]:
    """module name -> (source, is a package __init__) for every module of the project."""
    mods = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts.pop()
            mods[".".join(parts)] = (path.read_bytes(), is_pkg)
    return mods


def import_graph(mods: dict[str, tuple[bytes, bool]]) -> tuple[dict[str, dict[str, int]], list]:
    """(module -> {imported project module: line of its first import}, imports of project
    modules that do not exist as "module line name")."""

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, dict[str, int]] = {}
    missing: list[str] = []
    for mod, (source, is_pkg) in mods.items():
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(source, mod)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                package = mod if is_pkg else mod.rpartition(".")[0]
                full = absolute_module(node.level, node.module, package) or ""
                # `from pkg import sub` imports the submodule when there is one
                targets = [
                    f"{full}.{a.name}" if f"{full}.{a.name}" in mods else full for a in node.names
                ]
            for t in targets:
                gone = f"{mod} line {node.lineno}: {t}"
                if t.split(".")[0] in PACKAGES and t not in mods and gone not in missing:
                    missing.append(gone)
                r = resolve(t)
                if r and r != mod:
                    edges.setdefault(r, node.lineno)
        graph[mod] = edges
    return graph, missing


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(graph[w])))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


@pytest.fixture(scope="module")
def scanned():
    return import_graph(project_sources())


@pytest.fixture(scope="module")
def graph(scanned):
    return scanned[0]


def test_every_imported_project_module_exists(scanned):
    # an import of a module that is gone would otherwise resolve to its package, silently
    assert not scanned[1], "imports of missing modules:\n" + "\n".join(scanned[1])


def _show(graph, comp: list[str]) -> str:
    members = set(comp)
    return "; ".join(
        f"{m} -> {t} (line {line})"
        for m in comp
        for t, line in sorted(graph[m].items())
        if t in members
    )


def test_no_import_cycles(graph):
    found = {frozenset(c): c for c in cycles(graph)}
    new = [_show(graph, c) for k, c in found.items() if k not in KNOWN_CYCLES]
    assert not new, "import cycles:\n" + "\n".join(new)
    gone = [why for k, why in KNOWN_CYCLES.items() if k not in found]
    assert not gone, f"fixed cycles still listed in KNOWN_CYCLES: {gone}"


def test_package_boundaries(graph):
    bad = [
        f"{mod} imports {t} (line {line})"
        for mod, edges in graph.items()
        for t, line in edges.items()
        if t.split(".")[0] in FORBIDDEN[mod.split(".")[0]]
    ]
    assert not bad, "imports across docs/architecture.md's boundaries:\n" + "\n".join(bad)


def test_patches_commands_share_only_common(graph):
    # generate, validate and matrix are separate concerns: what they share lives in common/
    concerns = ("generate", "validate", "matrix", "common")
    bad = [
        f"{mod} imports {t}"
        for mod, edges in graph.items()
        for t in edges
        if mod.startswith("patches.")
        and t.startswith("patches.")
        and (a := mod.split(".")[1]) in concerns
        and (b := t.split(".")[1]) in concerns
        and a != b
        and b != "common"
    ]
    assert not bad, "\n".join(bad)


def test_generate_locates_accelerator_api_without_importing_it(graph):
    # importing accelerator_api can patch torch (HN_AUTOPORT=1): generate reads its source instead
    assert not any(t.startswith("accelerator_api") for t in graph["patches.generate.targets"])


def test_the_checker_sees_what_it_checks():
    """A planted cycle (one side a lazy relative import) and a planted boundary crossing."""
    g, missing = import_graph(
        {
            "audits": (b"", True),
            "audits.x": (b"def f():\n    from .y import g\n", False),
            "audits.y": (b"import audits.x\nfrom kernels import trn\n", False),
            "kernels": (b"", True),
            "kernels.z": (b"from . import *\nimport kernels.gone\n", False),
        }
    )
    assert missing == ["kernels.z line 2: kernels.gone"]
    assert g["audits.x"] == {"audits.y": 2}
    assert g["audits.y"] == {"audits.x": 1, "kernels": 2}
    assert g["kernels.z"] == {"kernels": 1}  # the missing module counts as its package
    assert cycles(g) == [["audits.x", "audits.y"]]
