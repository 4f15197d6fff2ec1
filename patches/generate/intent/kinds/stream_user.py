"""``cuda-stream-user``: a stream the site makes generic (``torch.cuda.current_stream()``,
``torch.cuda.Stream()``) that code staying CUDA's uses: an event the file builds as
``torch.cuda.Event`` and leaves records on it or waits for it (``event.record(stream)``,
``stream.wait_event(event)``; also an event taken from a collection of them, ``for d, event in
self.events.items()``, round 39), or a function of the file it is handed to reads its
``.cuda_stream`` / ``.cuda_event`` handle (a class of the file it is handed to, off the attribute
its ``__init__`` stores it in), or a call passes it beside raw device pointers (``.data_ptr()``:
a native launch). ``torch.cuda.Event.record`` of a ``torch.Stream``
fails on CUDA before torch 2.11, a generic stream's ``wait_event`` of a CUDA event does not wait
before it either, and a ``torch.Stream`` has no ``.cuda_stream``: the stream and what uses it
change together or not at all (Megatron's async scheduling events and UVM prefetch, unsloth-zoo's
block swap, round 38). The stream is followed through the name or ``self`` attribute it is
stored in (alone or as a list of them), within its function (the class, for an attribute), and
into a function of the file it is handed to (an autograd Function's ``forward`` through
``Fn.apply``: torchani's ensemble waits for its ``torch.cuda.Event`` on each stream, round 40)."""

from __future__ import annotations

import ast

from patches.generate.intent.nodes import called, span_of
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-stream-user"
SUMMARY = "a stream whose users stay CUDA's (a torch.cuda.Event, a .cuda_stream handle)"

_STREAMS = frozenset(
    {
        "torch.cuda.current_stream",
        "torch.cuda.default_stream",
        "torch.cuda.Stream",
        "torch.cuda.streams.Stream",
    }
)
_EVENTS = frozenset({"torch.cuda.Event", "torch.cuda.streams.Event"})
_ON_EVENT = frozenset({"record", "wait"})  # event.record(stream), event.wait(stream)
_ON_STREAM = frozenset({"wait_event", "record_event"})  # stream.wait_event(event)
_HANDLES = frozenset({"cuda_stream", "cuda_event"})


def detect(p: Probe) -> list[Evidence]:
    if not isinstance(p.node, ast.Call) or called(p.ctx, p.node) not in _STREAMS:
        return []
    events = _cuda_events(p)
    cls = _class_of(p, p.node)
    for use, other in _uses(p):
        key = _key(other, cls)
        if isinstance(other, ast.Name) and key not in events:
            key = f"{other.id}@{_function_line(p, other)}"  # a loop's name, in its function
        if key is not None and key in events:
            line, span = events[key]
            if p.remaining(span, p.own):
                what = f"{ast.unparse(other)} = torch.cuda.Event (line {line})"
                return [Evidence(KIND, use.lineno, what)]
        if other is None and _raw_launch(use):
            return [Evidence(KIND, use.lineno, "handed to a launch of raw device pointers")]
        if other is None:
            line = _reads_handle(p, use)
            if line:
                return [Evidence(KIND, use.lineno, f"its handle is read (line {line})")]
            line = _meets_event(p, use, events)
            if line:
                return [Evidence(KIND, use.lineno, f"meets a torch.cuda.Event there (line {line})")]
    return []


def _meets_event(p: Probe, call: ast.Call, events: dict) -> int | None:
    """The line where the function ``call`` hands the stream (or the list of them) to waits for
    or records an event the file builds as ``torch.cuda.Event`` that stays (``s.wait_event(e)``,
    ``s[i].wait_event(e)``, ``e.record(s[i])``): an autograd Function's ``forward`` through
    ``Fn.apply(...)`` (torchani's multi-stream ensemble), or a function of the file."""
    callee, shift = _callee(p, call)
    if callee is None:
        return None
    cls = _class_of(p, p.node)
    params = [a.arg for a in callee.args.args][shift:]
    names = {params[i] for i, a in enumerate(call.args) if i < len(params) and _here(p, a, cls)}
    for n in ast.walk(callee) if names else ():
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.args):
            continue
        if n.func.attr in _ON_STREAM and _root(n.func.value) in names:
            event = n.args[0]
        elif n.func.attr in _ON_EVENT and _root(n.args[0]) in names:
            event = n.func.value
        else:
            continue
        if isinstance(event, ast.Name):  # a local of the callee's
            found = _local_event(p, callee, event)
        else:
            found = events.get(_key(event, cls) or "")
        if found and p.remaining(found[1], p.own):
            return n.lineno
    return None


