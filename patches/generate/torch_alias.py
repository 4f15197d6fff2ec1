"""The file's own name for torch: a module that imports ``torch as th`` (stable-baselines3,
fairseq's MMPT) and binds no plain ``torch`` gets ``import torch`` from the families, which write
``torch.accelerator...``; a maintainer writes ``th.accelerator...`` and no second import. Applied
to every step of a file (``plan``) after the families: the names ``torch`` on the lines the series
wrote become the alias, and the import the series added goes, only when the result then binds
and reads no plain ``torch`` at all (else the step keeps its text).
"""

from __future__ import annotations

import ast
import re

from patches.generate.pytorch_style import changed_ranges

_ALIAS = re.compile(r"^import torch as (\w+)[ \t]*(?:#.*)?$", re.MULTILINE)
_PLAIN = "import torch\n"


def alias(original: str, after: str) -> str:
    """``after`` with the series' ``torch`` spelled as ``original``'s alias for it."""
    names = set(_ALIAS.findall(original))
    if len(names) != 1 or _PLAIN not in after or _binds_torch(original):
        return after
    (name,) = names
    written = {n for a, b in changed_ranges(original, after) for n in range(a, b + 1)}
    lines = after.splitlines(keepends=True)
    added = [i for i, ln in enumerate(lines) if ln == _PLAIN and i + 1 in written]
    if len(added) != 1:
        return after
    try:
        tree = ast.parse(after)
    except SyntaxError:
        return after
    spots = sorted(
        (
            (n.lineno, n.col_offset)
            for n in ast.walk(tree)
            if isinstance(n, ast.Name) and n.id == "torch"
        ),
        reverse=True,
    )
    if any(line not in written for line, _ in spots):
        return after  # a plain ``torch`` the series did not write: leave the step as it is
    for line, col in spots:
        text = lines[line - 1]
        lines[line - 1] = text[:col] + name + text[col + len("torch") :]
    del lines[added[0]]
    out = "".join(lines)
    try:
        ast.parse(out)
    except SyntaxError:
        return after
    return out if not _binds_torch(out) else after


def _binds_torch(text: str) -> bool:
    """The module binds the plain name ``torch`` (``import torch``, ``import torch.nn``)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(a.asname is None and a.name.split(".")[0] == "torch" for a in node.names):
                return True
    return False
