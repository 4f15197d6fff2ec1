"""libcst codemods keyed by rule id, driven by the audit's catalogue and findings.

``rewrite(source, path, gated)`` applies the fixes for one file; ``rewrite_steps`` applies
groups of rules one after the other (one patch each) from a single analysis of the file: one
``ast`` parse for scopes and imports, and one libcst parse + metadata resolution per region
(the statement around a finding), reused by every step. Only the lines the scan reported are
touched; every result is ``compile()``d, and a step whose result does not compile is dropped.

Every family's sites pass one gate first (``patches.generate.intent.Gate``): a site whose code is about CUDA
itself is left, with its evidence as the reason, before any family sees it.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field
from typing import Callable

import libcst as cst
from libcst.metadata import MetadataWrapper

from patches.generate.codemods.context import FileContext
from patches.generate.codemods.engine import Engine, FixSpec, Outcome
from patches.generate.codemods.families.script_plan import pytorch_module
from patches.generate.codemods.imports import fix_imports, split_lines
from patches.generate.codemods.regions import Piece, Region, regions
from patches.generate.codemods.registry import FAMILY_NAMES, new_families
from patches.generate.codemods.signatures import replacement_files
from patches.generate.intent import Gate, Options
from patches.generate.intent.index import Index

__all__ = ["FAMILY_NAMES", "FileOptions", "FixSpec", "Rewrite", "rewrite", "rewrite_steps"]

Gated = list[tuple[FixSpec, frozenset[int]]]


@dataclass
class Rewrite:
    path: str
    before: str
    after: str
    outcome: Outcome = field(default_factory=Outcome)
    error: str = ""  # non-empty: nothing was rewritten (parse failure or failed verify)
    kept_imports: list[tuple[str, str]] = field(default_factory=list)  # (name, file importing it)
    # (rule, line) of the sites this step decides (its group's, after ``_File.join_units``)
    sites: frozenset[tuple[str, int]] = frozenset()
    renamed: list = field(default_factory=list)  # locals renamed with their code (local_rename)

    @property
    def changed(self) -> bool:
        return not self.error and self.after != self.before


@dataclass(frozen=True)
class FileOptions:
    """What a file's analysis needs beside its text and its groups.

    ``findings``: the scan's findings for the file (every rule); with them the intent gate
    decides every site first (a finding this run does not fix stays CUDA for its unit, so a
    run with fewer rules fixes a subset of what a run with more fixes). ``shadow``: groups of
    the rules an ``--unsafe-fixes`` run would also fix: their sites are decided as that run
    decides them, never rewritten here; a timeline call among them that that run rewrites
    (``torch.cuda.empty_cache()`` beside a safe ``synchronize``) is not CUDA work that keeps a
    sync or event of this run CUDA. ``importer(name)``: a file of
    the tree importing ``name`` from this one (its import stays). ``package_prefix``: the scan's
    (``torch/`` when the root is a package), for relative imports. ``evidence``: filled with the
    gate's evidence, (rule, line) -> [Evidence] of the sites it left. ``tree``: the scanned
    tree (``tree_index.TreeIndex``) for units spanning files; None: such units are left."""

    findings: list | None = None
    shadow: tuple[Gated, ...] = ()
    importer: Callable[[str], str | None] | None = None
    package_prefix: str = ""
    evidence: dict | None = None
    tree: object | None = None
    torch_floor: object | None = None  # torch_floor.Floor: rewrites needing newer torch stay
    renamed: frozenset[str] = frozenset()  # the tree's helpers the helper rename makes neutral


def rewrite(
    source: str,
    path: str,
    gated: Gated,
    whole_file: bool = False,
    findings=None,
    package_prefix: str = "",
) -> Rewrite:
    """Apply ``gated`` (spec, finding lines) to ``source``; never returns code that fails to compile."""
    options = FileOptions(findings=findings, package_prefix=package_prefix)
    return rewrite_steps(source, path, [gated], whole_file, options)[0]


class _Failed(Exception):
    pass


class _File:
    """One file's analysis, shared by every step: context, regions, parsed pieces."""

    def __init__(
        self, source: str, path: str, groups: list[Gated], whole_file: bool, options: FileOptions
    ) -> None:
        self.source, self.path, self.importer = source, path, options.importer
        self.kept: list[tuple[str, str]] = []
        self.lines = split_lines(source)
        tree = options.tree.parsed(path, source) if options.tree else ast.parse(source)
        self.ctx = FileContext(source, tree, path, options.package_prefix)
        self.ctx.tree_index = options.tree
        self.ctx.torch_floor = options.torch_floor
        self.ctx.renamed_helpers = options.renamed
        self.families = new_families()
        self.groups = groups = [[(s, self._prepare(s, ls)) for s, ls in g] for g in groups]
        self.shadow = [(s, self._prepare(s, ls)) for g in options.shadow for s, ls in g]
        self.left: dict[tuple[str, int], str] = {}  # (rule, line) -> why the gate left it
        self.gate: Gate | None = None
        self.index: Index | None = None  # the gate's per-file facts, the same for every settle
        self.companions: dict = {}  # (rule, line) -> spans its family rewrites with it
        self.evidence: dict = {}  # (rule, line) -> [Evidence] of the sites left
        all_lines = {ln for g in [*groups, self.shadow] for _, ls in g for ln in ls}
        regs = None if whole_file else regions(self.ctx, self.lines, all_lines)
        self.whole = regs is None
        if regs is None:
            regs = [Region(1, max(len(self.lines), 1))]
        self.pieces = [Piece(self.lines, r, self.whole) for r in regs]
        self.wrappers: dict[int, MetadataWrapper] = {}
        self.variants: dict[tuple, tuple[str, Engine]] = {}

    def _prepare(self, spec: FixSpec, lines: frozenset[int]) -> frozenset[int]:
        """``spec``'s family prepares its lines, then each family serving that family's specs
        too (``Family.serves``: a module's own device for the ``.cuda()`` calls)."""
        for fam in self.families.values():
            if fam.name == spec.family or spec.family in fam.serves:
                lines = fam.prepare(self.ctx, spec, lines)
        return lines

    def settle(self, findings) -> None:
        """The intent gate over every site of every group: which stay, and why. With shadow
        groups, first as a run with them too decides (``FileOptions.shadow``)."""
        everything = [x for g in self.groups for x in g]
        later: frozenset = frozenset()
        if self.shadow:
            failed = self._settle(findings, everything + self.shadow, later)
            lines = {s.rule: ls for s, ls in self.shadow}
            shadow = {(f.rule, f.line) for f in findings if f.line in lines.get(f.rule, ())}
            later = self.gate.neutral(shadow - failed)
        self._settle(findings, everything, later)

    def _settle(self, findings, everything: Gated, later: frozenset) -> set[tuple[str, int]]:
        """The gate for the sites of ``everything``, iterated with the families (a site a family
        cannot rewrite stays CUDA and may hold others); the sites the families failed."""
        specs = {s.rule: (s, ls) for s, ls in everything}
        candidates = {
            (f.rule, f.line) for f in findings if f.line in specs.get(f.rule, ((), ()))[1]
        }
        companions: dict = {}
        for s, ls in everything:  # the spec's family, and each family serving it
            for fam in self.families.values():
                if fam.name == s.family or s.family in fam.serves:
                    for site, spans in fam.companions(self.ctx, s, ls).items():
                        companions.setdefault(site, []).extend(spans)
        # Plain renames of a `guard: true` rule need an availability check around them.
        unguarded = {s.rule for s, _ in everything if s.arg("guard") and s.family == "call"}
        defined_in = {s.rule: replacement_files(s) for s, _ in everything}
        renames = {
            n: s.new_for(n)
            for s, _ in everything
            if s.family in self.families and self.families[s.family].renames_plainly(self.ctx)
            for n in s.names
        }
        self.companions = companions
        # an exact refactor (``exact: true``: the same behaviour on every device) asks the
        # gate for no evidence: its unit spans files, and the gate decides one file
        exact = {s.rule for s, _ in everything if s.arg("exact")}
        partial = frozenset(s.rule for s, _ in everything if s.arg("partial"))
        options = Options(
            frozenset(unguarded), defined_in, renames, later, frozenset(exact), partial
        )
        self.index = self.index or Index(self.ctx)
        self.gate = gate = Gate(self.ctx, findings, candidates, companions, options, self.index)
        failed: set[tuple[str, int]] = set()
        late = False  # the gate's LATE kinds speak once the families' failures are known
        for _ in range(5):
            left = self.evidence = gate.settle(failed, late)
            self.left = {k: "; ".join(str(e) for e in ev[:2]) for k, ev in left.items()}
            self.variants = {}
            try:
                _, engines = self.state(everything)
                applied = {a for e in engines for a in e.outcome.applied}
            except (_Failed, SyntaxError, ValueError):
                return failed  # cannot tell what the families do: the step reports the failure
            new = {c for c in candidates - set(left) if c not in applied} - failed
            if not new and (late or not gate.late_speaks(left, failed)):
                return failed
            late = late or not new
            failed |= new
        self.variants = {}
        return failed

    def join_units(self) -> None:
        """Move every site of a unit the gate found (``Gate.units``: a guard and what it guards,
        one statement) into the earliest group holding one of them, so that no prefix of the
        series holds the unit half neutral (issue 20 item 4)."""
        if self.gate is None:
            return
        where: dict[tuple[str, int], int] = {}
        for gi, g in enumerate(self.groups):
            for s, ls in g:
                for ln in ls:
                    where.setdefault((s.rule, ln), gi)
        moves = self._unit_moves(where)
        if not moves:
            return
        specs = {s.rule: s for g in self.groups for s, _ in g}
        extra = self._prepared_along(moves, where, specs)
        new: list[dict[str, set[int]]] = [{s.rule: set(ls) for s, ls in g} for g in self.groups]
        for (rule, ln), gi in moves.items():
            new[where[(rule, ln)]][rule].discard(ln)
            new[gi].setdefault(rule, set()).add(ln)
        for (rule, x), gi in extra.items():
            new[gi].setdefault(rule, set()).add(x)
        self.groups = [[(specs[r], frozenset(ls)) for r, ls in g.items() if ls] for g in new]

    def _unit_moves(self, where: dict) -> dict[tuple[str, int], int]:
        """(rule, line) -> the group a site of a split unit moves to, its family's companion
        lines with it."""
        moves: dict[tuple[str, int], int] = {}
        for unit in self.gate.units():
            at = [where[x] for x in unit if x in where]
            if len(set(at)) > 1:
                for x in unit:
                    if x in where and where[x] != min(at):
                        moves[x] = min(at)
        for (rule, ln), gi in list(moves.items()):  # a family's companion lines go along
            for sp in self.companions.get((rule, ln), ()):
                if (rule, sp[0][0]) in where:
                    moves[(rule, sp[0][0])] = gi
        return moves

    def _prepared_along(self, moves: dict, where: dict, specs: dict) -> dict:
        """The lines a moved site's family prepares with it (a script's ``device`` line, which
        the ``.to(device)`` a guard's unit now writes needs in that step: mmseg's tools, round
        31), as (rule, line) -> group; one that is a site itself moves as a site (``moves``)."""
        extra: dict[tuple[str, int], int] = {}
        for (rule, ln), gi in list(moves.items()):
            for x in self._prepare(specs[rule], frozenset({ln})) - {ln}:
                if (rule, x) in where:
                    moves.setdefault((rule, x), gi)
                else:
                    extra.setdefault((rule, x), gi)
        return extra

    def variant(self, i: int, gated: Gated) -> tuple[str, Engine]:
        """Piece ``i`` rewritten for ``gated`` (restricted to its lines), cached."""
        r = self.pieces[i].region
        mine = [
            (
                s,
                frozenset(
                    ln for ln in ls if r.start <= ln <= r.end and (s.rule, ln) not in self.left
                ),
            )
            for s, ls in gated
        ]
        mine = [(s, ls) for s, ls in mine if ls]
        key = (i, tuple((s.rule, ls) for s, ls in mine))
        if key in self.variants:
            return self.variants[key]
        piece = self.pieces[i]
        if not mine:
            out = (piece.original, None)
        else:
            if i not in self.wrappers:
                try:
                    module = cst.parse_module(piece.text)
                except cst.ParserSyntaxError as e:
                    raise _Failed(f"parse: {str(e).splitlines()[0]}") from None
                self.wrappers[i] = MetadataWrapper(module, unsafe_skip_copy=True)
            engine = Engine(self.ctx, mine, self.families, piece.delta, self.gate)
            try:
                new = self.wrappers[i].visit(engine)
            except Exception as e:  # a codemod bug must cost this file, not the series
                raise _Failed(f"codemod: {type(e).__name__}: {e}") from None
            text = piece.restore(new.code)
            if text is None:
                raise _Failed(f"codemod: region {r.start}-{r.end} lost its wrapper")
            try:  # names the new text uses: an import they come from stays
                engine.uses = {
                    n.id for n in ast.walk(ast.parse(new.code)) if isinstance(n, ast.Name)
                }
            except SyntaxError as e:
                raise _Failed(
                    f"verify: rewritten lines {r.start}-{r.end} do not parse: {e}"
                ) from None
            out = (text, engine)
        self.variants[key] = out
        return out

    def state(self, gated: Gated) -> tuple[str, list[Engine]]:
        self.kept = []
        out, engines, pos = [], [], 1
        for i, piece in enumerate(self.pieces):
            r = piece.region
            out += self.lines[pos - 1 : r.start - 1]
            text, engine = self.variant(i, gated)
            out.append(text)
            if engine is not None:
                engines.append(engine)
            pos = r.end + 1
        out += self.lines[pos - 1 :]
        text = "".join(out)
        imported = self.ctx.module.imports
        adds = [
            (m, n)
            for e in engines
            for m, n in e.adds
            if imported.get(n or m) != (f"{m}.{n}" if n else m)
        ]
        removes = {n for e in engines for n in e.removes} - {n for e in engines for n in e.uses}
        if text != self.source and (adds or removes):
            tree = self.ctx.tree_index
            first = tree.top_modules() if tree is not None else frozenset()
            text = fix_imports(text, self.path, adds, removes, self.importer, self.kept, first)
        names = {n for e in engines for n in e.device_lines}
        tree = self.ctx.tree_index
        if names and tree is not None and tree.lines_after_imports() == 1:
            if not pytorch_module(self.ctx):  # PyTorch keeps two (2.14's `_test_st_common`)
                text = after_imports(text, names)
        return text, engines


