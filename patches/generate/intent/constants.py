"""Module constants: names that only module-level assignments bind. A function that reads one
reads its value: ``_PYTORCH_MIN_ALLOCATE``, set from ``PYTORCH_NO_CUDA_MEMORY_CACHING`` (CUDA's
caching allocator rounds blocks to 512 bytes), is CUDA's constant wherever a check guards its
use, however neutral its own spelling. The gate judges such a read by the value (``remaining``)."""

from __future__ import annotations

import ast

from audits.python.imports import module_statements
from patches.generate.intent.bindings import Bindings
from patches.generate.intent.nodes import Span, span_of

# a table's reader reads one entry (``TEST_SKIPS[f"multi-gpu-{x}"]``), not the one naming CUDA
_TABLES = (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def module_constants(tree: ast.Module, binds: Bindings) -> dict[str, list[Span]]:
    """name -> the value spans of its module-level assignments, for names nothing else binds
    and whose values are no tables."""
    top: dict[str, list[Span | None]] = {}
    for n in module_statements(tree.body):
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    top.setdefault(t.id, []).append(
                        None if isinstance(n.value, _TABLES) else span_of(n.value)
                    )
                elif _unpacked(t, n.value):  # `[cpu, gpu] = [torch.device("cpu"), ...]`
                    for name, value in zip(t.elts, n.value.elts):
                        top.setdefault(name.id, []).append(
                            None if isinstance(value, _TABLES) else span_of(value)
                        )
    return {k: v for k, v in top.items() if None not in v and len(binds.get(k, ())) == len(v)}


def _unpacked(target, value) -> bool:
    """A tuple or list of plain names bound element by element from one of the same length."""
    seqs = (ast.Tuple, ast.List)
    return (
        isinstance(target, seqs)
        and isinstance(value, seqs)
        and len(target.elts) == len(value.elts)
        and all(isinstance(e, ast.Name) for e in target.elts)
    )


def constant_reads(nodes, constants: dict[str, list[Span]]) -> list[tuple[Span, str]]:
    """(span, name) of every read of a module constant among ``nodes`` (a file's), sorted by
    span."""
    if not constants:
        return []
    return sorted(
        {
            (span_of(n), n.id)
            for n in nodes
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in constants
        }
    )
