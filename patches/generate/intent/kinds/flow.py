"""``cuda-flow``: the value is handed to CUDA-only code. Five ways: assigned to a name that a
later statement of the same scope passes to code that stays CUDA (``n = torch.cuda.device_count()``
... ``torch.cuda.get_device_capability(i)``), or recorded in a flag its test sets (``if
x.device.type == "cuda": has_cuda = True`` ... ``if has_cuda: y = y.cuda()``); returned by a same-file function whose callers do
(``range(_gpu_count())`` over a helper that asks ``get_device_properties``); a device query
(``[queries]``) in a function that asks CUDA about the devices again; or passed by keyword to a
same-file function that tests that parameter against ``"cuda"`` (``_load(x, device_type="cuda")``,
the device-flag family's converted call). Or it annotates a parameter the function hands to
such code. The neutral answer would
count or name devices that CUDA code then indexes. What counts is code, not words: the name a
later assignment binds (``cuda_time = start.elapsed_time(end)``) is not CUDA work. Nor is a test
of the name's device type against ``"cuda"`` (``if device == "cuda":``) where the scope also binds
it to another backend's (``... else "mps" if ... else "cpu"``, ``elif ...: device = "mps"``):
the code already tells CUDA from the others, and its CUDA arm is reached on CUDA alone, before
the rewrite and after; only the arm the other devices run is judged."""

from __future__ import annotations

import ast

from patches.generate.intent.bindings import other_backend_bound
from patches.generate.intent.data import calls, is_cuda_word
from patches.generate.intent.flow_shapes import (
    arm_device,
    copied,
    entry,
    filters,
    kept_through,
    whole,
)
from patches.generate.intent.index import Hits
from patches.generate.intent.nodes import called, declared, device_type_decl, span_of
from patches.generate.intent.probe import Evidence, Probe, first_hit

KIND = "cuda-flow"
SUMMARY = "the value is handed to CUDA-specific code"


def detect(p: Probe) -> list[Evidence]:
    found = [*_assigned(p), *_recorded(p), *_returned(p), *_asked_again(p), *_switched(p)]
    return found or _annotated(p)


def _annotated(p: Probe) -> list[Evidence]:
    """The site is (in) the annotation of a parameter that the function hands to CUDA-only
    code (pfn-extras' ``stream(stream: Optional[torch.cuda.Stream])``, whose body enters
    ``torch.cuda.stream(stream)`` and reads ``stream.cuda_stream``): the annotation promises
    what that code takes."""
    n = p.node
    while n is not None and not isinstance(n, ast.arg):
        n = p.index.parents.get(n)
    fn = p.index.parents.get(p.index.parents.get(n)) if n is not None else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    for stmt in fn.body:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and sub.id == n.arg and isinstance(sub.ctx, ast.Load):
                hits = _use(p, sub, span_of(sub))
                if hits:
                    return first_hit(KIND, hits)
    return []


def _switched(p: Probe) -> list[Evidence]:
    """``f(x, device_type="cuda")`` where ``f`` tests that parameter against ``"cuda"`` (``if
    device_type == "cuda":``, the device-flag family's form of a former ``cuda=True``) and the
    test stays: the caller asks for CUDA's arm by name, and a neutral value would take the other
    arm on CUDA's behalf (a later run rewrote the converted call again). In this file the test
    must remain; a function of another file of the tree (imported by name) keeps it where its
    parameter is a device type it takes (``device_type: str = "cpu"``: ``device-predicates``
    keeps CUDA's arm of such a per-device choice)."""
    kw = p.index.parents.get(p.node)
    call = p.index.parents.get(kw)
    if not (isinstance(kw, ast.keyword) and kw.value is p.node and isinstance(call, ast.Call)):
        return []
    if kw.arg is None:
        return []
    callee = next((c for _sp, n, c in p.index.calls if n is call), None)
    if callee is not None:
        for test in _tests_of(callee, kw.arg):
            hits = p.remaining(span_of(test), p.own)
            if hits:
                line, what = hits[0]
                return [Evidence(KIND, line, f"{callee.name}() tests it: {what} (line {line})")]
        return []
    d = _imported_def(p, call)
    decl = declared(d.node, kw.arg) if d is not None else None
    if decl is not None and device_type_decl(*decl) and any(_tests_of(d.node, kw.arg)):
        return [Evidence(KIND, call.lineno, f"{d.qualname}() tests it against 'cuda' ({d.path})")]
    return []


