"""A boolean CUDA switch becomes a device type, with every caller in the tree (HN510 `cuda-flag`).

inductor's C++ build, as torch 2.4 had it, and as upstream rewrote it (2.13)::

    def load_async(cls, source_code: str, cuda=False, submit_fn=None):   # codecache.py
        if cuda: ...
    CppCodeCache.load(self.source_code, cuda=False)                     # autotune_process.py
    self.cuda = False                                                   # graph.py

becomes::

    def load_async(cls, source_code: str, device_type: str = "cpu", submit_fn=None):
        if device_type == "cuda": ...
    CppCodeCache.load(self.source_code, device_type="cpu")
    self.device_type = "cpu"

A switch named ``cuda``/``use_cuda`` can only say "CUDA or the CPU"; a device type says the
same for CUDA (``cuda=True`` is ``device_type="cuda"``, ``if cuda:`` is ``if device_type ==
"cuda":``) and lets the code name another accelerator later. The rewrite is exact: the same
behaviour on every device.

A **parameter unit** is every function of the tree of one name holding the switch at one place
(a method and its overrides). It is rewritten only where every call of that name in the tree is
known: resolved to the unit through imports and classes, or (an unknown receiver) a call that
either passes no switch or can only be the unit's; the switch passed by keyword or position
(``True``/``False`` -> ``"cuda"``/``"cpu"``, the caller's own converted switch -> ``device_type``,
any other value ``v`` -> ``"cuda" if v else "cpu"``). Left, with the reason, where:

* a caller passes ``**kwargs`` or ``*args`` that may hold the switch, or the function is used as a
  value (``functools.partial(load, ...)``, ``getattr(cls, "load")``): a caller we cannot map;
* the function is public API (no ``_`` in its module path, name or class, not a test): callers
  outside the tree pass ``cuda=`` and would break (upstream broke them for
  ``cpp_extension.include_paths`` in 2.13; a maintainer decides that, not a codemod);
* the switch selects CUDA device code (a statement reading it calls ``.cuda()``,
  ``torch.cuda.*``, ``.is_cuda``): it stays a CUDA switch (distributed tests'
  ``if cuda: t = t.cuda(rank)``);
* its sites span subsystems (one patch each: a prefix of the series would hold half the unit),
  or a file holding one has no HN510 finding (the run would not visit it).

An **attribute unit** (``self.cuda = False`` in a class) is rewritten only where every read and
write of the attribute in the tree is on ``self`` in that class or its subclasses (a read through
another object, ``V.graph.cuda``, or by name, ``getattr(g, "cuda")``, leaves it).

Inside a converted function every read becomes the device-type test (``device_type == "cuda"``;
``not cuda`` -> ``device_type == "cpu"``, the switch's other side), except where it is passed
on as another converted unit's switch (``cuda=cuda`` -> ``device_type=device_type``). A switch passed to a function
outside the tree keeps its keyword: ``cuda=device_type == "cuda"``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst

from audits.python.findings import subsystem
from patches.generate.codemods.families.base import Family, is_test_file
from patches.generate.codemods.tree_index import Def, TreeIndex, dotted

NEW = "device_type"
_CUDA_ATTRS = ("is_cuda",)


@dataclass
class ParamUnit:
    name: str  # the function's name
    param: str  # the switch's name
    defs: list[tuple[Def, int | None, bool | None]] = field(default_factory=list)  # index, default
    calls: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, name) to map
    why: str = ""  # non-empty: left
    # (file, first, last) lines of its declarations and calls: the switch sites it holds
    spans: list[tuple[str, int, int]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.why


@dataclass
class AttrUnit:
    cls: str
    attr: str
    sites: list[tuple[str, int]] = field(default_factory=list)  # (file, line) of reads/writes
    why: str = ""

    @property
    def ok(self) -> bool:
        return not self.why


@dataclass
class Analysis:
    params: dict[tuple[str, str], ParamUnit] = field(default_factory=dict)  # (name, param)
    attrs: dict[tuple[str, str], AttrUnit] = field(default_factory=dict)  # (class, attr)
    # (file, def line, def name) -> the converted unit whose switch that function declares
    defs: dict[tuple[str, int, str], ParamUnit] = field(default_factory=dict)
    # (file, call line, callee name) -> the converted unit the call goes to
    calls: dict[tuple[str, int, str], ParamUnit] = field(default_factory=dict)
    # (file, line, attr) -> the converted attribute unit read or written there on self
    attr_sites: dict[tuple[str, int, str], AttrUnit] = field(default_factory=dict)


def _bool_const(node) -> bool | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return node.value
    return None


def _is_public(d: Def) -> bool:
    if is_test_file(d.path):
        return False
    parts = d.module.split(".") + (d.cls[len(d.module) + 1 :].split(".") if d.cls else [])
    return not any(p.startswith("_") for p in parts + [d.name] if p)


def _param_of(d: Def, names: tuple[str, ...]):
    """(the switch's name, its positional index in a call, its default) or None: a parameter
    named like the switch with a bool default or a ``bool`` annotation (or neither: then every
    caller must pass a truth value, checked with the calls)."""
    a = d.node.args
    positional = a.posonlyargs + a.args
    skip = 1 if d.kind in ("method", "classmethod") else 0
    defaults = dict(
        zip([x.arg for x in positional][len(positional) - len(a.defaults) :], a.defaults)
    )
    defaults.update({x.arg: v for x, v in zip(a.kwonlyargs, a.kw_defaults) if v is not None})
    found = []
    for i, x in enumerate(positional):
        if x.arg in names:
            found.append((x, i - skip if i >= skip else None))
    for x in a.kwonlyargs:
        if x.arg in names:
            found.append((x, None))
    if len(found) != 1:
        return None
    x, index = found[0]
    default = defaults.get(x.arg)
    ann = x.annotation
    is_bool_ann = isinstance(ann, ast.Name) and ann.id == "bool"
    if default is not None and _bool_const(default) is None:
        return None  # a default that is no truth value: not a switch
    if ann is not None and not is_bool_ann:
        return None
    return x.arg, index, _bool_const(default) if default is not None else None


def _binds(node: ast.AST, name: str) -> bool:
    """``name`` is bound anew inside ``node`` (assigned, deleted, a nested parameter)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return True
        if isinstance(n, ast.arg) and n.arg == name:
            return True
    return False


def _cuda_code(ctx, node: ast.AST) -> str:
    """The first CUDA device API ``node`` uses (``.cuda()``, ``torch.cuda.*``, ``.is_cuda``),
    as "`text` (line N)", or ""."""
    for n in ast.walk(node):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "cuda"
            and not _imported(ctx, n.func.value)
        ):
            return f"`{ast.unparse(n)[:60]}` (line {n.lineno})"  # a tensor's or module's
        if isinstance(n, ast.Attribute):
            if n.attr in _CUDA_ATTRS:
                return f"`{ast.unparse(n)[:60]}` (line {n.lineno})"
            d = dotted(n)
            q = ctx.qualify(n.lineno, d) if d else None
            if q and (q == "torch.cuda" or q.startswith("torch.cuda.")):
                return f"`{d}` (line {n.lineno})"
    return ""


