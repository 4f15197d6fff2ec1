"""The device-flag analysis of parameter units: each def and caller of a switch; `analyse`."""

from __future__ import annotations

import ast

from audits.python.findings import subsystem
from patches.generate.codemods.families.device_flag_attrs import _AttrChecks
from patches.generate.codemods.families.device_flag_units import (
    NEW,
    Analysis,
    ParamUnit,
    _binds,
    _binds_any,
    _bool_const,
    _by_name,
    _cuda_code,
    _is_public,
    _param_of,
    _refers,
    _stmt_of,
    _through_class,
)
from patches.generate.codemods.tree_index import Def, TreeIndex


class _Tree(_AttrChecks):
    """The analysis of one tree for one set of switch names (``analyse``)."""

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
        # the calls converted units take, as this pass starts (a unit left later in the pass is
        # seen by the next one: the loop runs until nothing changes)
        taken = {k for u in self.out.params.values() if u.ok for k in u.calls}
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
            handed = self._handed_on(unit, taken) if unit.ok else ""
            if handed:
                unit.why = handed
                changed = True
            if unit.ok and unit.calls and len(wraps) == len(unit.calls):
                (rel, line, _), v = wraps[0]
                unit.why = (
                    f"every caller passes a computed truth value (`{ast.unparse(v)}` at "
                    f"{rel}:{line}): the rewrite would only move the CUDA test to them"
                )
                changed = True
        return changed

    def _handed_on(self, unit: ParamUnit, taken: set) -> str:
        """Why a unit whose every read of the switch is handed on, by a switch-named keyword or
        by position to a switch left, to a call no converted unit takes (torch-fidelity's test:
        ``calculate_metrics(..., cuda=cuda)``) is left: the rewrite would only write the CUDA test back there
        (``cuda=device_type == "cuda"``); "" where a read does something else or goes to a
        call in ``taken`` (a converted unit's)."""
        first = None
        # (function, argument index) -> the switch of a unit left there (``record(name, None,
        # use_cuda)``: pfn-extras' ``record_function`` hands its switch on by position)
        left = {(u.name, u.defs[0][1]): u.param for u in self.out.params.values() if not u.ok}
        for d, _, _ in unit.defs:
            parents = self.parents(d.path)
            for stmt in d.node.body:
                for n in ast.walk(stmt):
                    if not (isinstance(n, ast.Name) and n.id == unit.param):
                        continue
                    kw, call, slot = parents.get(n), None, None
                    if isinstance(kw, ast.keyword) and kw.arg in self.names:
                        call, slot = parents.get(kw), kw.arg
                    elif isinstance(kw, ast.Call) and n in kw.args:
                        func = kw.func
                        at = (getattr(func, "id", None) or getattr(func, "attr", None), _at(kw, n))
                        call, slot = (kw, left[at]) if at in left else (None, None)
                    func = getattr(call, "func", None)
                    name = getattr(func, "id", None) or getattr(func, "attr", None)
                    if name is None or (d.path, call.lineno, name) in taken:
                        return ""
                    first = first or (name, slot, d.path, call.lineno)
        if first is None:
            return ""
        name, slot, rel, line = first
        return (
            f"`{unit.param}` is only handed on, as `{name}(..., {slot}=)` ({rel}:{line}) and the "
            "like, to switches that stay CUDA's: the rewrite would only write the CUDA test there"
        )

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
        public = [d for d in defs if _is_public(d, self.index)]
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
            for n in ctx.nodes:
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
            others = [d for d in self.index.named(unit.name) if _param_of(d, self.names) is None]
            if others:
                return f"`.{unit.name}(...)` on an unknown object may be `{others[0].qualname}`"
        return ""


def analyse(index: TreeIndex, names: tuple[str, ...]) -> Analysis:
    """The tree's switches and which of them become device types (memoised on ``index``)."""
    key = ("device-flag", names)
    if key not in index.memo:
        index.memo[key] = _Tree(index, names).run()
    return index.memo[key]


def _at(call: ast.Call, arg: ast.AST) -> int | None:
    """``arg``'s index among ``call``'s positional arguments; None after a ``*args``."""
    for i, a in enumerate(call.args):
        if isinstance(a, ast.Starred):
            return None
        if a is arg:
            return i
    return None
