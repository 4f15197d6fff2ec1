"""``cuda-required``: the site is the condition of a check whose message says CUDA is required
(kornia's ``KORNIA_CHECK(device.type == "cuda", "FP16 requires CUDA.")``, ``assert x.is_cuda,
"expects a CUDA tensor"``, ``if not x.is_cuda: raise ValueError("... needs CUDA")``). Made
neutral, the check lets another accelerator through while its message still names CUDA: the
author stated a requirement of CUDA's (kornia's fp16 weights run on onnxruntime's CUDA provider).
A message that names another device too ("CUDA or XPU") states a requirement of devices. A skip's
reason states a requirement only where it names a CUDA library or feature (``skipif(not
torch.cuda.is_available() or ..., reason="... out_dtype support on CUDA sm_80+")``: liger-kernel
tests a fast path its library takes on CUDA's capability alone, round 35); "requires CUDA" or
"NVIDIA GPU required" name the device a test ran on when it was written, which upstream widens."""

from __future__ import annotations

import ast
import re

from patches.generate.intent.data import about_cuda_feature, is_cuda_word
from patches.generate.intent.index import OTHER_DEVICE
from patches.generate.intent.nodes import SKIP_GATES
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-required"
SUMMARY = "the check it is the condition of says CUDA is required"
_CHECKER = re.compile(r"(?i)check|assert|require|expect|verify|ensure")
_VENDOR = re.compile(r"(?i)nvidia")  # the vendor's name says which device, not which feature


def detect(p: Probe) -> list[Evidence]:
    reason = _skip_reason(p)
    if reason is not None:
        text = " ".join(_strings(reason))
        if about_cuda_feature(_VENDOR.sub("", text)):
            return [Evidence(KIND, reason.lineno, f"the skip's reason {text.strip()[:60]!r}")]
        return []
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


def _skip_reason(p: Probe) -> ast.AST | None:
    """The reason of the skip decorator whose condition holds the site, or None."""
    for child, parent in p.climb():
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is child:
            f = parent.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name not in SKIP_GATES:
                return None
            if len(parent.args) > 1:
                return parent.args[1]
            return next((k.value for k in parent.keywords if k.arg == "reason"), None)
    return None


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