def _imported(ctx, recv: ast.AST) -> bool:
    """``recv`` is rooted at an imported name (a library's ``paths.cuda()``, not a tensor's
    ``.cuda()`` method)."""
    d = dotted(recv)
    b = ctx.binding(recv.lineno, d.split(".")[0]) if d else None
    return b is not None and b[1] == {"import"}


def _stmt_of(parents, node) -> ast.AST:
    """The statement reading ``node``: a simple statement, or the whole compound statement
    whose test (or iterable, or context) it is in."""
    p = parents.get(node)
    while p is not None and not isinstance(p, ast.stmt):
        p = parents.get(p)
    return p if p is not None else node


def _parents(tree) -> dict:
    return {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}


class _Tree:
    """The analysis of one tree for one set of switch names (``analyse``)."""

    def __init__(self, index: TreeIndex, names: tuple[str, ...]) -> None:
        self.index, self.names = index, names
        self.out = Analysis()
        self._parents: dict[str, dict] = {}
        self._nodes: dict[tuple[str, int, str], ast.Call] = {}
        self._stores: dict[tuple[str, int, str], ast.AST] = {}  # attribute writes' values

    def parents(self, rel: str) -> dict:
        if rel not in self._parents:
            ctx = self.index.context(rel)
            self._parents[rel] = _parents(ctx.tree) if ctx is not None else {}
        return self._parents[rel]

    def has_finding(self, rel: str) -> bool:
        """The file holds an HN510 site (a parameter, keyword or attribute set named like a
        switch): the run visits it (``audits/python/flags.py``)."""
        ctx = self.index.context(rel)
        if ctx is None:
            return False
        for n in ast.walk(ctx.tree):
            if isinstance(n, ast.arg) and n.arg in self.names:
                return True
            if isinstance(n, ast.keyword) and n.arg in self.names:
                return True
            if (
                isinstance(n, ast.Attribute)
                and n.attr in self.names
                and isinstance(n.ctx, ast.Store)
            ):
                return True
        return False

    # -- parameters -------------------------------------------------------------------------
    def run(self) -> Analysis:
        needles = [n.encode() for n in self.names]
        files = [r for r, b in self.index.files().items() if any(x in b for x in needles)]
        for rel in files:
            for d in self.index.defs(rel):
                p = _param_of(d, self.names)
                if p is None:
                    continue
                unit = self.out.params.setdefault((d.name, p[0]), ParamUnit(d.name, p[0]))
                unit.defs.append((d, p[1], p[2]))
        for unit in self.out.params.values():
            self._check(unit)
        for rel in files:
            self._attrs(rel)
        for unit in self.out.attrs.values():
            self._check_attr(unit)
        while self._wrapped():
            pass
        for unit in self.out.params.values():
            if unit.ok:
                for d, _, _ in unit.defs:
                    self.out.defs[(d.path, d.node.lineno, d.name)] = unit
                for rel, line, name in unit.calls:
                    self.out.calls[(rel, line, name)] = unit
        for unit in self.out.attrs.values():
            if unit.ok:
                for rel, line in unit.sites:
                    self.out.attr_sites[(rel, line, unit.attr)] = unit
        return self.out

    def _wrapped(self) -> bool:
        """Leave a unit whose caller passes its own CUDA switch that stays one (a parameter of
        a function left, ``self.cuda`` of a class left): the rewrite would only wrap that
        switch (``"cuda" if cuda else "cpu"``) one call further down. True when one changed."""
        changed = False
        for unit in self.out.attrs.values():
            if not unit.ok:
                continue
            for rel, line in unit.sites:
                v = self._stores.get((rel, line, unit.attr))
                stays = self._stays(rel, v) if v is not None else ""
                if stays:
                    unit.why = (
                        f"it is set at {rel}:{line} from {stays}, which stays a CUDA switch: "
                        "the rewrite would only wrap it"
                    )
                    changed = True
                    break
        for unit in self.out.params.values():
            if not unit.ok:
                continue
            index = unit.defs[0][1]
            wraps = []
            for key in unit.calls:
                call = self._nodes.get(key)
                v = self._switch_arg(unit, call, index) if call is not None else None
                stays = self._stays(key[0], v) if v is not None else ""
                if stays:
                    unit.why = (
                        f"its caller at {key[0]}:{key[1]} passes {stays}, which stays a CUDA "
                        "switch: the rewrite would only wrap it"
                    )
                    changed = True
                    break
                if v is not None and _bool_const(v) is None and not self._switch_named(v):
                    wraps.append((key, v))
            if unit.ok and unit.calls and len(wraps) == len(unit.calls):
                (rel, line, _), v = wraps[0]
                unit.why = (
                    f"every caller passes a computed truth value (`{ast.unparse(v)}` at "
                    f"{rel}:{line}): the rewrite would only move the CUDA test to them"
                )
                changed = True
        return changed

    def _switch_named(self, v: ast.AST) -> bool:
        return (isinstance(v, ast.Name) and v.id in self.names) or (
            isinstance(v, ast.Attribute) and v.attr in self.names
        )

    def _switch_arg(self, unit: ParamUnit, call: ast.Call, index):
        for k in call.keywords:
            if k.arg == unit.param:
                return k.value
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]
        return positional[index] if index is not None and len(positional) > index else None

    def _stays(self, rel: str, v: ast.AST) -> str:
        """``v`` is a switch-named value that is not rewritten: how to name it, else ""."""
        if isinstance(v, ast.Name) and v.id in self.names:
            best = None
            for d in self.index.defs(rel):
                a = d.node.args
                if (
                    d.node.lineno <= v.lineno <= d.node.end_lineno
                    and v.id in {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
                    and (best is None or d.node.lineno > best.node.lineno)
                ):
                    best = d
            if best is not None:
                u = self.out.params.get((best.name, v.id))
                if u is not None and u.ok and best in {d for d, _, _ in u.defs}:
                    return ""
                return f"`{v.id}` of `{best.qualname}`"
            return f"`{v.id}`"
        if (
            isinstance(v, ast.Attribute)
            and v.attr in self.names
            and isinstance(v.value, ast.Name)
            and v.value.id == "self"
        ):
            for (cls, attr), u in self.out.attrs.items():
                if attr == v.attr and u.ok and (rel, v.lineno) in u.sites:
                    return ""
            return f"`self.{v.attr}`"
        return ""

    def _check(self, unit: ParamUnit) -> None:
        defs = [d for d, _, _ in unit.defs]
        if unit.name.startswith("__"):
            unit.why = f"`{unit.name}` is called through its class or an operator, not by name"
            return
        public = [d for d in defs if _is_public(d)]
        if public:
            unit.why = (
                f"public API `{public[0].qualname}`: callers outside the tree pass "
                f"`{unit.param}=`; a signature change is a maintainer's call"
            )
            return
        if len({i for _, i, _ in unit.defs}) != 1:
            unit.why = f"the functions named `{unit.name}` hold `{unit.param}` at other places"
            return
        for d in defs:
            why = self._def_why(unit, d)
            if why:
                unit.why = why
                return
        for d in defs:
            unit.spans.append((d.path, d.node.lineno, d.node.body[0].lineno - 1))
        self._calls(unit)
        if unit.ok:
            files = {d.path for d in defs} | {rel for rel, _, _ in unit.calls}
            subs = sorted({subsystem(f) for f in files})
            if len(subs) > 1:
                unit.why = f"its sites span subsystems {', '.join(subs)} (one patch each)"
                return
            quiet = sorted(f for f in files if not self.has_finding(f))
            if quiet:
                unit.why = f"a caller in `{quiet[0]}` has no `{unit.param}` site the run visits"

    def _def_why(self, unit: ParamUnit, d: Def) -> str:
        """Why the switch of the function ``d`` cannot become a device type ("" if it can)."""
        a = d.node.args
        names = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
        if NEW in names or _binds_any(d.node, NEW):
            return f"`{d.qualname}` already binds `{NEW}`"
        body = ast.Module(body=d.node.body, type_ignores=[])
        if _binds(body, unit.param):
            return f"`{d.qualname}` assigns `{unit.param}` (not a plain switch)"
        for deco in d.node.decorator_list:
            text = ast.unparse(deco)
            if text in ("overload", "typing.overload", "property") or text.endswith(".setter"):
                return f"`{d.qualname}` is decorated `@{text}`"
        ctx = self.index.context(d.path)
        parents = self.parents(d.path)
        for n in ast.walk(body):
            if isinstance(n, ast.Name) and n.id == unit.param:
                used = _cuda_code(ctx, _stmt_of(parents, n))
                if used:
                    return (
                        f"`{unit.param}` selects CUDA device code in `{d.qualname}` "
                        f"({used}): it stays a CUDA switch"
                    )
        return ""

    def _targets(self, rel: str, ctx, node: ast.AST, name: str) -> tuple[str, set]:
        """Where a reference ``...name`` at ``node`` goes: ("ours", defs of the tree),
        ("other", set()) for a function outside the tree, ("unknown", set())."""
        defs = {}
        for r in self.index.holding(f"def {name}".encode()):
            for d in self.index.defs(r):
                if d.name == name:
                    defs[(d.cls or d.module, d.path, d.node.lineno)] = d
        if isinstance(node, ast.Name):
            q = ctx.qualify(node.lineno, name)
            if q is None:
                return "other", set()
            if q == name:
                q = f"{ctx.module_name}.{name}"
            hit = {d for d in defs.values() if not d.cls and f"{d.module}.{d.name}" == q}
            return ("ours", hit) if hit else ("other", set())
        assert isinstance(node, ast.Attribute)
        return self._attr_targets(rel, ctx, node, defs)

    def _attr_targets(self, rel: str, ctx, node: ast.Attribute, defs: dict) -> tuple[str, set]:
        """``_targets`` of ``<receiver>.name``: through ``super()``, ``self``/``cls``, a class
        or module of the tree, or an unknown object."""
        recv = node.value
        if isinstance(recv, ast.Call) and ast.unparse(recv.func) == "super":
            cls = self._enclosing_class(rel, ctx, node)
            owners = set(self.index.mro(cls)[1:]) if cls else None
        elif isinstance(recv, ast.Name) and recv.id in ("self", "cls"):
            cls = self._enclosing_class(rel, ctx, node)
            owners = set(self.index.mro(cls)) | self.index.subclasses(cls) if cls else None
        else:
            return self._named_targets(ctx, node, defs)
        if owners is None:
            return "unknown", set()
        hit = {d for d in defs.values() if d.cls in owners}
        return ("ours", hit) if hit else ("other", set())

    def _named_targets(self, ctx, node: ast.Attribute, defs: dict) -> tuple[str, set]:
        d = dotted(node.value)
        q = ctx.qualify(node.lineno, d) if d else None
        if q is None or not d:
            return "unknown", set()
        if q == d and "." not in d:
            if d in ctx.module.bound and "other" in ctx.module.bound[d]:
                q = f"{ctx.module_name}.{d}"  # a class of this module
            else:
                return "unknown", set()  # a local variable
        if q in self.index.classes():
            owners = set(self.index.mro(q)) | self.index.subclasses(q)
            hit = {x for x in defs.values() if x.cls in owners}
            return ("ours", hit) if hit else ("other", set())
        hit = {x for x in defs.values() if not x.cls and x.module == q}
        if hit:
            return "ours", hit
        tree_modules = {x.module for x in defs.values()}
        if q in tree_modules or any(q.startswith(m + ".") for m in tree_modules):
            return "unknown", set()
        return "other", set()

    def _enclosing_class(self, rel: str, ctx, node) -> str | None:
        parents = self.parents(rel)
        chain = []
        p = parents.get(node)
        while p is not None:
            if isinstance(p, ast.ClassDef):
                chain.append(p.name)
            p = parents.get(p)
        if not chain:
            return None
        return ".".join([ctx.module_name, *reversed(chain)])

    def _calls(self, unit: ParamUnit) -> None:
        """Every call of the unit's functions in the tree, and of the pure forwarders of them
        (``def load_pybinding(cls, *args, **kwargs): return cls.load_pybinding_async(*args,
        **kwargs)()``: their callers pass the switch through)."""
        index = unit.defs[0][1]
        todo = [(unit.name, {d for d, _, _ in unit.defs})]
        done: set[str] = set()
        while todo and unit.ok:
            name, defs = todo.pop()
            if name in done:
                continue
            done.add(name)
            more = self._calls_of(unit, name, defs, index)
            if more is not None:
                todo += more

    def _calls_of(self, unit: ParamUnit, name: str, defs: set, index):
        """Check and record the calls of ``name`` (one of ``defs``); the forwarders found."""
        mine = {(d.path, d.node.lineno) for d in defs}
        forwarders = []
        for rel in self.index.holding(name.encode()):
            ctx = self.index.context(rel)
            if ctx is None:
                continue
            parents = self.parents(rel)
            for n in ast.walk(ctx.tree):
                if isinstance(n, ast.Constant) and n.value == name:
                    if _by_name(parents.get(n)):
                        unit.why = f"`{name}` is looked up by name in {rel}:{n.lineno}"
                        return None
                    continue
                ref = n if _refers(n, name) else None
                if ref is None:
                    continue
                where, hit = self._targets(rel, ctx, ref, name)
                parent = parents.get(ref)
                is_call = isinstance(parent, ast.Call) and parent.func is ref
                ours = bool(hit & defs) if where == "ours" else False
                if where == "other" or (where == "ours" and not ours):
                    continue  # another function of that name, resolved
                if not is_call:
                    if ours:
                        unit.why = f"`{name}` is used as a value in {rel}:{ref.lineno}"
                        return None
                    continue
                if where == "ours" and any((d.path, d.node.lineno) not in mine for d in hit):
                    unit.why = f"{rel}:{ref.lineno} may call a `{name}` without the switch"
                    return None
                if ours and _through_class(ref, hit):
                    unit.why = f"{rel}:{ref.lineno} calls the method through its class"
                    return None
                fwd = self._forwarder(rel, ctx, parent) if ours else None
                if fwd is not None:
                    forwarders.append((fwd.name, {fwd}))
                    continue
                why = self._call(unit, parent, index, ours)
                if why:
                    unit.why = f"{why} ({rel}:{parent.lineno})"
                    return None
                if self._passes(unit, parent, index, strict=ours):
                    unit.calls.append((rel, parent.lineno, name))
                    self._nodes[(rel, parent.lineno, name)] = parent
                    unit.spans.append((rel, parent.lineno, parent.end_lineno))
        return forwarders

    def _forwarder(self, rel: str, ctx, call: ast.Call) -> Def | None:
        """The function whose whole signature ``call`` forwards (``f(*args, **kwargs)`` of its
        own ``*args, **kwargs``, nothing else), a method or function of the tree; else None."""
        if not (
            len(call.args) == 1
            and isinstance(call.args[0], ast.Starred)
            and len(call.keywords) == 1
            and call.keywords[0].arg is None
        ):
            return None
        star, kw = call.args[0].value, call.keywords[0].value
        for d in self.index.defs(rel):
            node = d.node
            if not (node.lineno <= call.lineno <= node.end_lineno):
                continue
            a = node.args
            skip = 1 if d.kind in ("method", "classmethod") else 0
            if (
                a.vararg is not None
                and a.kwarg is not None
                and isinstance(star, ast.Name)
                and isinstance(kw, ast.Name)
                and star.id == a.vararg.arg
                and kw.id == a.kwarg.arg
                and len(a.posonlyargs + a.args) == skip
                and not a.kwonlyargs
                and not d.name.startswith("__")
            ):
                return d
        return None

    def _passes(self, unit: ParamUnit, call: ast.Call, index, strict: bool = True) -> bool:
        """The call passes the switch: by keyword, or by position (``strict=False``: only a
        truth value or a switch-named value there, as a call on an unknown object that passes
        something else at that place is another function's)."""
        if any(k.arg == unit.param for k in call.keywords):
            return True
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]
        if index is None or len(positional) <= index:
            return False
        if strict:
            return True
        v = positional[index]
        named = (isinstance(v, ast.Name) and v.id in self.names) or (
            isinstance(v, ast.Attribute) and v.attr in self.names
        )
        return _bool_const(v) is not None or named

    def _call(self, unit: ParamUnit, call: ast.Call, index, ours: bool) -> str:
        """Why this call of the unit's name cannot be mapped ("" where it can)."""
        stars = [a for a in call.args if isinstance(a, ast.Starred)]
        kwargs = [k for k in call.keywords if k.arg is None]
        explicit = self._passes(unit, call, index, strict=ours)
        if ours and stars and index is not None and not explicit:
            return f"a call passes `*{ast.unparse(stars[0].value)}`"
        if ours and kwargs and not explicit:
            return f"a call passes `**{ast.unparse(kwargs[0].value)}`"
        if ours:
            return ""
        # an unknown receiver: ours only when it can be no other function
        if explicit:
            others = [
                d
                for r in self.index.holding(f"def {unit.name}".encode())
                for d in self.index.defs(r)
                if d.name == unit.name and _param_of(d, self.names) is None
            ]
            if others:
                return f"`.{unit.name}(...)` on an unknown object may be `{others[0].qualname}`"
        return ""

    # -- attributes -------------------------------------------------------------------------
    def _attrs(self, rel: str) -> None:
        """Classes setting ``self.<switch> = <truth value>``."""
        ctx = self.index.context(rel)
        if ctx is None:
            return
        for n in ast.walk(ctx.tree):
            if not isinstance(n, (ast.Assign, ast.AnnAssign)):
                continue
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and t.attr in self.names
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                ):
                    cls = self._enclosing_class(rel, ctx, t)
                    if cls is not None:
                        self.out.attrs.setdefault((cls, t.attr), AttrUnit(cls, t.attr))

    def _namespace(self, ctx, line: int, recv: ast.AST) -> bool:
        """``recv`` is a name bound to ``<parser>.parse_args(...)`` in its scope."""
        if not isinstance(recv, ast.Name):
            return False
        b = ctx.binding(line, recv.id)
        if b is None:
            return False
        scope = b[0].node
        for n in ast.walk(scope):
            if (
                isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == recv.id for t in n.targets)
                and isinstance(n.value, ast.Call)
                and isinstance(n.value.func, ast.Attribute)
                and n.value.func.attr in ("parse_args", "parse_known_args")
            ):
                return True
        return False

    def _module_ref(self, ctx, line: int, recv: ast.AST) -> bool:
        """``recv`` names a module (``torch``, ``torch.version``, ``config`` imported from a
        package) or something outside the tree: its ``.cuda`` is not our object's switch."""
        d = dotted(recv)
        if not d:
            return False
        head = d.split(".")[0]
        hq = None
        for scope in ctx.chain(line):
            if head in scope.imports and "import" in scope.bound.get(head, ()):
                hq = scope.imports[head]
                break
            if head in scope.bound:
                return False  # a local, a parameter: may hold our object
        if hq is None:
            return False
        path = hq.replace(".", "/")
        if self.index.prefix and path.startswith(self.index.prefix):
            path = path[len(self.index.prefix) :]
        root = self.index.root
        if (root / path).is_dir() or (root / f"{path}.py").is_file():
            return True
        parent = path.rsplit("/", 1)[0] if "/" in path else ""
        if parent and (root / parent).is_dir() and not (root / f"{parent}.py").is_file():
            return True  # imported from a package: a submodule
        return not (root / path.split("/")[0]).exists()  # outside the tree

    def _check_attr(self, unit: AttrUnit) -> None:
        family = set(self.index.mro(unit.cls)) | self.index.subclasses(unit.cls)
        short = unit.cls.rsplit(".", 1)[-1]
        if not short.startswith("_") and not any(
            p.startswith("_") for p in unit.cls.split(".")[:-1]
        ):
            unit.why = f"`{unit.cls}.{unit.attr}` is a public attribute"
            return
        for rel in self.index.holding(unit.attr.encode()):
            ctx = self.index.context(rel)
            if ctx is None:
                continue
            for n in ast.walk(ctx.tree):
                why = self._attr_use(unit, family, rel, ctx, n)
                if why:
                    unit.why = why
                    return
        files = {rel for rel, _ in unit.sites}
        subs = sorted({subsystem(f) for f in files})
        if len(subs) > 1:
            unit.why = f"its sites span subsystems {', '.join(subs)} (one patch each)"

    def _attr_use(self, unit: AttrUnit, family: set, rel: str, ctx, n: ast.AST) -> str:
        """Why the node ``n`` of ``rel`` leaves the attribute unit ("" where it does not; a
        read or write on ``self`` in the class is recorded as a site)."""
        parents = self.parents(rel)
        if isinstance(n, ast.Constant) and n.value == unit.attr:
            call = parents.get(n)
            if (
                isinstance(call, ast.Call)
                and ast.unparse(call.func) in ("getattr", "setattr", "hasattr")
                and call.args
                and not self._module_ref(ctx, n.lineno, call.args[0])
            ):
                return f"`{unit.attr}` is looked up by name in {rel}:{n.lineno}"
            return ""
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in (unit.attr, NEW):
            cls = self._enclosing_class(rel, ctx, n)
            return f"`{cls}` defines a method `{n.name}`" if cls in family else ""
        if not isinstance(n, ast.Attribute) or n.attr not in (unit.attr, NEW):
            return ""
        parent = parents.get(n)
        if isinstance(parent, ast.Call) and parent.func is n:
            return ""  # x.cuda(): a method
        recv = n.value
        if isinstance(recv, ast.Name) and recv.id == "self":
            return self._self_use(unit, family, rel, ctx, n)
        if n.attr == NEW or self._module_ref(ctx, n.lineno, recv):
            return ""  # a module's attribute (torch.version.cuda, config.cuda)
        if self._namespace(ctx, n.lineno, recv):
            return ""  # a script's parsed options (args.cuda): the script families'
        d = dotted(recv)
        q = ctx.qualify(n.lineno, d) if d else None
        if q and "." not in q:
            q = f"{ctx.module_name}.{q}"
        if q in self.index.classes() and q not in family:
            return ""  # another class's own member (TypedStorage.cuda)
        return f"`{ast.unparse(n)}` in {rel}:{n.lineno} may read `{unit.cls}.{unit.attr}`"

    def _self_use(self, unit: AttrUnit, family: set, rel: str, ctx, n: ast.Attribute) -> str:
        cls = self._enclosing_class(rel, ctx, n)
        if cls not in family:
            return ""  # another class's own attribute
        if n.attr == NEW:
            return f"`{cls}` already has `self.{NEW}` ({rel}:{n.lineno})"
        stmt = _stmt_of(self.parents(rel), n)
        if isinstance(n.ctx, ast.Store) and not (
            isinstance(stmt, ast.Assign) and stmt.targets == [n]
        ):
            return f"`self.{unit.attr}` is set by {rel}:{n.lineno}"
        used = _cuda_code(ctx, stmt)
        if used:
            return f"`self.{unit.attr}` selects CUDA device code ({used}): it stays a CUDA switch"
        unit.sites.append((rel, n.lineno))
        if isinstance(n.ctx, ast.Store):
            self._stores[(rel, n.lineno, unit.attr)] = stmt.value
        return ""


