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
and no other file could read the attribute (a script: ``script_plan.is_script``); a
namespace attribute, where besides every function given the namespace receives it from this
file only.
"""

from __future__ import annotations

import ast
import functools
import re

import libcst as cst

from patches.generate.codemods.families.base import Family
from patches.generate.codemods.families.script_namespace import _attr_units, _flag_units
from patches.generate.codemods.families.script_units import (
    _AVAILABLE,
    _WORD,
    Unit,
    _guarded,
    _local_units,
    identifiers,
)
from patches.generate.intent import span_of
from patches.generate.intent.nodes import finding_span, inside

_HELP = re.compile(r"\bCUDA\b|\bcuda\b")


@functools.lru_cache(maxsize=32)
def units(ctx) -> tuple[Unit, ...]:
    parents = ctx.parents
    taken = identifiers(ctx.nodes)
    attrs = _attr_units(ctx, parents, taken)
    guarded = [g for u in attrs for g in _guarded(ctx, parents, taken, u)]
    return tuple(
        _local_units(ctx, parents, taken) + _flag_units(ctx, parents, taken) + attrs + guarded
    )


def _word(n: ast.AST) -> str:
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.keyword):
        return n.arg or ""  # `f(use_cuda=...)`: the callee's parameter says CUDA
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


def _whole(eng, line: int, serves: tuple[str, ...]) -> bool:
    """The step rewriting ``line`` is one whose lines ``prepare`` made the whole unit (a
    family the rename serves): a rename is made in one patch, with every read, or not at all.
    A step of another family holding one read leaves the name (coqui-tts' ``--use_cuda``:
    renamed on the ``.cuda()`` step's line alone, the other reads and the option kept)."""
    return any(line in ls and s.family in serves for s, ls in eng.gated)


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
        if not _whole(eng, line, self.serves):
            return None  # not this step's lines, or a step that does not hold whole units
        for u in units(eng.ctx):
            if u.kind == kind and u.old == old and line in _lines(u):
                return u if self._ready(eng, u) else None
        return None

    def on_ref(self, eng, original, updated):
        if isinstance(original, cst.Name) and not eng.is_attr_name(original):
            parent = eng.parent(original)
            if isinstance(parent, cst.Arg) and parent.keyword is original:
                return None  # the callee's parameter: its name is the callee's
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
            if not _whole(eng, u.define, self.serves) or not self._ready(eng, u):
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
