"""The project definitions a test module reaches, for ``cuda-reached``: the functions and
classes it imports from the tree (anywhere in it: a test's own imports too), then every tree
definition their code names (a call, a decorator's argument such as a Triton autotune's prune
hook; a module-level call that names the definition, such as ``fwd.register_autograd(bwd)``),
in the same file or imported from another, ``DEPTH`` steps out. A name taken from a
package (``from pkg import f``) is followed through the package's ``__init__`` to the module
that binds it (a star import there too: optimum-quanto's ``from .qbits import *``). A module
imported whole (``import pkg.kernels as k``) is followed by the attributes the code reads from
it (``k.launch``).

Definitions, not modules: a test of one neutral function of a module that keeps CUDA work
elsewhere (torch's ``distributed_c10d``) reaches none of it."""

from __future__ import annotations

import ast

from audits.resolve import absolute_module, module_name, package_name
from patches.generate.intent.loaded import loaded_bindings
from patches.generate.intent.nodes import inside, span_of

DEPTH = 6  # steps from the names a test imports (a Triton prune hook sits 5 out)
ELSEWHERE = 2  # steps from a function a library's check calls in another file (its helpers')
_HOPS = 3  # re-exports followed through packages' ``__init__`` for one name
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def reached_defs(index, rel: str, spans: list) -> list[tuple[str, str]]:
    """(file, top-level name) of each definition of another tree file that the code of ``rel``
    inside ``spans`` reaches (what a gate guards), nearest first; the names the module reads
    only as its classes' bases or in decorators (``_harness``) are not followed."""
    key = ("reached-defs", rel, tuple(spans))
    if key not in index.memo:
        tree = index.tree(rel)
        start = _named_in(index, rel, tree, spans) if tree is not None else []
        index.memo[key] = [d for d in _walk(index, start) if d[0] != rel]
    return index.memo[key]


def _named_in(index, rel: str, tree: ast.Module, spans: list) -> list[tuple[str, str]]:
    skip = _harness(tree)
    out: list[tuple[str, str]] = []
    for node in tree.body:
        if any(_overlaps(node, sp) for sp in spans):
            for n in _within(node, spans):
                out += _named(index, rel, tree, n, skip)
    return list(dict.fromkeys(out))


def _overlaps(node, sp) -> bool:
    return (node.lineno, node.col_offset) <= sp[1] and sp[0] <= (
        node.end_lineno,
        node.end_col_offset,
    )


def _within(node, spans: list):
    """The outermost nodes under ``node`` (itself included) that lie inside one of ``spans``."""
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    if any(sp[0] <= start and end <= sp[1] for sp in spans):
        yield node
        return
    for child in ast.iter_child_nodes(node):
        if hasattr(child, "end_lineno") and any(_overlaps(child, sp) for sp in spans):
            yield from _within(child, spans)


def called_elsewhere(index, rel: str, name: str, depth: int = ELSEWHERE) -> list[tuple[str, str]]:
    """The definitions of other tree files that a call of ``name`` in ``rel`` reaches: the one
    ``name`` is bound to by an import (through re-exports), then those its code names; [] where
    ``name`` is no other file's definition."""
    key = ("called-elsewhere", rel, name, depth)
    if key not in index.memo:
        tree = index.tree(rel)
        binds = _bindings(index, rel, tree) if tree is not None else {}
        bound = binds.get(name, ()) if "." not in name else _attribute(index, binds, name)
        start = [d for d in bound if d[0] != rel]
        index.memo[key] = _walk(index, start, depth) if start else []
    return index.memo[key]


def _attribute(index, binds: dict, name: str) -> list[tuple[str, str]]:
    """The definition ``mod.f`` names where ``mod`` is a tree module imported whole (through
    its package's re-exports: MegaBlocks' ``from megablocks import ops`` ... ``ops.histogram``)."""
    mod, _, attr = name.partition(".")
    where = binds.get(("module", mod))
    if where is None or "." in attr:
        return []
    found = _bound(index, module_name(where, index.prefix), attr, _HOPS)
    return [found] if found is not None else []


