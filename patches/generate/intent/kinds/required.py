"""``cuda-required``: the site is the condition of a check whose message says CUDA is required
(kornia's ``KORNIA_CHECK(device.type == "cuda", "FP16 requires CUDA.")``, ``assert x.is_cuda,
"expects a CUDA tensor"``, ``if not x.is_cuda: raise ValueError("... needs CUDA")``). Made
neutral, the check lets another accelerator through while its message still names CUDA: the
author stated a requirement of CUDA's (kornia's fp16 weights run on onnxruntime's CUDA provider).
A message that names another device too ("CUDA or XPU") states a requirement of devices."""

from __future__ import annotations

import ast
import re

from patches.generate.intent.data import is_cuda_word
from patches.generate.intent.index import OTHER_DEVICE
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-required"
SUMMARY = "the check it is the condition of says CUDA is required"
_CHECKER = re.compile(r"(?i)check|assert|require|expect|verify|ensure")


def detect(p: Probe) -> list[Evidence]:
    if isinstance(p.node, ast.Call):
        return []
    message = _message(p)
    text = " ".join(_strings(message)) if message is not None else ""
    if is_cuda_word(text) and not OTHER_DEVICE.search(text):
        return [Evidence(KIND, message.lineno, repr(text.strip()[:60]))]
    return []


def _message(p: Probe) -> ast.AST | None:
    """The message of the check whose condition holds the site, or None."""
    stmt = p.stmt
    if isinstance(stmt, ast.Assert) and p.top is stmt.test:
        return stmt.msg
    if isinstance(stmt, ast.If) and p.top is stmt.test and stmt.body:
        raised = stmt.body[0]
        if isinstance(raised, ast.Raise) and isinstance(raised.exc, ast.Call):
            return raised.exc
    for child, parent in p.climb():
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is child:
            if _CHECKER.search(ast.unparse(parent.func)) and len(parent.args) > 1:
                return parent.args[1]
            return None
    return None


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