def _tests_of(fn: ast.AST, name: str):
    """The comparisons of ``name`` with ``"cuda"`` in ``fn``."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            sides = [n.left, n.comparators[0]]
            if any(isinstance(x, ast.Name) and x.id == name for x in sides) and any(
                isinstance(x, ast.Constant) and x.value == "cuda" for x in sides
            ):
                yield n


def _imported_def(p: Probe, call: ast.Call):
    """The module-level function of another file of the tree that ``call`` (``f(...)``, ``f``
    imported by name) calls, or None."""
    index = getattr(p.ctx, "tree_index", None)
    if index is None or not isinstance(call.func, ast.Name):
        return None
    name = call.func.id
    q = p.ctx.qualify(call.lineno, name)
    if q is None or q == name:
        return None
    return next((d for d in index.named(name) if not d.cls and f"{d.module}.{name}" == q), None)


def _assigned(p: Probe) -> list[Evidence]:
    """``x = <site>`` and a later statement of the same scope hands ``x`` to CUDA-only code
    (an argument of a call that stays CUDA, a CUDA-only attribute of it, or the iterable of
    a loop whose body stays CUDA)."""
    stmt, node = p.stmt, p.node
    if isinstance(stmt, (ast.Assign, ast.AugAssign)) and filters(stmt.value, node):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return _handed_on(p, stmt, {t.id for t in targets if isinstance(t, ast.Name)})
    if not isinstance(stmt, ast.Assign):
        return []
    # the value itself, or a call inside it (`n = torch.cuda.device_count() if ... else 8`), or
    # the device string of an arm that is the value (`d = x if ... else torch.device("cuda", r)`)
    if stmt.value is not node and not (
        isinstance(node, ast.Call) and any(x is node for x in ast.walk(stmt.value))
    ):
        if not arm_device(stmt.value, node):
            return []
    return _handed_on(p, stmt, {t.id for t in stmt.targets if isinstance(t, ast.Name)}) or (
        _kept_on_self(p, stmt)
    )


def _kept_on_self(p: Probe, stmt: ast.Assign) -> list[Evidence]:
    """``self.x = <site>`` and a method of the same class hands ``self.x`` to CUDA-only code
    (``self.capture_stream = torch.cuda.Stream()`` ... ``torch.cuda.graph(g,
    stream=self.capture_stream)``): the instance keeps the value for that code."""
    attrs = {
        t.attr
        for t in stmt.targets
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    }
    cls = next((d for d in p.defs if isinstance(d, ast.ClassDef)), None)
    if not attrs or cls is None:
        return []
    for sub in ast.walk(cls):
        if (
            isinstance(sub, ast.Attribute)
            and sub.attr in attrs
            and isinstance(sub.ctx, ast.Load)
            and isinstance(sub.value, ast.Name)
            and sub.value.id == "self"
        ):
            hits = _use(p, sub, span_of(sub))  # its spelling is the author's word
            if hits:
                return first_hit(KIND, hits)
    return []


def _recorded(p: Probe) -> list[Evidence]:
    """``if <site>: flag = True`` and a later statement of the same scope hands ``flag`` to
    CUDA-only code (``if has_cuda_inputs: node.meta["val"] = node.meta["val"].cuda()``): the
    flag records the test's answer, as ``x = <site>`` would."""
    stmt = p.stmt
    if not isinstance(stmt, ast.If) or not any(x is p.node for x in ast.walk(stmt.test)):
        return []
    names = {
        t.id
        for s in stmt.body
        if isinstance(s, ast.Assign)
        and isinstance(s.value, ast.Constant)
        and isinstance(s.value.value, bool)  # a flag; `device = "cuda"` is a device pick
        for t in s.targets
        if isinstance(t, ast.Name)
    }
    return _handed_on(p, stmt, names)