def _alias_of(tree: ast.Module, name: str) -> str | None:
    """The definition a module-level ``name = Def`` or ``name = Def.apply`` binds (an autograd
    function's entry point: MegaBlocks' ``histogram = HistogramOp.apply``), else None."""
    for n in tree.body:
        if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in n.targets
        ):
            v = n.value.value if isinstance(n.value, ast.Attribute) else n.value
            return v.id if isinstance(v, ast.Name) else None
    return None


def _walk(index, start: list[tuple[str, str]], depth: int = DEPTH) -> list[tuple[str, str]]:
    """``start`` and the definitions their code names, ``depth`` steps out, nearest first."""
    seen, order, frontier = set(start), list(start), list(start)
    for _ in range(depth):
        found = []
        for d in frontier:
            for nxt in _edges(index, d):
                if nxt not in seen:
                    seen.add(nxt)
                    found.append(nxt)
        order += found
        frontier = found
    return order


def def_node(index, rel: str, name: str, tree: ast.Module | None = None):
    """The top-level definition ``name`` of ``rel`` (of ``tree`` when given), else None."""
    tree = tree if tree is not None else index.tree(rel)
    body = tree.body if tree is not None else []
    return next((n for n in body if isinstance(n, _DEFS) and n.name == name), None)


def _edges(index, d: tuple[str, str]) -> list[tuple[str, str]]:
    key = ("reach-edges", d)
    if key not in index.memo:
        rel, name = d
        tree = index.tree(rel)
        node = def_node(index, rel, name, tree)
        out = _named(index, rel, tree, node, _bases(node)) if node is not None else []
        for stmt in tree.body if node is not None else ():
            # a module-level call that names it (``fwd.register_autograd(bwd, ...)``): the
            # definitions it attaches run with it
            if isinstance(stmt, ast.Expr) and any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt)
            ):
                out += _named(index, rel, tree, stmt)
        index.memo[key] = list(dict.fromkeys(out))
    return index.memo[key]


def _bases(node: ast.AST) -> frozenset[str]:
    """A class's names that it reads only as its bases: what it inherits is not what its own
    code runs (torch's ``DistributedDataParallel`` derives from ``Module``, whose ``cuda()``
    places on CUDA; a test that builds DDP reaches none of that)."""
    if not isinstance(node, ast.ClassDef):
        return frozenset()
    return _only_in(node, [*node.bases, *node.keywords])


def _harness(tree: ast.Module) -> frozenset[str]:
    """The names a test module reads only as its classes' bases or in decorators: its harness
    (``TestCase``, ``@onlyCUDA``), not the code it tests. torch's ``common_utils.TestCase``
    names its CUDA leak check, which every torch test would otherwise reach."""
    parts = []
    for n in ast.walk(tree):
        parts += [*n.bases, *n.keywords] if isinstance(n, ast.ClassDef) else []
        parts += getattr(n, "decorator_list", [])
    return _only_in(tree, parts)


def _only_in(root: ast.AST, parts: list[ast.AST]) -> frozenset[str]:
    """The names ``root`` reads inside ``parts`` and nowhere else."""
    inner = {id(x) for part in parts for x in ast.walk(part)}
    framed = {x.id for part in parts for x in ast.walk(part) if isinstance(x, ast.Name)}
    other = {x.id for x in ast.walk(root) if isinstance(x, ast.Name) and id(x) not in inner}
    return frozenset(framed - other)


def _named(
    index, rel: str, tree: ast.Module, scope: ast.AST, skip=frozenset()
) -> list[tuple[str, str]]:
    """The tree definitions the code of ``scope`` (a definition of ``tree``, or the module
    itself) names: its names and its imports' names bound to definitions, and the attributes it
    reads from tree modules imported whole; not the names in ``skip``."""
    binds = _bindings(index, rel, tree)
    out: list[tuple[str, str]] = []
    for n in ast.walk(scope):
        if isinstance(n, ast.ImportFrom):
            names = [a.asname or a.name for a in n.names]
            out += [b for name in names if name not in skip for b in binds.get(name, ())]
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in skip:
            out += binds.get(n.id, ())
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
            mod = binds.get(("module", n.value.id))
            if mod and def_node(index, mod, n.attr) is not None:
                out.append((mod, n.attr))
    return list(dict.fromkeys(out))


