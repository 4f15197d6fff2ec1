"""``cuda-function``: an enclosing function or class is about CUDA.

A class whose name or docstring's summary (first sentence) says CUDA (``CUDATestBase``, whose
``device_type = "cuda"`` must stay CUDA's), or a decorator that registers a function for CUDA-only
code (``@register(..., "cuda")`` while that stays): all of it is CUDA's, whatever it calls.

A function's own name and summary speak only for what the function returns: its ``return``
statements, the test of an ``if`` that returns, a name a ``return`` reads, a function it returns
(``has_cuda_pallas``, "Checks for a full Pallas-on-CUDA environment": ``return ...
torch.cuda.is_available() ...`` stays; ``Storage.cuda``: ``device2 = torch.device("cuda", i)``
... ``return self.to(device2)`` stays; ``use_uint8_triton_storage_for_cuda_float8_e4m3fn``: ``if
device.type != "cuda": return False`` stays; ``onlyCUDAAndPRIVATEUSE1``: the wrapper it returns
keeps its device test), not for how its body works: the events and syncs of ``_benchmark_collective_with_cuda_events_impl`` ("Core
benchmarking logic using CUDA events"), the current device inside a ``.cuda()`` method ("Returns
a copy of this object in CUDA memory"), or the ``.cuda()`` such a method hands on to its parts
(``ShardedTensor.cuda``'s ``shard.tensor.cuda(device=current_device)`` became ``.to(...)`` on
the accelerator's current device in 2.14.1; mmengine's ``BaseDataElement.cuda`` is the same
shape), a workspace allocated inside ``get_symm_mem_workspace``
are judged by their own unit (upstream neutralised all three between 2.13 and 2.14). Nor does a
summary speak for a call handed the function's own device parameter (opacus' benchmark helper,
"Safely resets CUDA peak memory statistics of device", round 22): the caller picks the device. The one class
name this keeps that upstream neutralised anyway is ``CUDABenchmarkRequest``'s (the replay: 3
sites, 1 of them in upstream's form), against 2 wrong rewrites in ``CUDATestBase`` without it."""

from __future__ import annotations

import ast

from patches.generate.intent.data import about_cuda_summary, is_cuda_word, other_backend_only
from patches.generate.intent.index import DEVICE_NAME
from patches.generate.intent.nodes import own_returns, span_of
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-function"
SUMMARY = "the enclosing function or class is about CUDA"


def detect(p: Probe) -> list[Evidence]:
    for d in p.defs:
        decorated = [
            a
            for dec in d.decorator_list
            if isinstance(dec, ast.Call)
            for a in [*dec.args, *(k.value for k in dec.keywords)]
        ]
        hits = [h for a in decorated for h in p.remaining(span_of(a), p.own)]
        if hits:
            return [Evidence(KIND, d.lineno, f"{d.name} is registered for {hits[0][1]}")]
        if _serves_others(p, d):
            continue
        if is_cuda_word(d.name) and _named_for(p, d):
            return [Evidence(KIND, d.lineno, f"inside {d.name}")]
        doc = ast.get_docstring(d, clean=False)
        if doc and about_cuda_summary(doc) and _named_for(p, d) and not _callers_device(p, d):
            line = doc.strip().split("\n")[0][:60]
            return [Evidence(KIND, d.lineno, f"{d.name}: {line!r}")]
    return []


def _callers_device(p: Probe, d) -> bool:
    """The site hands a function's own device parameter to its call
    (``torch.cuda.max_memory_allocated(device)`` in a helper taking ``device``): it works on the
    device its caller passes, and a summary's CUDA ("Safely resets CUDA peak memory statistics
    of device") is the one its author had. The name still speaks (``cuda_stats(device)``)."""
    if isinstance(d, ast.ClassDef):
        return False
    a = d.args
    devices = {
        x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs] if DEVICE_NAME.fullmatch(x.arg)
    }
    calls = [
        c for c in ast.walk(p.top) if isinstance(c, ast.Call) and is_cuda_word(ast.unparse(c.func))
    ]
    return any(
        isinstance(v, ast.Name) and v.id in devices
        for c in calls
        for v in [*c.args, *(k.value for k in c.keywords)]
    )


def _serves_others(p: Probe, d) -> bool:
    """``d``'s code names another backend (``TEST_XPU``, ``torch.hpu.device_count()``, ``"xpu"``):
    it already serves several devices, so CUDA in its name or summary is an example, not its
    subject (``skip_if_no_gpu``, "... its own GPU via ``torch.cuda.device(rank)``", probes CUDA,
    HPU and XPU alike; upstream made it one accelerator probe in 2.15). Read from the file's
    device-word tokens (``Index.tokens``)."""
    return any(other_backend_only(t.text) for t in p.index.tokens_in(span_of(d)))


def _named_for(p: Probe, d) -> bool:
    """What ``d``'s name or summary speaks for: all of a class; of a function, what it returns
    (``_decides_return``), or anywhere in a function ``d`` returns (a decorator's wrapper:
    ``def onlyCUDA(fn): def only_fn(...): ...; return only_fn``)."""
    if isinstance(d, ast.ClassDef):
        return True
    inner = p.defs[: p.defs.index(d)]
    if not inner:
        return _decides_return(d, p.stmt)
    chain = [*inner, d]
    return all(_returns(outer, fn) for fn, outer in zip(chain, chain[1:]))


def _returns(outer, fn) -> bool:
    """``outer`` returns the function ``fn`` it defines (``return fn``, by its name)."""
    if isinstance(outer, ast.ClassDef) or isinstance(fn, ast.ClassDef):
        return False
    return any(
        isinstance(r, ast.Return) and isinstance(r.value, ast.Name) and r.value.id == fn.name
        for r in outer.body
    )


def _decides_return(fn, stmt) -> bool:
    """``stmt`` (of ``fn`` itself) decides what ``fn`` returns: a ``return``, the test of an
    ``if`` one of whose arms returns (``if device.type != "cuda": return False``) or adds to what
    it returns, or a statement that sets or adds to a name a ``return`` of ``fn`` reads
    (``device2 = torch.device("cuda", i)`` ... ``return self.to(device2)``; PyG's ``withCUDA``,
    "test both on CPU and CUDA": ``if torch.cuda.is_available(): devices.append(...)`` ...
    ``return pytest.mark.parametrize("device", devices)(func)``)."""
    if isinstance(stmt, ast.Return):
        return True
    returned = {n.id for r in own_returns(fn) for n in ast.walk(r) if isinstance(n, ast.Name)}
    if isinstance(stmt, ast.If):
        arms = [*stmt.body, *stmt.orelse]
        return any(isinstance(s, ast.Return) or _sets(s) & returned for s in arms)
    return bool(_sets(stmt) & returned)


_ADDS = frozenset({"append", "extend", "insert", "add", "update"})


def _sets(stmt) -> set[str]:
    """The names ``stmt`` assigns, or adds to by a method call (``devices.append(...)``)."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        recv = call.func.value
        if call.func.attr in _ADDS and isinstance(recv, ast.Name):
            return {recv.id}
    return set()