def _local_event(p: Probe, fn: ast.FunctionDef, name: ast.Name) -> tuple[int, tuple] | None:
    """(line, span) of the ``torch.cuda.Event(...)`` that ``fn`` binds ``name`` to, else None."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name.id for t in n.targets
        ):
            value, many = _event_call(p, n.value)
            if value is not None and not many:
                return n.lineno, span_of(value.func)
    return None


def _here(p: Probe, arg: ast.AST, cls: str) -> bool:
    stored = _stored_as(p, cls)
    return arg is p.node or (stored is not None and _key(arg, cls) == stored)


def _root(n: ast.AST) -> str | None:
    """The name under ``s`` or ``s[i]``."""
    n = n.value if isinstance(n, ast.Subscript) else n
    return n.id if isinstance(n, ast.Name) else None


def _callee(p: Probe, call: ast.Call) -> tuple[ast.FunctionDef | None, int]:
    """(the definition ``call`` runs, how many of its leading parameters the call does not
    pass): ``Fn.apply(...)`` of a class of the file runs ``Fn.forward(ctx, ...)``."""
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr == "apply" and isinstance(f.value, ast.Name):
        for n in p.ctx.tree.body:
            if isinstance(n, ast.ClassDef) and n.name == f.value.id:
                fwd = next((d for d in n.body if getattr(d, "name", "") == "forward"), None)
                return (fwd, 1) if isinstance(fwd, ast.FunctionDef) else (None, 0)
        return None, 0
    for _sp, c, callee in p.index.calls:
        if c is call and isinstance(callee, ast.FunctionDef):
            return callee, 0
    return None, 0


def _key(n: ast.AST | None, cls: str = "") -> str | None:
    """A name, or ``self.x`` of class ``cls``: how an event is matched to where it is built."""
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
        return f"{cls}.self.{n.attr}"
    return None


def _function_line(p: Probe, node: ast.AST) -> int:
    """The first line of the function holding ``node`` (0 at none)."""
    n = p.index.parents.get(node)
    while n is not None and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
        n = p.index.parents.get(n)
    return n.lineno if n is not None else 0


def _class_of(p: Probe, node: ast.AST) -> str:
    """The name of the class whose body holds ``node`` ("" at none)."""
    n = p.index.parents.get(node)
    while n is not None and not isinstance(n, ast.ClassDef):
        n = p.index.parents.get(n)
    return n.name if n is not None else ""


def _cuda_events(p: Probe) -> dict[str, tuple[int, tuple]]:
    """Name or ``self.x`` -> (line, span) of each ``torch.cuda.Event(...)`` stored in the file."""
    out: dict[str, tuple[int, tuple]] = {}
    for n in p.ctx.nodes:
        if not isinstance(n, (ast.Assign, ast.AnnAssign)):
            continue
        value, many = _event_call(p, n.value)
        if value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                key = _key(t, _class_of(p, n))
                if key is not None:
                    out.setdefault(key + many, (n.lineno, span_of(value.func)))
    for (
        n
    ) in p.ctx.nodes:  # an event taken from a collection of them: `for d, e in self.events.items()`
        if isinstance(n, (ast.For, ast.comprehension)):
            each = _each(n, _class_of(p, n), out)
            if each is not None:
                out.setdefault(f"{each[0]}@{_function_line(p, n)}", each[1])
    for n in p.ctx.nodes:  # a local alias: `done_event = self._h2d_done_event`
        if isinstance(n, ast.Assign) and len(n.targets) == 1:
            cls = _class_of(p, n)
            was, now = _key(n.value, cls), _key(n.targets[0], cls)
            if was in out and now is not None:
                out.setdefault(now, out[was])
    return out


def _event_call(p: Probe, value) -> tuple[ast.Call | None, str]:
    """(the ``torch.cuda.Event(...)`` call, "" for one event or "[]" for a collection built of
    them: ``{d: torch.cuda.Event() for d in devices}``, ``[torch.cuda.Event() for _ in ...]``)."""
    many = ""
    if isinstance(value, (ast.DictComp, ast.ListComp)):
        value, many = (value.value if isinstance(value, ast.DictComp) else value.elt), "[]"
    if isinstance(value, ast.Call) and called(p.ctx, value) in _EVENTS:
        return value, many
    return None, ""


def _each(loop, cls: str, events: dict) -> tuple[str, tuple] | None:
    """(name, where its event is built) for a loop over a collection of events: the loop's
    name for each value (``for e in evs``, ``for e in evs.values()``, ``for d, e in
    evs.items()``)."""
    it, target = loop.iter, loop.target
    items = isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)
    source = it.func.value if items and it.func.attr in ("items", "values") else it
    found = events.get(f"{_key(source, cls)}[]")
    if found is None:
        return None
    if items and it.func.attr == "items":
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None
    key = _key(target, cls) if target is not None else None
    return (key, found) if key is not None else None


def _uses(p: Probe):
    """(call, the other object or None) for each call the stream goes into: the event of
    ``event.record(stream)`` / ``stream.wait_event(event)``, else None (``f(stream=s)``)."""
    cls = _class_of(p, p.node)
    stored = _stored_as(p, cls)
    scope = _scope(p, stored)
    for n in ast.walk(scope) if scope is not None else ():
        if not isinstance(n, ast.Call):
            continue
        args = [*n.args, *(k.value for k in n.keywords)]
        here = [a for a in args if a is p.node or (stored and _key(a, cls) == stored)]
        func = n.func
        if here and isinstance(func, ast.Attribute) and func.attr in _ON_EVENT:
            yield n, func.value
        elif here:
            yield n, None
        elif isinstance(func, ast.Attribute) and func.attr in _ON_STREAM and args:
            if func.value is p.node or (stored and _key(func.value, cls) == stored):
                yield n, args[0]


def _stored_as(p: Probe, cls: str) -> str | None:
    """The name or ``self.x`` the stream is stored in: alone, or as the element of a list built
    of them (``self._streams = [torch.cuda.Stream() for _ in range(n)]``)."""
    parent = p.index.parents.get(p.node)
    if isinstance(parent, ast.ListComp) and parent.elt is p.node:
        node, parent = parent, p.index.parents.get(parent)
        if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1:
            return _key(parent.targets[0], cls)
        return None
    if isinstance(parent, ast.Assign) and parent.value is p.node and len(parent.targets) == 1:
        return _key(parent.targets[0], cls)
    return None


def _scope(p: Probe, stored: str | None) -> ast.AST | None:
    """Where the stream's uses are looked for: its function (a ``self`` attribute: its class)."""
    if stored and ".self." in stored:
        cls = next((d for d in p.defs if isinstance(d, ast.ClassDef)), None)
        if cls is not None:
            return cls
    return p.functions[0] if p.functions else p.stmt