def _refers(n: ast.AST, name: str) -> bool:
    """``n`` names ``name``: a loaded ``name`` or an attribute ``<x>.name``."""
    return (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)) or (
        isinstance(n, ast.Attribute) and n.attr == name
    )


def _by_name(call) -> bool:
    """``call`` is ``getattr``/``hasattr``/``setattr``: a member looked up by its name."""
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id in ("getattr", "hasattr", "setattr")
    )


def _through_class(ref: ast.AST, hit: set) -> bool:
    """``Class.method(obj, ...)``: an instance method called with its ``self`` passed, so the
    switch's position is one further."""
    if not isinstance(ref, ast.Attribute) or any(d.kind != "method" for d in hit):
        return False
    recv = ref.value
    return not (
        (isinstance(recv, ast.Name) and recv.id in ("self", "cls"))
        or (isinstance(recv, ast.Call) and ast.unparse(recv.func) == "super")
    )


def _binds_any(node, name: str) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id == name) or (isinstance(n, ast.arg) and n.arg == name)
        for n in ast.walk(node)
    )


def analyse(index: TreeIndex, names: tuple[str, ...]) -> Analysis:
    """The tree's switches and which of them become device types (memoised on ``index``)."""
    key = ("device-flag", names)
    if key not in index.memo:
        index.memo[key] = _Tree(index, names).run()
    return index.memo[key]