def _bindings(index, rel: str, tree: ast.Module) -> dict:
    """name -> [(file, name)] for the module's own top-level definitions and the names it
    imports from tree files; ("module", alias) -> file for the tree modules it imports whole."""
    key = ("reach-binds", rel)
    if key in index.memo:
        return index.memo[key]
    out: dict = {}
    for n in tree.body:
        if isinstance(n, _DEFS):
            out[n.name] = [(rel, n.name)]
    files = _modules(index)
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            base = absolute_module(n.level, n.module, package_name(rel, index.prefix))
            for a in n.names if base else ():
                sub = files.get(f"{base}.{a.name}")
                if sub is not None:
                    out[("module", a.asname or a.name)] = sub
                    continue
                found = _bound(index, base, a.name, _HOPS)
                if found is not None:
                    out.setdefault(a.asname or a.name, []).append(found)
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.asname and a.name in files:
                    out[("module", a.asname)] = files[a.name]
    for name, found in loaded_bindings(tree, files.values()).items():
        out.setdefault(name, found)
    index.memo[key] = out
    return out


def _modules(index) -> dict[str, str]:
    """Module name -> tree file (a package by its ``__init__.py``)."""
    if "module-files" not in index.memo:
        index.memo["module-files"] = {
            module_name(r, index.prefix): r for r in index.files() if r.endswith(".py")
        }
    return index.memo["module-files"]


def _bound(index, base: str, name: str, hops: int) -> tuple[str, str] | None:
    """(file, name) of the definition ``from base import name`` binds, through packages'
    re-exports; None where the tree defines none."""
    where = _modules(index).get(base)
    tree = index.tree(where) if where is not None else None
    if tree is None:
        return None
    if def_node(index, where, name, tree) is not None:
        return where, name
    alias = _alias_of(tree, name)
    if alias is not None and def_node(index, where, alias, tree) is not None:
        return where, alias
    for n in tree.body if hops else ():
        if isinstance(n, ast.ImportFrom):
            for a in n.names:
                if (a.asname or a.name) == name or a.name == "*":
                    inner = absolute_module(n.level, n.module, package_name(where, index.prefix))
                    wanted = name if a.name == "*" else a.name
                    found = _bound(index, inner, wanted, hops - 1) if inner else None
                    if found is not None or a.name != "*":
                        return found
    return None


def name_calls(nodes) -> list[tuple[tuple, str, int]]:
    """(span, name, line) of each call of a plain name, and of ``mod.f(...)`` (a tree module's
    function through the module's name) as "mod.f", sorted: another file's function, maybe."""
    return sorted(
        (span_of(n), ast.unparse(n.func), n.lineno)
        for n in nodes
        if isinstance(n, ast.Call)
        and (
            isinstance(n.func, ast.Name)
            or (isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name))
        )
    )


def reach_elsewhere(ctx, name_calls, sp, library: bool = False) -> list[tuple[int, str]]:
    """(line, what) for a call in ``sp`` (``name_calls``: (span, name, line) of the file's calls
    of plain names, sorted) of another tree file's function whose code, or what it names a few
    steps out (``called_elsewhere``), keeps CUDA work after this run (the tree index's
    ``kept_cuda``): axolotl's optimizer takes its fused Triton step ``if fused_available() and
    p.is_cuda``, and that step sizes its grid from ``torch.cuda.get_device_properties`` in the
    kernels' module (round 34). [] without a tree. With ``library``, only a call through a
    CUDA-only library in the called definition itself counts (``cuda-library-unit``: MegaBlocks'
    ``ops.sort``; a class whose helpers use CuPy on an optional path a few steps out, MONAI's
    ``MetaTensor``, is no such work)."""
    tree = getattr(ctx, "tree_index", None)
    kept = getattr(tree, "kept_cuda", None)
    if kept is None:
        return []
    for csp, name, line in name_calls:
        if csp[0] > sp[1]:
            break
        if not inside(csp, sp):
            continue
        for rel, fn in called_elsewhere(tree, ctx.path, name, 0 if library else ELSEWHERE):
            what = kept(rel, fn, library=True) if library else kept(rel, fn)
            if what:
                return [(line, f"{name}() reaches {what}")]
    return []
