"""A predicate's early answers: in ``def use_custom_op(x): if not enabled or not
torch.backends.cudnn.enabled: return False`` / ``if x.device.type != "cuda": return False`` /
``return True``, each ``if <test>: return <bool>`` of one block gives the same answer as the
others, as one ``or`` of their tests would: the tests are one boolean chain (``cuda-chain``).
mmcv's ``_should_use_custom_op`` picks its cuDNN custom op by a CUDA device test beside the cuDNN
switch; made neutral alone, XPU and MPS take the op that asks CUDA's capability (round 41)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import Span, span_of


def _answer(stmt) -> tuple[type, object] | None:
    """``(bool, value)`` for ``if <test>: return True|False`` with no ``else``, else None."""
    if not isinstance(stmt, ast.If) or stmt.orelse or len(stmt.body) != 1:
        return None
    ret = stmt.body[0]
    if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Constant):
        if isinstance(ret.value.value, bool):
            return bool, ret.value.value
    return None


def answer_chain(block: list | None, stmt: ast.stmt) -> list[tuple[str, list[Span]]]:
    """The tests of the other early answers of ``stmt``'s block that give its answer, as one
    ``cuda-chain`` entry (none where ``stmt`` is no early answer or stands alone)."""
    mine = _answer(stmt)
    if mine is None or not block:
        return []
    rest = [s.test for s in block if s is not stmt and _answer(s) == mine]
    return [("cuda-chain", [span_of(t) for t in rest])] if rest else []