def after_imports(text: str, names: set[str]) -> str:
    """One blank line between the import block and a device line this step wrote right after
    it (``DEVICE_TYPE = ...``), where the two lines that were there stayed: isort's count
    before a statement that is no definition where the tree's modules keep one
    (``TreeIndex.lines_after_imports``; ruff's I001 in llmcompressor's tests, round 37), not
    where they keep two (compressed-tensors' isort setting) nor in PyTorch's own modules (torch
    2.14's ``_test_st_common.py``)."""
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    for prev, stmt in zip(body, body[1:]):
        if not isinstance(prev, (ast.Import, ast.ImportFrom)) or not isinstance(stmt, ast.Assign):
            continue
        if not any(isinstance(t, ast.Name) and t.id in names for t in stmt.targets):
            continue
        gap = lines[prev.end_lineno : stmt.lineno - 1]
        if len(gap) >= 2 and all(not g.strip() for g in gap):
            del lines[prev.end_lineno : stmt.lineno - 2]
            return "".join(lines)
    return text


def rewrite_steps(
    source: str,
    path: str,
    groups: list[Gated],
    whole_file: bool = False,
    options: FileOptions | None = None,
) -> list[Rewrite]:
    """One Rewrite per group, each applied on top of the previous ones (``before`` is the
    previous step's ``after``). A group whose result fails is reported and left out; the
    following groups still apply. With ``options.findings`` the intent gate decides every site
    first (``_File.settle``) and the sites of one unit land in one step (``FileOptions``)."""
    options = options or FileOptions()
    try:
        f = _File(source, path, groups, whole_file, options)
    except (SyntaxError, ValueError, RecursionError) as e:
        return [Rewrite(path, source, source, error=f"parse: {e}", sites=_sites(g)) for g in groups]
    if options.findings is not None:
        try:
            f.settle(options.findings)
            f.join_units()
        except Exception as e:  # a gate bug must cost this file, not the series
            why = f"intent gate: {type(e).__name__}: {e}"
            return [Rewrite(path, source, source, error=why, sites=_sites(g)) for g in groups]
        if options.evidence is not None:  # --explain: the gate's evidence for every site it left
            options.evidence.update(f.evidence)
    out, final = _steps(f, verify_each=False)
    if final != source:
        # Every region already parsed; one compile() of the result stands for the steps
        # (compiling each step costs a whole-file compile per rule). On failure, find the step.
        try:
            compiles(final, path)
        except (SyntaxError, ValueError):
            out, _ = _steps(f, verify_each=True)
    return out