def _handed_on(p: Probe, stmt, names: set[str]) -> list[Evidence]:
    """A use of ``names`` after ``stmt`` in its scope that hands them to CUDA-only code."""
    if not names:
        return []
    scope = p.ctx.scope_at(stmt.lineno)
    reads = list(_later_reads(p, stmt, names, scope))
    # a CUDA-or-CPU pick of the device data is placed on: made neutral, it binds the others'
    placed = stmt is p.stmt and p.cpu_pick is not None and any(_placed_on(p, r) for r in reads)
    several = {n for n in names if placed or other_backend_bound(p.ctx, scope, n)}
    for sub in reads:
        arm = _dispatch_arm(p, sub) if sub.id in several else None
        hits = _use(p, sub) if arm is None else p.remaining(span_of(arm), p.own) if arm else []
        if hits:
            return first_hit(KIND, hits)
    return []


def _resolves_to(p: Probe, sub: ast.Name, scope) -> bool:
    """``sub`` reads the binding of ``scope``: a use in that scope, or, for a module's name, in a
    function of the file that does not bind it itself (a script's ``use_cuda`` read by its
    ``main``, coqui-tts' ``train_encoder``, round 29)."""
    at = p.ctx.scope_at(sub.lineno)
    if at is scope:
        return True
    found = p.ctx.binding(sub.lineno, sub.id) if scope is p.ctx.module else None
    return found is not None and found[0] is scope


def _dispatch_arm(p: Probe, sub: ast.Name) -> list[ast.AST] | None:
    """``sub`` (or ``sub.type``) compared with ``"cuda"`` (``==``/``!=``) as the whole test of
    an ``if``/``IfExp``: the arm the other devices run (maybe empty), or None where ``sub`` is
    no such test."""
    n = p.index.parents.get(sub)
    if isinstance(n, ast.Attribute) and n.attr == "type":
        sub, n = n, p.index.parents.get(n)
    if not (
        isinstance(n, ast.Compare)
        and len(n.ops) == 1
        and isinstance(n.ops[0], (ast.Eq, ast.NotEq))
        and sub in (n.left, n.comparators[0])
        and any(isinstance(c, ast.Constant) and c.value == "cuda" for c in (n.left, *n.comparators))
    ):
        return None
    test = p.index.parents.get(n)
    if not (isinstance(test, (ast.If, ast.IfExp)) and test.test is n):
        return None
    other = test.orelse if isinstance(n.ops[0], ast.Eq) else test.body
    return other if isinstance(other, list) else [other]


def _use(p: Probe, sub: ast.Name | ast.Attribute, own=None, relay: bool = True) -> Hits:
    """What stays CUDA where ``sub`` (a use of the assigned name or attribute) goes; ``own``:
    the span not to count (the site's, by default). A flag copied into a local name, alone or
    as a term of an ``and`` (pfn-extras' tracer: ``is_cuda_available = self._is_cuda_available
    and not is_forked`` ... ``if is_cuda_available: torch.cuda.synchronize()``), goes where that
    name goes (one step: ``relay``)."""
    own = p.own if own is None else own
    user = p.index.top(sub)[1]  # a compound statement: all of it (the body uses it)
    # an assignment: its value (the name it binds is a word, not CUDA code: `cuda_time = ...`)
    value = getattr(user, "value", None) if isinstance(user, (ast.Assign, ast.AnnAssign)) else None
    hits = p.remaining(entry(value, sub) if value is not None else whole(user), own)
    if hits:
        return hits
    if relay and value is not None and copied(value, sub):
        hits = _relayed(p, user)
        if hits:
            return hits
    return _climb(p, sub, own, relay)


def _climb(p: Probe, sub: ast.AST, own, relay: bool = False) -> Hits:
    """What stays CUDA where the expressions holding ``sub`` hand it: a call that stays CUDA
    (or, with ``relay``, a same-file function that hands its parameter on so), a CUDA-only
    attribute of it, the body of a loop over it, a keyword that names CUDA."""
    n = sub
    while not isinstance(n, ast.stmt):
        parent = p.index.parents.get(n)
        hits = []
        if isinstance(parent, ast.Call) and n is not parent.func:
            hits = p.remaining(span_of(parent.func), own)
            if not hits and relay:
                hits = _in_callee(p, parent, n, own)
        elif isinstance(parent, ast.Attribute) and n is parent.value:
            hits = p.remaining(span_of(parent), own)  # `s.cuda_stream` while it stays
        elif isinstance(parent, ast.For) and n is parent.iter:
            hits = p.remaining(span_of(parent.body), own)
        elif isinstance(parent, ast.IfExp) and n is parent.test:
            # the value picks an arm: it goes where the arms go
            hits = p.remaining(span_of(parent.body), own) or p.remaining(
                span_of(parent.orelse), own
            )
        elif isinstance(parent, ast.keyword) and parent.arg and is_cuda_word(parent.arg):
            # `f(use_cuda=x)`: the callee's slot asks for CUDA by contract (as `cuda-name`)
            hits = [(parent.value.lineno, f"{parent.arg}=")]
        if hits or parent is None:
            return hits
        n = parent
    return []