def _raw_launch(call: ast.Call) -> bool:
    """``call`` passes raw device pointers (``x.data_ptr()``) beside the stream: a native
    kernel launch (vLLM's FlyDSL and HIP launchers, ``run_compiled(kernel, q.data_ptr(), ...,
    torch.cuda.current_stream())``), which takes the driver's stream, CUDA's (round 41)."""
    args = [*call.args, *(k.value for k in call.keywords)]
    return any(
        isinstance(x, ast.Attribute) and x.attr == "data_ptr" for a in args for x in ast.walk(a)
    )


def _reads_handle(p: Probe, call: ast.Call) -> int | None:
    """The line where a function of the file that ``call`` calls reads ``.cuda_stream`` (or
    ``.cuda_event``) off one of its parameters (for a class of the file, off the attribute its
    ``__init__`` stores a parameter in: vLLM's decoder slot keeps ``self.stream`` and hands
    ``self.stream.cuda_stream`` to NVDEC, round 41), else None."""
    if isinstance(call.func, ast.Name):
        line = _class_reads_handle(p, call.func.id)
        if line:
            return line
    for _sp, c, callee in p.index.calls:
        if c is not call or not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = {a.arg for a in callee.args.args + callee.args.kwonlyargs}
        for n in ast.walk(callee):
            if isinstance(n, ast.Attribute) and n.attr in _HANDLES:
                if isinstance(n.value, ast.Name) and n.value.id in params:
                    return n.lineno
    return None


def _class_reads_handle(p: Probe, name: str) -> int | None:
    """The line where a method of the file's class ``name`` reads a handle off ``self.<attr>``,
    an attribute its ``__init__`` sets from a parameter, else None."""
    cls = next(
        (n for n in ast.walk(p.ctx.tree) if isinstance(n, ast.ClassDef) and n.name == name), None
    )
    init = (
        next((d for d in cls.body if getattr(d, "name", "") == "__init__"), None) if cls else None
    )
    if not isinstance(init, ast.FunctionDef):
        return None
    params = {a.arg for a in init.args.args + init.args.kwonlyargs}
    stored = {
        t.attr
        for n in ast.walk(init)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in params
        for t in n.targets
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    }
    for n in ast.walk(cls):
        if isinstance(n, ast.Attribute) and n.attr in _HANDLES:
            inner = n.value
            if isinstance(inner, ast.Attribute) and inner.attr in stored:
                if isinstance(inner.value, ast.Name) and inner.value.id == "self":
                    return n.lineno
    return None
