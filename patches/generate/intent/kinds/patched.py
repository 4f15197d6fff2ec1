"""``cuda-patched``: the site calls (or names) a ``torch.cuda`` function that the tree replaces
with its own (``torch.cuda.set_stream = _patched_set_stream``; ``torch.cuda.current_stream =
partial(torch.xpu.current_stream)`` in an XPU worker; a no-op ``set_stream`` in a CPU worker).
There ``torch.cuda.X`` is the project's function on the machines it patches it for, and the
neutral call bypasses it: vLLM tracks the current stream in its ``set_stream``, and its CPU
worker answers ``current_stream()`` with a placeholder, where ``torch.accelerator``'s raises
(round 41). Any module of the tree may assign it, so every call of the name is left. A tree
that only reads ``torch.cuda.X`` (``prev = torch.cuda.set_stream``) patches nothing."""

from __future__ import annotations

import ast
import re

from patches.generate.intent.nodes import qualified
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-patched"
SUMMARY = "the tree replaces this torch.cuda function with its own"
_ASSIGNED = re.compile(rb"^[ \t]*torch\.cuda\.(\w+)[ \t]*=[^=]", re.MULTILINE)


def detect(p: Probe) -> list[Evidence]:
    node = p.node
    if isinstance(node, ast.Call):
        node = node.func
    name = qualified(p.ctx, node) if isinstance(node, (ast.Attribute, ast.Name)) else None
    if not name or not name.startswith("torch.cuda."):
        return []
    where = _patched(p.ctx).get(name.removeprefix("torch.cuda."))
    return [Evidence(KIND, p.f.line, f"assigned at {where}")] if where else []


def _patched(ctx) -> dict[str, str]:
    """``torch.cuda`` attribute -> "file:line" of an assignment to it, over the tree (the file
    alone without a tree), read once per tree."""
    index = getattr(ctx, "tree_index", None)
    memo = getattr(index, "memo", None)
    if memo is not None and "cuda-patched" in memo:
        return memo["cuda-patched"]
    files = index.files() if index is not None else {ctx.path: ctx.source.encode()}
    out: dict[str, str] = {}
    for rel, data in sorted(files.items()):
        if b"torch.cuda." not in data:
            continue
        for m in _ASSIGNED.finditer(data):
            line = data.count(b"\n", 0, m.start()) + 1
            if _assigns(index, rel, data, m, line):
                out.setdefault(m.group(1).decode(), f"{rel}:{line}")
    if memo is not None:
        memo["cuda-patched"] = out
    return out


def _assigns(index, rel: str, data: bytes, m: re.Match, line: int) -> bool:
    """The match is an assignment statement's target in the parsed file (not a string's text)."""
    tree = index.tree(rel) if index is not None else None
    if tree is None:
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and node.lineno == line:
            return any(ast.unparse(t) == f"torch.cuda.{m.group(1).decode()}" for t in node.targets)
    return False
