"""A script's own CUDA-named choice whose every use becomes neutral: the name follows the code.

Two shapes of the classic example scripts::

    parser.add_argument("--cuda", action="store_true", help="enables CUDA training")
    ...
    use_cuda = args.cuda and torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")

become::

    parser.add_argument("--cuda", action="store_true", dest="accel", help="enables accelerator training")
    ...
    use_accel = args.accel and torch.accelerator.is_available()
    device = torch.device(torch.accelerator.current_accelerator().type if use_accel else "cpu")

* a local (or a script's module-level) name holding an availability check (``use_cuda =
  ... torch.cuda.is_available()``), assigned once, is renamed (``cuda`` -> ``accel``) in the step
  that makes the check neutral, with every read;
* a switch whose name says CUDA (``--cuda``, ``--no_cuda``, ``--no-cuda``; ``store_true`` or
  ``type=int``, never a device string) keeps
  its option string (the user's command line is unchanged) and gets ``dest=`` the neutral name;
  its help text says "accelerator" for "CUDA"; every ``args.<dest>`` read follows;
* an attribute of the parsed namespace set once from an availability check (``args.cuda = not
  args.no_cuda and torch.cuda.is_available()``, the VAE/DCGAN/word-language-model shape) and
  declared by no option is renamed (``args.accel``) with every read, in the step of the check; the
  cuda-flag finding (HN510) on it is fixed there. Where the rename cannot be made (a read stays
  CUDA) the check is not rewritten either: ``args.cuda`` true on another accelerator would send
  that code there.

Only where the name's uses are all neutral after the series: every finding in a statement that
reads it (the whole ``if`` when it is the test) is one this run rewrites; so a flag that still
selects cuDNN or a CUDA query keeps its name. The option is renamed only where the namespace
stays in the file (no ``vars(args)``, ``getattr``, or ``args`` handed to code defined elsewhere)
and no other file could read the attribute (a script: ``script_device.is_script``); a
namespace attribute, where besides every function given the namespace receives it from this
file only.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.script_device import is_script
from patches.generate.intent import is_call, span_of
from patches.generate.intent.nodes import finding_span, inside

_AVAILABLE = "torch.cuda.is_available"
_WORD = re.compile(r"(?i)cuda")
_HELP = re.compile(r"\bCUDA\b|\bcuda\b")
_OPTION = re.compile(r"^--((?:no|use)[-_])?cuda$")


def _neutral(name: str) -> str:
    return _WORD.sub(lambda m: "ACCEL" if m.group().isupper() else "accel", name)


@dataclass(frozen=True)
class Unit:
    kind: str  # "name" (a local), "flag" (an argparse option's dest), "attr" (a namespace's)
    old: str
    new: str
    anchor: int  # the line whose fix makes the value neutral (the assignment), 0 for a flag
    define: int  # the assignment / add_argument line
    reads: tuple[tuple[int, int], ...]  # (first, last) lines of each statement unit reading it
    namespaces: frozenset[str] = frozenset()  # a flag: the names holding the parsed namespace
    parent: "Unit | None" = None  # a name set only under `if <parent>:`: renamed with it
    target: tuple = ()  # an "attr": the span of the attribute the assignment sets
    end: int = 0  # an "attr": the assignment's last line


def _parents(tree):
    return {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}


def _stmt_unit(node, parents) -> tuple[int, int]:
    """The lines of the statement reading ``node``; the whole ``if``/``while`` when it is in the
    test (what it guards becomes reachable on every accelerator)."""
    p = parents.get(node)
    while p is not None and not isinstance(p, ast.stmt):
        p = parents.get(p)
    if p is None:
        return node.lineno, node.end_lineno
    return p.lineno, p.end_lineno  # an `if`'s test: p is the `if`, body and all


def _names(tree) -> set[str]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
    return out


def _local_units(ctx, parents, taken) -> list[Unit]:
    out = []
    for node in ast.walk(ctx.tree):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _WORD.search(node.targets[0].id)
        ):
            continue
        name = node.targets[0].id
        if not any(is_call(ctx, c, _AVAILABLE) for c in ast.walk(node.value)):
            continue
        scope = ctx.scope_at(node.lineno)
        if scope is ctx.module and not is_script(ctx):
            continue  # a library's module-level name: another module may import it
        new = _neutral(name)
        if new in taken:
            continue
        stores, reads, ok = 0, [], True
        for n in ast.walk(ctx.tree):
            if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
                ok = False
            elif isinstance(n, ast.arg) and n.arg == name:
                ok = False
            elif isinstance(n, ast.Name) and n.id == name:
                b = ctx.binding(n.lineno, name)
                if b is None or b[0] is not scope:
                    ok = False  # another binding of the same name: leave them all
                elif isinstance(n.ctx, ast.Load):
                    reads.append(_stmt_unit(n, parents))
                else:
                    stores += 1
        if ok and stores == 1:
            out.append(Unit("name", name, new, node.lineno, node.lineno, tuple(reads)))
    return out + [g for u in out for g in _guarded(ctx, parents, taken, u)]


def _guarded(ctx, parents, taken, flag: Unit) -> list[Unit]:
    """CUDA-named locals set once in the body of ``if <flag>:`` from code with no CUDA word
    (``cuda_kwargs = {"num_workers": 1, "pin_memory": True}``): the options of the run on the
    accelerator, renamed with the flag."""
    out = []
    for node in ast.walk(ctx.tree):
        tests = (
            {f"{ns}.{flag.old}" for ns in flag.namespaces} if flag.kind == "attr" else {flag.old}
        )
        if not (isinstance(node, ast.If) and ast.unparse(node.test) in tests):
            continue
        for stmt in node.body:
            if not (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and _WORD.search(stmt.targets[0].id)
                and not _WORD.search(ast.unparse(stmt.value))
            ):
                continue
            name, scope = stmt.targets[0].id, ctx.scope_at(stmt.lineno)
            new = _neutral(name)
            if new in taken:
                continue
            uses = [n for n in ast.walk(ctx.tree) if isinstance(n, ast.Name) and n.id == name]
            if any(ctx.scope_at(n.lineno) is not scope for n in uses) or [
                n for n in uses if not isinstance(n.ctx, ast.Load)
            ] != [stmt.targets[0]]:
                continue
            reads = tuple(_stmt_unit(n, parents) for n in uses if isinstance(n.ctx, ast.Load))
            out.append(Unit("name", name, new, flag.anchor, stmt.lineno, reads, parent=flag))
    return out


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
    defs = [n for n in ast.walk(ctx.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
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
    for node in ast.walk(ctx.tree):
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
    for n in ast.walk(ctx.tree):
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
    for node in ast.walk(ctx.tree):
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


@functools.lru_cache(maxsize=32)
def units(ctx) -> tuple[Unit, ...]:
    parents = _parents(ctx.tree)
    taken = _names(ctx.tree)
    attrs = _attr_units(ctx, parents, taken)
    guarded = [g for u in attrs for g in _guarded(ctx, parents, taken, u)]
    return tuple(
        _local_units(ctx, parents, taken) + _flag_units(ctx, parents, taken) + attrs + guarded
    )


def _word(n: ast.AST) -> str:
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.Attribute):
        return n.attr
    if (
        isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and not any(c.isspace() for c in n.value)
    ):
        return n.value  # a message (text with spaces) is prose, not code
    return ""


def _leftover(ctx, gate, u: Unit, spans) -> bool:
    """A CUDA word in a statement reading the name that no rewritten site covers: the name
    would still select CUDA code after the series."""
    fixed = [finding_span(f) for f in gate.findings if gate.fixes(f.rule, f.line)]
    fixed += [sp for site, sps in gate.companions.items() if gate.fixes(*site) for sp in sps]
    locals_ = {x.old for x in units(ctx) if x.kind == "name"}
    flags = {(x.old, s) for x in units(ctx) if x.kind in ("flag", "attr") for s in x.namespaces}
    for stmt in ctx.stmts:
        if (stmt.lineno, stmt.end_lineno) not in spans:
            continue
        for n in ast.walk(stmt):
            word = _word(n)
            if not word or not _WORD.search(word):
                continue
            if isinstance(n, ast.Name) and n.id in locals_:
                continue  # a name renamed with this one
            if (
                isinstance(n, ast.Attribute)
                and isinstance(n.value, ast.Name)
                and (n.attr, n.value.id) in flags
            ):
                continue  # a flag renamed with this one
            if not any(inside(span_of(n), sp) for sp in fixed):
                return True
    return False


def _lines(u: Unit) -> frozenset[int]:
    own = range(u.define, max(u.define, u.end) + 1)
    return frozenset([*own, *(ln for a, b in u.reads for ln in range(a, b + 1))])


def _spans(u: Unit) -> list[tuple[int, int]]:
    """The statement units the name's rename depends on: its reads, and the check that sets it
    (a namespace attribute's whole assignment: the finding on the attribute too)."""
    if u.kind == "attr":
        return [*u.reads, (u.define, u.end)]
    return list(u.reads) + ([(u.anchor, u.anchor)] if u.anchor else [])


class ScriptFlags(Family):
    """Renames go with the sites that make them true (``prepare`` adds their lines to every spec
    holding one of the unit's findings); the decision is made per region, from the gate."""

    name = "script-flags"
    serves = ("guard", "call", "device-literal", "backend-pick", "device-predicates")

    def prepare(self, ctx, spec, lines: frozenset[int]) -> frozenset[int]:
        for u in units(ctx):
            mine = _lines(u) | ({u.anchor} if u.anchor else frozenset())
            if lines & mine:
                lines = lines | mine
        return lines

    def companions(self, ctx, spec, lines: frozenset[int]) -> dict[tuple[str, int], list]:
        """A namespace attribute set from the availability check is renamed with the check:
        the attribute (and the cuda-flag finding on it) goes with that site. Where the rename
        is not made, ``on_node`` keeps the check where a read stays CUDA (``_cuda_read``)."""
        if _AVAILABLE not in spec.names:
            return {}
        return {
            (spec.rule, u.anchor): [u.target]
            for u in units(ctx)
            if u.kind == "attr" and u.anchor in lines
        }

    def _ready(self, eng, u: Unit, seen: frozenset = frozenset()) -> bool:
        """Every finding in a statement reading the name is rewritten by this run (and, for a
        local, the availability check it holds): after the series its uses are neutral. A
        namespace attribute set in one of those statements must be renamed too (else the
        check there is kept)."""
        if u.parent is not None:
            return self._ready(eng, u.parent, seen)
        spans = _spans(u)
        if not self._neutral(eng, u, spans):
            return False
        if u.anchor and not any(f.line == u.anchor for f in eng.gate.findings):
            return False
        seen = seen | {u}
        return all(
            self._ready(eng, v, seen)
            for v in units(eng.ctx)
            if v.kind == "attr" and v not in seen and any(a <= v.define <= b for a, b in spans)
        )

    def _neutral(self, eng, u: Unit, spans) -> bool:
        gate = eng.gate
        if gate is None:
            return False
        hits = [f for f in gate.findings if any(a <= f.line <= b for a, b in spans)]
        if not hits or not all(gate.fixes(f.rule, f.line) for f in hits):
            return False
        return not _leftover(eng.ctx, gate, u, spans)

    def _cuda_read(self, eng, u: Unit) -> int | None:
        """The first line of a read of a namespace attribute that holds CUDA code after the
        series (None: none does, its check may become neutral even where the attribute keeps
        its name)."""
        gate = eng.gate
        for a, b in sorted(u.reads):
            hits = [f for f in gate.findings if a <= f.line <= b] if gate else []
            if gate is None or not all(gate.fixes(f.rule, f.line) for f in hits):
                return a
            if _leftover(eng.ctx, gate, u, [(a, b)]):
                return a
        return None

    def _unit_at(self, eng, node, kind: str, old: str) -> Unit | None:
        line = eng.line(node)
        if not any(line in ls for _, ls in eng.gated):
            return None  # not this step's lines
        for u in units(eng.ctx):
            if u.kind == kind and u.old == old and line in _lines(u):
                return u if self._ready(eng, u) else None
        return None

    def on_ref(self, eng, original, updated):
        if isinstance(original, cst.Name) and not eng.is_attr_name(original):
            u = self._unit_at(eng, original, "name", original.value)
            return updated.with_changes(value=u.new) if u else None
        if (
            isinstance(original, cst.Attribute)
            and isinstance(original.value, cst.Name)
            and _WORD.search(original.attr.value)
        ):
            attr = original.attr.value
            u = self._unit_at(eng, original, "flag", attr) or self._unit_at(
                eng, original, "attr", attr
            )
            if u and original.value.value in u.namespaces:
                if u.kind == "attr" and isinstance(eng.parent(original), cst.AssignTarget):
                    self._done_at_target(eng, u, original)
                return updated.with_changes(attr=cst.Name(u.new))
        return None

    def _done_at_target(self, eng, u: Unit, node) -> None:
        """The findings on the attribute the assignment sets (cuda-flag) are fixed by the
        rename."""
        for spec, lines in eng.gated:
            if u.define not in lines:
                continue
            for f in eng.gate.findings:
                if (
                    f.rule == spec.rule
                    and f.line == u.define
                    and inside(finding_span(f), u.target)
                    and eng.fixes(f.rule, f.line)
                ):
                    eng.done(spec, node)

    def on_node(self, eng, original, updated):
        """The assignment of a namespace attribute whose reads stay CUDA keeps its check: true
        on another accelerator, the attribute would send that code there."""
        if not isinstance(original, cst.Assign):
            return None
        line = eng.line(original)
        for u in units(eng.ctx):
            if u.kind != "attr" or u.define != line:
                continue
            read = self._cuda_read(eng, u) if any(line in ls for _, ls in eng.gated) else None
            if read is None:
                return None
            end = eng.end_line(original)
            undone = [a for a in eng.outcome.applied if line <= a[1] <= end]
            if not undone:
                return None
            eng.outcome.applied = [a for a in eng.outcome.applied if a not in undone]
            names = ", ".join(f"{ns}.{u.old}" for ns in sorted(u.namespaces))
            why = f"{names} is read where the code stays CUDA (line {read})"
            eng.outcome.failed += [(rule, at, why) for rule, at in undone]
            return original
        return None

    def on_call(self, eng, original: cst.Call, updated: cst.Call):
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
            return None
        for u in units(eng.ctx):
            if u.kind != "flag" or u.define != eng.line(original):
                continue
            if not any(u.define in ls for _, ls in eng.gated):
                return None
            if not self._ready(eng, u):
                return None
            args = list(updated.args)
            for i, a in enumerate(args):
                if a.keyword is not None and a.keyword.value == "help":
                    text = a.value
                    if isinstance(text, cst.SimpleString):
                        args[i] = a.with_changes(
                            value=text.with_changes(value=_HELP.sub("accelerator", text.value))
                        )
            at = next(
                (i for i, a in enumerate(args) if a.keyword and a.keyword.value == "help"),
                len(args),
            )
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            dest = cst.Arg(
                cst.SimpleString(f'"{u.new}"'),
                keyword=cst.Name("dest"),
                equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""),
                    whitespace_after=cst.SimpleWhitespace(""),
                ),
                comma=comma,
            )
            if at == len(args):
                args[-1] = args[-1].with_changes(comma=comma)
                dest = dest.with_changes(comma=cst.MaybeSentinel.DEFAULT)
            args.insert(at, dest)
            return updated.with_changes(args=args)
        return None
