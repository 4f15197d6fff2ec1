"""``module-lacks``: the rewrite asks the current accelerator's module a query that an in-tree
accelerator's module lacks (``torch.mps`` has no ``is_bf16_supported``, ``get_device_name`` or
``get_device_properties``, ``torch.mtia`` no ``get_device_name``: ``[modules] lacks``), where
the original fell back when CUDA was absent: ``torch.cuda.is_bf16_supported()`` answers False
there, and a query under an availability check is not reached. Rewritten, a Mac takes the
neutral path and raises ``AttributeError`` (Lightning's bitsandbytes default dtype, ultralytics'
benchmark table, round 25). A query with no such fallback raised on a Mac before as well, and is
rewritten.

Safety, not CUDA intent: asked only when no kind before it answered, and only once the others
have settled (``LATE``: a query only CUDA reaches is left as ``cuda-branch``). The query stays
CUDA's, so the check around it stays too."""

from __future__ import annotations

import ast

from patches.generate.intent.data import data
from patches.generate.intent.kinds.unguarded import checked
from patches.generate.intent.nodes import exits, off_cuda, on_cuda
from patches.generate.intent.probe import Evidence, Probe

KIND = "module-lacks"
LATE = True
SUMMARY = "an accelerator's module lacks the query, where CUDA's fell back without CUDA"
ALONE = True


def detect(p: Probe) -> list[Evidence]:
    node = p.node
    if not isinstance(node, ast.Call):
        return []
    name = p.ctx.qualify(node.lineno, ast.unparse(node.func)) or ""
    module, _, query = name.rpartition(".")
    if module != "torch.cuda":
        return []
    table = data()["modules"]
    lacking = sorted(m for m, names in table["lacks"].items() if query in names)
    if lacking and _caught(p) and query in table["cpu_lacks"]:
        return [Evidence(KIND, p.f.line, f"torch.cpu has no {query}; CUDA's error was caught")]
    fell_back = query in table["false_without_cuda"] or checked(p) or _type_checked(p)
    if not lacking or not fell_back:
        return []
    where = " and ".join(f"torch.{m}" for m in lacking)
    verb = "has" if len(lacking) == 1 else "have"
    return [Evidence(KIND, p.f.line, f"{where} {verb} no {query}; CUDA's fell back without CUDA")]


def _type_checked(p: Probe) -> bool:
    """A CUDA device-type check (``x.type == "cuda"``, ``x.is_cuda``) holds the site: the arm
    of an ``if``/``IfExp`` that runs on CUDA, a later operand of an ``and``, or the rest of a
    block after an early exit that holds off CUDA (``if not enabled or x.type != "cuda":
    return``). A Mac's device is ``mps`` there, so the original skipped the query (OLMo-core's
    speed monitor asks ``get_device_name`` when ``trainer.device.type == "cuda"``, round 41);
    the check made neutral admits MPS."""
    n = p.node
    while n is not None and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = p.index.parents.get(n)
        if isinstance(parent, (ast.If, ast.IfExp)) and n is not parent.test:
            arm = parent.orelse
            in_else = n is arm or (isinstance(arm, list) and n in arm)
            if (off_cuda if in_else else on_cuda)(parent.test):
                return True
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
            if any(on_cuda(v) for v in parent.values[: parent.values.index(n)]):
                return True
        if isinstance(n, ast.stmt):
            block = p.index.block_of(n) or []
            for prev in block[: block.index(n)] if n in block else []:
                if isinstance(prev, ast.If) and exits(prev.body) and off_cuda(prev.test):
                    return True
        n = parent
    return False


# what torch.cuda raises without CUDA ("Torch not compiled with CUDA enabled", no driver)
_CUDA_ERRORS = frozenset({"RuntimeError", "AssertionError"})
_WIDER = frozenset({"AttributeError", "Exception", "BaseException"})


def _caught(p: Probe) -> bool:
    """The site is in the body of a ``try`` whose handlers catch what CUDA raises without CUDA
    and not an ``AttributeError``: there the original fell back (xformers' benchmark names its
    results ``cpu`` on ``except (RuntimeError, AssertionError)``, round 38), while
    ``torch.get_device_module()`` is ``torch.cpu`` on a CPU-only machine and lacks the query."""
    n = p.node
    while n is not None:
        parent = p.index.parents.get(n)
        if isinstance(parent, ast.Try) and n in parent.body:
            names = {
                x.id if isinstance(x, ast.Name) else getattr(x, "attr", "")
                for h in parent.handlers
                if h.type is not None  # a bare `except:` (below), before its type is walked
                for x in ast.walk(h.type)
            }
            if any(h.type is None for h in parent.handlers) or names & _WIDER:
                return False
            return bool(names & _CUDA_ERRORS)
        n = parent
    return False