def compiles(text: str, path: str) -> None:
    """``compile()`` a rewritten file (raises as it does); the warnings of the project's own code
    (an ``is`` with a literal, an invalid escape) are not the run's to print."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compile(text, path, "exec", dont_inherit=True)


def _sites(group: Gated) -> frozenset[tuple[str, int]]:
    return frozenset((s.rule, ln) for s, ls in group for ln in ls)


def _steps(f: _File, verify_each: bool) -> tuple[list[Rewrite], str]:
    """The groups of ``f`` as steps, each on top of the ones that applied; the final text."""
    out: list[Rewrite] = []
    active: Gated = []
    prev = f.source
    for group in f.groups:
        rw = _step(f, active + group, group, prev, verify_each)
        out.append(rw)
        if not rw.error:
            active, prev = active + group, rw.after
    return out, prev


def _step(f: _File, gated: Gated, group: Gated, prev: str, verify_each: bool) -> Rewrite:
    sites = _sites(group)
    try:
        text, engines = f.state(gated)
    except _Failed as e:
        return Rewrite(f.path, prev, prev, error=str(e), sites=sites)
    except (SyntaxError, ValueError) as e:
        return Rewrite(f.path, prev, prev, error=f"imports: {e}", sites=sites)
    outcome = Outcome(
        [a for e in engines for a in e.outcome.applied if a in sites],
        [x for e in engines for x in e.outcome.failed if x[:2] in sites]
        + [
            (s.rule, ln, f.left[(s.rule, ln)])
            for s, ls in group
            for ln in sorted(ls)
            if (s.rule, ln) in f.left
        ],
    )
    if text != prev and verify_each:
        try:
            compiles(text, f.path)
        except (SyntaxError, ValueError) as e:
            error = f"verify: rewritten file does not compile: {e}"
            return Rewrite(f.path, prev, prev, outcome, error=error, sites=sites)
    return Rewrite(f.path, prev, text, outcome, kept_imports=list(f.kept), sites=sites)
