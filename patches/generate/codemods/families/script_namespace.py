"""The script-flags family's namespace units: ``--cuda`` options and ``args.cuda = ...`` flags."""

from __future__ import annotations

import ast
import re

from patches.generate.codemods.families.script_device import is_script
from patches.generate.codemods.families.script_units import (
    _AVAILABLE,
    _WORD,
    Unit,
    _neutral,
    _stmt_unit,
    bindings_of,
)
from patches.generate.intent import is_call, span_of

_OPTION = re.compile(r"^--((?:no|use)[-_])?cuda$")


def _namespaces(tree) -> set[str]:
    """Names bound to ``parser.parse_args()`` (and parameters of that name: handed it)."""
    out = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "parse_args"
        ):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _escapes(tree, spaces: set[str], local_defs: dict[str, list[str]]) -> bool:
    """The namespace may be read by code this file does not hold (or by name)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            if isinstance(node, ast.Attribute) and node.attr == "__dict__":
                if isinstance(node.value, ast.Name) and node.value.id in spaces:
                    return True
            continue
        passed = [a for a in node.args if isinstance(a, ast.Name) and a.id in spaces]
        passed += [
            k.value for k in node.keywords if isinstance(k.value, ast.Name) and k.value.id in spaces
        ]
        if not passed:
            continue
        if (
            isinstance(node.func, ast.Name)
            and node.func.id == "print"
            and not bindings_of(tree, "print")
        ):
            continue  # `print(opt)` (the DCGAN example): a log line of its repr, read by no code
        if not (isinstance(node.func, ast.Name) and node.func.id in local_defs):
            return True
        params = local_defs[node.func.id]
        for i, a in enumerate(node.args):
            if isinstance(a, ast.Name) and a.id in spaces:
                if i >= len(params) or params[i] not in spaces:
                    return True  # received under another name: its reads would be missed
        for k in node.keywords:
            if isinstance(k.value, ast.Name) and k.value.id in spaces and k.arg not in spaces:
                return True
    return False


def _local_spaces(ctx) -> set[str]:
    """The names holding a script's parsed namespace when it stays in the file; empty otherwise."""
    if not is_script(ctx):
        return set()
    spaces = _namespaces(ctx.tree)
    methods = {
        id(b)
        for c in ctx.nodes
        if isinstance(c, ast.ClassDef)
        for b in c.body
        if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    # functions a bare name calls (methods are called through an object: two classes' `forward`)
    defs = [
        n
        for n in ctx.nodes
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(n) not in methods
    ]
    if len({d.name for d in defs}) != len(defs):
        return set()  # two functions of one name: which receives the namespace is not plain
    local_defs = {d.name: [a.arg for a in d.args.posonlyargs + d.args.args] for d in defs}
    if not spaces or _escapes(ctx.tree, spaces, local_defs):
        return set()
    return spaces


def _flag_units(ctx, parents, taken) -> list[Unit]:
    spaces = _local_spaces(ctx)
    if not spaces:
        return []
    out = []
    for node in ctx.nodes:
        old = _option_dest(node)
        new = _neutral(old) if old else ""
        if not old or new in taken:
            continue
        reads = _flag_reads(ctx, parents, old, spaces)
        if reads:
            out.append(Unit("flag", old, new, 0, node.lineno, tuple(reads), frozenset(spaces)))
    return out


def _option_dest(node: ast.AST) -> str | None:
    """``add_argument("--cuda", action="store_true", ...)`` (or ``type=int``: ``--cuda 1``) with
    no ``dest``: "cuda"."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "add_argument"
        and node.args
        and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
    ):
        return None
    longs = [a.value for a in node.args if a.value.startswith("--")]
    keys = {k.arg for k in node.keywords}
    kw = {k.arg: k.value for k in node.keywords}
    action, kind = kw.get("action"), kw.get("type")
    switch = isinstance(action, ast.Constant) and action.value in ("store_true", "store_false")
    number = action is None and isinstance(kind, ast.Name) and kind.id in ("int", "bool")
    if (
        len(longs) != 1
        or not _OPTION.match(longs[0])
        or "dest" in keys
        or None in keys
        or not (switch or number)  # a switch (--cuda 1 too), not a device string
    ):
        return None
    return longs[0][2:].replace("-", "_")


def _flag_reads(
    ctx, parents, old: str, spaces: set[str], store: ast.Attribute | None = None
) -> list[tuple[int, int]]:
    """The statement units reading ``<namespace>.<old>``; empty where the flag may be read in a
    way this file does not show (by name, through another object, or stored to, but at
    ``store``)."""
    reads = []
    for n in ctx.nodes:
        if isinstance(n, ast.Attribute) and n.attr == old:
            if isinstance(parents.get(n), ast.Call) and parents[n].func is n:
                if isinstance(n.value, ast.Name) and n.value.id in spaces:
                    return []  # args.cuda(): not a flag
                continue  # x.cuda(): a method, not the flag
            if isinstance(n.value, ast.Attribute) and n.value.attr in spaces:
                return []  # self.args.cuda: a namespace kept elsewhere
            if not (isinstance(n.value, ast.Name) and n.value.id in spaces):
                continue  # torch.cuda, a tensor's: another object
            if n is store:
                continue
            if not isinstance(n.ctx, ast.Load):
                return []
            reads.append(_stmt_unit(n, parents))
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ("getattr", "setattr", "hasattr", "delattr", "vars")
            and n.args
            and isinstance(n.args[0], ast.Name)
            and n.args[0].id in spaces
        ):
            return []  # getattr(args, "cuda"): read by name
    return reads


def _dests(tree) -> set[str]:
    """The attributes the file's options declare (``dest=``, else the first long option's name,
    else the first name): what ``parse_args`` sets."""
    out = set()
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        dest = kw.get("dest")
        if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
            out.add(dest.value)
            continue
        names = [a.value for a in node.args if isinstance(a, ast.Constant)]
        names = [n for n in names if isinstance(n, str)]
        longs = [n for n in names if n.startswith("--")]
        if longs or names:
            out.add((longs or names)[0].lstrip("-").replace("-", "_"))
    return out


def _receivers_known(tree, spaces: set[str]) -> bool:
    """Every function with a parameter named like the namespace is called only by name in this
    file, with the namespace in that place: its ``args.x`` is the script's (a parameter of that
    name handed another object, or a function used as a value, would rename someone else's)."""
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    for d in defs:
        a = d.args
        positional = [x.arg for x in a.posonlyargs + a.args]
        mine = [x for x in positional + [x.arg for x in a.kwonlyargs] if x in spaces]
        if not mine:
            continue
        if a.vararg or a.kwarg or len(mine) > 1:
            return False
        param = mine[0]
        index = positional.index(param) if param in positional else None
        mine_calls = [c for c in calls if isinstance(c.func, ast.Name) and c.func.id == d.name]
        loads = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Name) and n.id == d.name and isinstance(n.ctx, ast.Load)
        ]
        if not mine_calls or len(loads) != len(mine_calls):
            return False  # never called here, or used as a value
        for c in mine_calls:
            given = [k.value for k in c.keywords if k.arg == param]
            if not given and index is not None and index < len(c.args):
                given = [c.args[index]]
            if len(given) != 1 or not (isinstance(given[0], ast.Name) and given[0].id in spaces):
                return False
    return True


