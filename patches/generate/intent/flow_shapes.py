"""Shapes of the code ``cuda-flow`` (``kinds/flow.py``) follows a value through: a comprehension's
filter, an arm's device, a container's element, a statement with its decorators (pure ``ast``)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import COMPS, inside, span_of

_SAME = {"range", "list", "tuple", "sorted", "int"}  # a count or indices, as they are


def filters(value: ast.expr, node: ast.AST) -> bool:
    """``node`` is in a filter of the comprehension ``value`` (unsloth-zoo's ``devices = {p.device
    for p in model.parameters() if p.device.type == "cuda"}``, then ``torch.cuda.synchronize(d)``
    for each): what the check lets through is the value."""
    gens = value.generators if isinstance(value, COMPS) else []
    return any(x is node for g in gens for cond in g.ifs for x in ast.walk(cond))


def arm_device(value: ast.expr, node: ast.AST) -> bool:
    """``node`` is the device string of ``torch.device(<node>, ...)`` that is one of the arms of
    the ``IfExp`` ``value`` (MONAI's ``device = self.device if ... else torch.device("cuda", rank)``,
    later tested against "cuda" by a check that stays)."""
    if not isinstance(value, ast.IfExp):
        return False  # `device = torch.device("cuda")` itself: judged as the value's own site
    arms, todo = [], [value]
    while todo:
        v = todo.pop()
        if isinstance(v, ast.IfExp):
            todo += [v.body, v.orelse]
        else:
            arms.append(v)
    return any(
        isinstance(a, ast.Call)
        and a.args
        and a.args[0] is node
        and ast.unparse(a.func).endswith("device")
        for a in arms
    )


def whole(stmt: ast.stmt):
    """A statement's span, from its first decorator (``@pytest.fixture(params=["cuda"] if
    CUDA_AVAILABLE else ["cpu"])``, mace's tests)."""
    sp, decs = span_of(stmt), getattr(stmt, "decorator_list", [])
    return (span_of(decs[0])[0], sp[1]) if decs else sp


def copied(value: ast.expr, sub: ast.AST) -> bool:
    """``sub`` is ``value`` itself or a term of the ``and`` chain that is ``value``."""
    if value is sub:
        return True
    return isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And) and sub in value.values


def entry(value: ast.expr, sub: ast.AST):
    """The span of the element of a container display ``value`` that holds ``sub`` (nested
    lists and tuples too; a dict entry with its key): ``{"model": model.state_dict(), "cuda_rng": ...}``
    hands ``model`` to its own entry, not to its siblings, and ``{"CUDA_VISIBLE_DEVICES":
    str(n)}`` hands ``n`` to an entry its key names. Any other value: its own span."""
    inner = span_of(sub)
    while isinstance(value, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
        if isinstance(value, ast.Dict):
            pairs = [(k, v) for k, v in zip(value.keys, value.values) if k is not None]
            held = [(k, v) for k, v in pairs if inside(inner, span_of(v))]
            if held:  # the entry, key and all: the key is part of where the value goes
                key, item = held[0]
                return span_of(key)[0], span_of(item)[1]
            return span_of(value)  # in a key, or a ``**spread``: the whole display
        held = [e for e in value.elts if inside(inner, span_of(e))]
        if not held:
            return span_of(value)
        value = held[0]
    return span_of(value)


def kept_through(parent, n) -> bool:
    """``parent`` hands ``n`` on unchanged in meaning (``list(range(torch.cuda.device_count()))``:
    the devices it counts)."""
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in _SAME
        and len(parent.args) == 1
        and parent.args[0] is n
    )
