"""``plugin-allocator``: a memory call (``[allocator] rules``: the statistics, ``empty_cache``,
``mem_get_info``) in a project that imports a device plugin whose allocator torch.accelerator's
memory calls do not reach (``[allocator] plugins``: torch_npu). Rewritten, the call raises on
that device ("Allocator for npu is not a DeviceAllocator") where ``torch.cuda``'s was a no-op
there, or the plugin's own under its ``transfer_to_npu`` remapping: verl's and ms-swift's memory
logs and cache flushes run on Ascend every step (round 35). The project is the tree (the file
alone without one): a plugin imported anywhere in it is a device its code runs on.

Safety, not CUDA intent: asked only when no kind before it answered."""

from __future__ import annotations

import ast

from patches.generate.intent.data import data
from patches.generate.intent.probe import Evidence, Probe

KIND = "plugin-allocator"
SUMMARY = "the project runs on a device plugin whose allocator torch.accelerator cannot reach"
ALONE = True
LATE = True


def detect(p: Probe) -> list[Evidence]:
    table = data()["allocator"]
    if p.f.rule not in table["rules"]:
        return []
    found = _plugin_importer(p, tuple(table["plugins"]))
    if not found:
        return []
    rel, plugin = found
    return [Evidence(KIND, p.f.line, f"{rel} imports {plugin}")]


def _plugin_importer(p: Probe, plugins: tuple[str, ...]) -> tuple[str, str] | None:
    """(a file of the project that imports one of ``plugins``, that plugin), or None."""
    tree = getattr(p.ctx, "tree_index", None)
    if tree is None:
        hit = _imports(p.ctx.tree, plugins)
        return (p.ctx.path, hit) if hit else None
    key = ("plugin-importer", plugins)
    if key not in tree.memo:
        tree.memo[key] = None
        for rel in sorted(r for pl in plugins for r in tree.holding(pl.encode())):
            hit = _imports(tree.tree(rel), plugins)
            if hit:
                tree.memo[key] = (rel, hit)
                break
    return tree.memo[key]


def _imports(module: ast.Module | None, plugins: tuple[str, ...]) -> str | None:
    for node in ast.walk(module) if module is not None else ():
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        for name in names:
            head = name.partition(".")[0]
            if head in plugins:
                return head
    return None