def _in_callee(p: Probe, call: ast.Call, arg: ast.AST, own) -> Hits:
    """``arg`` handed to a same-file function (by position or keyword): where its parameter goes
    there, one step (mmpretrain's ``init_cam(method, model, layers, use_cuda, ...)``, whose body
    passes ``use_cuda=use_cuda`` on to grad-cam)."""
    callee = next((c for _sp, n, c in p.index.calls if n is call), None)
    if callee is None or isinstance(callee, ast.ClassDef):
        callee = _constructor(p, call)
    if callee is None:
        return []
    params = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
    if params and params[0] in ("self", "cls") and isinstance(call.func, ast.Attribute):
        params = params[1:]
    if callee.name == "__init__" and params[:1] == ["self"]:
        params = params[1:]
    kw = arg if isinstance(arg, ast.keyword) else p.index.parents.get(arg)
    if isinstance(kw, ast.keyword):
        name = kw.arg
    else:
        at = next((i for i, a in enumerate(call.args) if a is arg), None)
        name = params[at] if at is not None and at < len(params) else None
    if name is None:
        return []
    for sub in ast.walk(callee):
        if isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Load):
            hits = _climb(p, sub, own)  # where the parameter itself goes, not its statement
            if hits:
                return [(call.lineno, f"{callee.name}() hands it to {hits[0][1]}")]
    return []


def _constructor(p: Probe, call: ast.Call):
    """The ``__init__`` of the module-level class of the file that ``call`` builds (detectron2's
    demo: ``AsyncPredictor(cfg, num_gpus=num_gpu)``, whose ``__init__`` names each worker's
    device ``"cuda:{}".format(gpuid) if num_gpus > 0 else "cpu"``, round 42), or None."""
    if not isinstance(call.func, ast.Name):
        return None
    cls = next(
        (d for d in p.ctx.tree.body if isinstance(d, ast.ClassDef) and d.name == call.func.id),
        None,
    )
    return next(
        (
            f
            for f in getattr(cls, "body", ())
            if isinstance(f, ast.FunctionDef) and f.name == "__init__"
        ),
        None,
    )


def _relayed(p: Probe, stmt: ast.Assign | ast.AnnAssign) -> Hits:
    """What stays CUDA where the names ``stmt`` binds go later in its scope."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    names = {t.id for t in targets if isinstance(t, ast.Name)}
    for sub in _later_reads(p, stmt, names, p.ctx.scope_at(stmt.lineno)):
        hits = _use(p, sub, span_of(sub), relay=False)  # the name is the author's word
        if hits:
            return hits
    return []


def _placed_on(p: Probe, sub: ast.Name) -> bool:
    """``sub`` is the device data is placed on: ``x.to(sub)``, ``device=sub``,
    ``map_location=sub``, ``torch.device(sub)``."""
    parent = p.index.parents.get(sub)
    if isinstance(parent, ast.keyword):
        return parent.arg in ("device", "map_location")
    if isinstance(parent, ast.Call) and sub in parent.args:
        name = parent.func.attr if isinstance(parent.func, ast.Attribute) else None
        return name == "to" or ast.unparse(parent.func) == "torch.device"
    return False


def _later_reads(p: Probe, stmt, names: set[str], scope):
    """The reads of ``names`` after ``stmt`` that resolve to ``scope``'s binding."""
    for sub in ast.walk(scope.node) if names else ():
        if (
            isinstance(sub, ast.Name)
            and sub.id in names
            and isinstance(sub.ctx, ast.Load)
            and sub.lineno > stmt.end_lineno
            and _resolves_to(p, sub, scope)
        ):
            yield sub


