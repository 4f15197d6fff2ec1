"""Boolean device switches named after CUDA (``flag`` match type): a parameter ``cuda: bool``, a
keyword argument ``use_cuda=True``, an attribute set to a truth value (``self.cuda = False``).

Such a switch can only say "CUDA or the CPU": every other accelerator takes the CPU side. The
names come from the catalogue (``match.names``); reads of the flag (``if self.cuda:``) are not
reported, only where it is declared, passed or set, so one switch is reported where it is made.
"""

from __future__ import annotations

import ast

# Values an attribute holding a switch is set to (a call or a function is a method being
# replaced, ``module.cuda = fn``, not a switch).
_TRUTH = (ast.Name, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Attribute)


def h_arg(scan, node: ast.arg):
    """A parameter named like a switch (``def load(src, cuda=False)``)."""
    rule = scan.p.flags.get(node.arg)
    if rule is not None:
        scan.emit(rule, node, node.arg)


def h_keyword(scan, node: ast.keyword):
    """A keyword argument named like a switch (``load(src, cuda=False)``)."""
    rule = scan.p.flags.get(node.arg) if node.arg else None
    if rule is not None:
        scan.emit(rule, node, node.arg)


def assigned(scan, node: ast.Assign | ast.AnnAssign) -> None:
    """An attribute set to a truth value (``self.cuda = False``, ``self.use_cuda = use_cuda``)."""
    value = node.value
    if not (
        isinstance(value, _TRUTH)
        or (isinstance(value, ast.Constant) and isinstance(value.value, bool))
    ):
        return
    for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
        rule = scan.p.flags.get(t.attr) if isinstance(t, ast.Attribute) else None
        if rule is not None:
            scan.emit(rule, t, t.attr)