def _held_elsewhere(tree, parents, spaces: set[str]) -> bool:
    """The namespace object itself is stored or handed on other than to this file's functions
    (``torch.save({"args": args}, path)``, ``cfg = args``, ``return args``): whoever reads it
    later would miss a renamed attribute."""
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Name) and n.id in spaces and isinstance(n.ctx, ast.Load)):
            continue
        p = parents.get(n)
        if isinstance(p, ast.Attribute) and p.value is n:
            continue  # args.x
        if isinstance(p, ast.Call) and n in p.args:
            continue  # handed to a call: _escapes and _receivers_known decide
        if isinstance(p, ast.keyword) and isinstance(parents.get(p), ast.Call):
            continue
        return True
    return False


def _attr_units(ctx, parents, taken) -> list[Unit]:
    """``args.cuda = <... torch.cuda.is_available() ...>``: a CUDA-named attribute of the parsed
    namespace, set once by the script from the availability check and declared by no option,
    every read of it on the namespace in this file."""
    spaces = _local_spaces(ctx)
    if (
        not spaces
        or not _receivers_known(ctx.tree, spaces)
        or _held_elsewhere(ctx.tree, parents, spaces)
    ):
        return []
    dests = _dests(ctx.tree)
    out = []
    for node in ctx.nodes:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.targets[0].value, ast.Name)
            and node.targets[0].value.id in spaces
            and _WORD.search(node.targets[0].attr)
        ):
            continue
        target = node.targets[0]
        old = target.attr
        new = _neutral(old)
        if old in dests or new in dests or new in taken:
            continue  # an option sets it too (or the new name): parse_args would disagree
        check = next((c for c in ast.walk(node.value) if is_call(ctx, c, _AVAILABLE)), None)
        if check is None:
            continue
        reads = _flag_reads(ctx, parents, old, spaces, store=target)
        if reads:
            out.append(
                Unit(
                    "attr",
                    old,
                    new,
                    check.lineno,
                    node.lineno,
                    tuple(reads),
                    frozenset(spaces),
                    target=span_of(target),
                    end=node.end_lineno,
                )
            )
    return out