def _returned_by(index, node) -> ast.Return | None:
    """The ``return`` whose value is ``node`` or an ``and`` chain holding it: the function
    returns true only where ``node`` is true (``return a.is_cuda and b.is_cuda``), or a builtin
    that keeps its meaning (``return list(range(torch.cuda.device_count()))``)."""
    n = node
    while True:
        parent = index.parents.get(n)
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
            n = parent
        elif kept_through(parent, n):
            n = parent
        elif isinstance(parent, ast.Return) and parent.value is n:
            return parent
        else:
            return None


def _returned(p: Probe) -> list[Evidence]:
    """``return <site>`` (the whole value, or a term of an ``and`` chain) of a same-file
    function whose callers hand the value to CUDA-only code: ``range(_gpu_count())`` over
    ``get_device_properties``, or a device predicate (``return a.is_cuda and b.is_cuda``) whose
    callers' guards run CUDA-only code (two calls deep). A caller that itself returns the call
    (``return config.flag and check_device(a, b)``) passes the predicate on to its own callers
    (two such steps): a neutral predicate would let other accelerators into that code."""
    if _returned_by(p.index, p.node) is None or not p.defs:
        return []
    fn = p.defs[0]
    if isinstance(fn, ast.ClassDef):
        return []
    todo, seen = [(fn, 0)], {fn}
    while todo:
        fn, step = todo.pop(0)
        for _csp, call, callee in p.index.calls:
            if callee is not fn:
                continue
            ctop, cstmt = p.index.top(call)
            spans = [sp for _k, sps in p.index.guarded(call, ctop) for sp in sps]
            if isinstance(cstmt, ast.Assign) and cstmt.value is call:
                spans.append(span_of(p.index.after(cstmt) or [cstmt]))
            for sp in spans:
                hits = p.reach2(sp, p.own)
                if hits:
                    line, what = hits[0]
                    detail = f"returned by {fn.name}() to the call at line {call.lineno}: {what}"
                    return [Evidence(KIND, line, detail)]
            outer = p.index.defs(call)
            caller = outer[0] if outer else None
            if (
                step < 2
                and isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef))
                and caller not in seen
                and _returned_by(p.index, call) is not None
            ):
                seen.add(caller)
                todo.append((caller, step + 1))
    return []


def _other_arms(p: Probe) -> list:
    """The spans of the arms an ``if``/``elif`` chain holding the site runs instead of the
    site's own (``elif mode == "gpu": <CUDA> ... elif mode == "auto": <site>``): code there is
    never asked in the run that asks the site."""
    out, n = [], p.node
    fn = p.defs[0] if p.defs else None
    while n is not None and n is not fn:
        parent = p.index.parents.get(n)
        if isinstance(parent, ast.If):
            if n in parent.body and parent.orelse:
                out.append(span_of(parent.orelse))
            elif n in parent.orelse:
                out.append(span_of(parent.body))
        n = parent
    return out


def _type_tests(p: Probe) -> list:
    """The spans of the string comparators of the function's comparisons (``d.type != "cuda"``,
    ``device == "cuda"``): a device-type test, not a question to CUDA about its devices."""
    out = []
    for node in ast.walk(p.defs[0]):
        if isinstance(node, ast.Compare):
            out += [
                span_of(c)
                for c in [node.left, *node.comparators]
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
    return out


def _asked_again(p: Probe) -> list[Evidence]:
    """A device query in a function that asks ``torch.cuda`` about devices again (not in an arm
    of an ``if``/``elif`` chain the site's own arm excludes)."""
    if not p.defs or called(p.ctx, p.node) not in calls("queries"):
        return []
    others = _other_arms(p)
    tests = _type_tests(p)
    for line, what in p.remaining(span_of(list(p.defs[0].body)), p.own):
        if any(a[0][0] <= line <= a[1][0] for a in others):
            continue  # an arm the site's own arm excludes: never asked in the same run
        if any(t[0][0] <= line <= t[1][0] for t in tests) and what.startswith(("'", '"')):
            continue  # `d.type != "cuda"`: a test of a device's type asks CUDA nothing
        if "cuda" in what and not what.startswith("HN"):
            detail = f"the same function asks CUDA about devices: {what} (line {line})"
            return [Evidence(KIND, line, detail)]
    return []