# -- the rewrite ----------------------------------------------------------------------------
def _s(text: str) -> cst.SimpleString:
    return cst.SimpleString(f'"{text}"')


def _test(op: type = cst.Equal) -> cst.Comparison:
    return cst.Comparison(cst.Name(NEW), [cst.ComparisonTarget(op(), _s("cuda"))])


def _paren(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _pick(value: cst.BaseExpression) -> cst.BaseExpression:
    """``"cuda" if value else "cpu"``."""
    return cst.IfExp(test=value, body=_s("cuda"), orelse=_s("cpu"))


class DeviceFlag(Family):
    name = "device-flag"
    _rule = ""
    _held = ""  # why the last unit asked for is not rewritten in this file (the gate)

    def _analysis(self, ctx, spec) -> Analysis | None:
        index = getattr(ctx, "tree_index", None)
        if index is None:  # no tree given (a rewrite of one file): the file is the tree
            index = ctx.tree_index = TreeIndex.of_file(ctx.path, ctx.source)
        self._rule = spec.rule
        return analyse(index, tuple(spec.names))

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        """Every line of this file a converted unit rewrites joins the step (the reads of a
        switch, calls passing it by position, the attribute's reads)."""
        a = self._analysis(ctx, spec)
        if a is None or not lines:
            return lines
        extra = set()
        for (rel, line, name), unit in a.defs.items():
            if rel != ctx.path:
                continue
            node = next(
                (
                    n
                    for n in ast.walk(ctx.tree)
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and n.lineno == line
                    and n.name == name
                ),
                None,
            )
            if node is None:
                continue
            for n in ast.walk(node):
                if (isinstance(n, ast.Name) and n.id == unit.param) or (
                    isinstance(n, ast.arg) and n.arg == unit.param
                ):
                    extra.add(n.lineno)
        extra |= {line for (rel, line, _), _ in a.calls.items() if rel == ctx.path}
        extra |= {line for (rel, line, _), _ in a.attr_sites.items() if rel == ctx.path}
        return lines | frozenset(extra)

    # -- helpers ------------------------------------------------------------------------
    def _spec(self, eng, node):
        specs = eng.specs_for(self.name, node)
        return specs[0] if specs else None

    def _flag_unit(self, eng, node: cst.Name, a: Analysis) -> ParamUnit | None:
        """The converted unit whose switch the Name ``node`` reads (or declares)."""
        line = eng.line(node)
        b = eng.ctx.binding(line, node.value)
        if b is None:
            return None
        scope = b[0].node
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        unit = a.defs.get((eng.ctx.path, scope.lineno, scope.name))
        if unit is None or unit.param != node.value or not self._whole_here(eng, unit):
            return None
        return unit

    def _attr_unit(self, eng, node: cst.Attribute, a: Analysis) -> AttrUnit | None:
        if not (isinstance(node.value, cst.Name) and node.value.value == "self"):
            return None
        unit = a.attr_sites.get((eng.ctx.path, eng.line(node), node.attr.value))
        return unit if unit is not None and self._whole_here(eng, unit) else None

    def _mapped(self, eng, original, updated, a: Analysis) -> cst.BaseExpression:
        """The device type a caller's switch value ``original`` stands for."""
        if isinstance(original, cst.Name) and original.value in ("True", "False"):
            return _s("cuda" if original.value == "True" else "cpu")
        if isinstance(original, cst.Name) and self._flag_unit(eng, original, a):
            return cst.Name(NEW)
        if isinstance(original, cst.Attribute) and self._attr_unit(eng, original, a):
            return original.with_changes(attr=cst.Name(NEW))
        return _pick(updated)

    def _whole_here(self, eng, unit) -> bool:
        """The gate lets every switch site of ``unit`` in this file through: a unit is rewritten
        whole or not at all (a parameter renamed with a caller left would break the call)."""
        gate = eng.gate
        if gate is None:
            return True
        if isinstance(unit, ParamUnit):
            spans = [(a, b) for rel, a, b in unit.spans if rel == eng.ctx.path]
        else:
            spans = [(ln, ln) for rel, ln in unit.sites if rel == eng.ctx.path]
        for f in gate.findings:
            if f.rule == self._rule and any(a <= f.line <= b for a, b in spans):
                if not gate.fixes(f.rule, f.line):
                    self._held = f"the gate leaves its site at line {f.line}, so the unit stays"
                    return False
        return True

    def _gate_ok(self, eng, node) -> bool:
        spec = self._spec(eng, node)
        return spec is not None and eng.fixes(spec.rule, eng.line(node))

    # -- hooks --------------------------------------------------------------------------
    def on_node(self, eng, original, updated):
        if isinstance(original, cst.Param):
            return self._param(eng, original, updated)
        if (
            isinstance(original, cst.UnaryOperation)
            and isinstance(original.operator, cst.Not)
            and isinstance(original.expression, (cst.Name, cst.Attribute))
            and isinstance(updated.expression, cst.Comparison)
        ):
            spec = self._spec(eng, original)
            a = self._analysis(eng.ctx, spec) if spec else None
            if a is None:
                return None
            e = original.expression
            if (isinstance(e, cst.Name) and self._flag_unit(eng, e, a)) or (
                isinstance(e, cst.Attribute) and self._attr_unit(eng, e, a)
            ):
                # not CUDA: the CPU (the switch's other side; what a later run would write)
                cmp = updated.expression
                return cst.Comparison(
                    cmp.left, [cst.ComparisonTarget(cst.Equal(), _s("cpu"))]
                ).with_changes(lpar=original.lpar, rpar=original.rpar)
        if isinstance(original, cst.Assign):
            return self._store(eng, original, updated)
        return None

    def _param(self, eng, original: cst.Param, updated: cst.Param):
        spec = self._spec(eng, original)
        a = self._analysis(eng.ctx, spec) if spec else None
        if a is None or original.name.value not in spec.names:
            return None
        self._held = ""
        unit = self._flag_unit(eng, original.name, a)
        if unit is None:
            self._left(eng, spec, original, original.name.value, a)
            return None
        if not self._gate_ok(eng, original):
            return None
        default = updated.default
        if default is not None:
            default = _s(
                "cuda" if isinstance(default, cst.Name) and default.value == "True" else "cpu"
            )
        eng.done(spec, original)
        return updated.with_changes(
            name=cst.Name(NEW),
            annotation=cst.Annotation(cst.Name("str")),
            default=default,
            equal=(
                cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(" "),
                    whitespace_after=cst.SimpleWhitespace(" "),
                )
                if default is not None
                else cst.MaybeSentinel.DEFAULT
            ),
        )

    def _left(self, eng, spec, node, name: str, a: Analysis) -> None:
        """Say why a switch site that no converted unit holds is left."""
        line = eng.line(node)
        for u in a.params.values():
            for d, _, _ in u.defs:
                if d.path == eng.ctx.path and d.node.lineno <= line <= d.node.body[0].lineno:
                    if u.param == name and (u.why or self._held):
                        eng.fail(spec, node, f"device-flag: {u.why or self._held}")
                        return
        eng.fail(spec, node, "device-flag: not a switch (no bool default or annotation)")

    def on_ref(self, eng, original, updated):
        if isinstance(original, cst.Name) and not eng.is_attr_name(original):
            spec = self._spec(eng, original)
            a = self._analysis(eng.ctx, spec) if spec else None
            if a is None or original.value not in spec.names:
                return None
            parent = eng.parent(original)
            if isinstance(parent, cst.Param) and parent.name is original:
                return None  # the declaration: _param
            if isinstance(parent, cst.Arg) and parent.keyword is original:
                return None  # a keyword: on_call
            if self._flag_unit(eng, original, a) is None:
                return None
            return self._read(eng, original)
        if isinstance(original, cst.Attribute) and original.attr.value in ("cuda", "use_cuda"):
            spec = self._spec(eng, original)
            a = self._analysis(eng.ctx, spec) if spec else None
            if a is None or original.attr.value not in spec.names:
                return None
            unit = self._attr_unit(eng, original, a)
            if unit is None:
                return None
            parent = eng.parent(original)
            if isinstance(parent, cst.AssignTarget):
                return None  # the store is rewritten whole (_store)
            return _paren_if(eng, original, _test_of(original.with_changes(attr=cst.Name(NEW))))
        return None

    def _read(self, eng, original: cst.Name):
        return _paren_if(eng, original, _test())

    def _store(self, eng, original: cst.Assign, updated: cst.Assign):
        if len(original.targets) != 1:
            return None
        t = original.targets[0].target
        if not (isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name)):
            return None
        spec = self._spec(eng, t)
        a = self._analysis(eng.ctx, spec) if spec else None
        if a is None or t.attr.value not in spec.names:
            return None
        self._held = ""
        unit = self._attr_unit(eng, t, a)
        if unit is None:
            if t.value.value == "self":
                mine = a.attr_sites.get((eng.ctx.path, eng.line(t), t.attr.value))
                why = (
                    self._held
                    if mine is not None
                    else next(
                        (u.why for u in a.attrs.values() if u.attr == t.attr.value and u.why), ""
                    )
                )
                eng.fail(spec, t, f"device-flag: {why or 'no unit of the tree'}")
            return None
        if not self._gate_ok(eng, t):
            return None
        value = self._mapped(eng, original.value, updated.value, a)
        eng.done(spec, t)
        target = original.targets[0].with_changes(target=t.with_changes(attr=cst.Name(NEW)))
        return updated.with_changes(targets=[target], value=value)

    def on_call(self, eng, original: cst.Call, updated: cst.Call):
        spec = self._spec(eng, original)
        a = self._analysis(eng.ctx, spec) if spec else None
        if a is None:
            return None
        func = original.func
        name = (
            func.value
            if isinstance(func, cst.Name)
            else func.attr.value
            if isinstance(func, cst.Attribute)
            else None
        )
        unit = a.calls.get((eng.ctx.path, eng.line(original), name)) if name else None
        if unit is not None and not self._whole_here(eng, unit):
            unit = None
        if unit is None:
            self._boundary(eng, spec, original, a)
            return None
        index = unit.defs[0][1]
        args = list(updated.args)
        changed = False
        positional = 0
        for i, (o, u) in enumerate(zip(original.args, updated.args)):
            if o.star:
                continue
            if o.keyword is None:
                if index is not None and positional == index:
                    args[i] = u.with_changes(value=self._mapped(eng, o.value, u.value, a))
                    changed = True
                positional += 1
            elif o.keyword.value == unit.param:
                if not eng.fixes(spec.rule, eng.line(o)):
                    return None
                args[i] = u.with_changes(
                    keyword=cst.Name(NEW), value=self._mapped(eng, o.value, u.value, a)
                )
                eng.done(spec, o)
                changed = True
        return updated.with_changes(args=args) if changed else None

    def _boundary(self, eng, spec, original: cst.Call, a: Analysis) -> None:
        """A switch keyword of a call no converted unit takes: its value may still follow a
        converted switch (``cuda=cuda`` -> ``cuda=device_type == "cuda"``); else it is left."""
        for arg in original.args:
            if arg.keyword is None or arg.keyword.value not in spec.names:
                continue
            if eng.line(arg) not in {ln for s, ls in eng.gated if s is spec for ln in ls}:
                continue
            v = arg.value
            if (isinstance(v, cst.Name) and self._flag_unit(eng, v, a)) or (
                isinstance(v, cst.Attribute) and self._attr_unit(eng, v, a)
            ):
                eng.done(spec, arg)
                continue
            callee = cst.Module([]).code_for_node(original.func)
            units = [
                u
                for (n, p), u in a.params.items()
                if p == arg.keyword.value and (callee == n or callee.endswith("." + n))
            ]
            why = (
                units[0].why
                if units and units[0].why
                else (
                    f"`{callee}` is not a function of the scanned tree: its `{arg.keyword.value}=` "
                    "stays"
                )
            )
            eng.fail(spec, arg, f"device-flag: {why}")


def _test_of(subject: cst.BaseExpression) -> cst.Comparison:
    return cst.Comparison(subject, [cst.ComparisonTarget(cst.Equal(), _s("cuda"))])


# parents in which a bare comparison reads as the switch did (no parentheses needed)
_BARE = (
    cst.If,
    cst.While,
    cst.BooleanOperation,
    cst.Arg,
    cst.DictElement,
    cst.Assign,
    cst.Return,
    cst.IfExp,
    cst.AnnAssign,
    cst.Element,
    cst.Assert,
)


def _paren_if(eng, original, new: cst.Comparison) -> cst.BaseExpression:
    parent = eng.parent(original)
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        return new  # on_node turns `not x` into `!=`
    if isinstance(parent, cst.IfExp) and parent.test is not original:
        return _paren(new)
    if isinstance(parent, _BARE) or original.lpar:
        return new.with_changes(lpar=original.lpar, rpar=original.rpar) if original.lpar else new
    return _paren(new)
