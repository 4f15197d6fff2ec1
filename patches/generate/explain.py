"""``python -m patches.generate --explain FILE:LINE [TREE]``: the decision for one site, and why.

Scans the file as ``generate`` does and runs generate's own steps for it (``plan.file_steps``)
with the same options (``--unsafe-fixes``, ``--target``, ``--select``, ``--ignore``), and prints,
for each finding on that line, whether the series rewrites it (and into what) or leaves it, with
the intent gate's evidence (``patches/generate/intent/``) or the family's or catalogue's reason.
``tests/patches/test_properties.py`` checks that it answers what generate does.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from patches.common.cli import UsageError
from patches.generate import helper_rename, pipeline, tree_uses
from patches.generate.intent import KINDS
from patches.generate.linediff import opcodes
from patches.generate.plan import _map_line, file_steps
from patches.generate.state import Settings

# the lines after LEFT that make a left finding fixed after all (``recount``, the wild tally)
TAKEN = "but the series rewrites its line anyway"
WRAPPER_GONE = "but the series makes its wrapper neutral"


def parse_site(site: str, tree: Path | None = None) -> tuple[Path, int]:
    """``FILE:LINE``; FILE is a path as given (absolute or from the working directory) or, with a
    TREE, relative to the tree root (``--explain torch/_utils.py:811 TREE``)."""
    path, sep, line = site.rpartition(":")
    if not sep or not line.isdigit() or not path:
        raise UsageError(f"--explain wants FILE:LINE, got {site!r}")
    p = Path(path)
    if not p.is_file() and tree is not None and not p.is_absolute() and (tree / p).is_file():
        p = tree / p
    if not p.is_file():
        where = f" (nor under {tree})" if tree is not None else ""
        raise UsageError(f"--explain {site}: {path} is not a file{where}")
    return p, int(line)


def tree_root(file: Path) -> Path:
    """The directory above the file's outermost package (``.../site-packages`` for torch)."""
    d = file.resolve().parent
    while (d / "__init__.py").is_file() and d.parent != d:
        d = d.parent
    return d


@dataclass
class FileDecisions:
    """generate's decision for every finding of one file: ``lines(f)`` is what ``--explain``
    prints under the finding (the first says REWRITTEN, LEFT or left)."""

    rel: str
    text: str
    found: list = field(default_factory=list)
    rules: dict = field(default_factory=dict)  # the catalogue, rule id -> Rule
    error: str = ""  # the rescan failed: nothing decided
    lines: Callable[[object], list[str]] = lambda f: []

    def rewritten(self, f) -> bool:
        return self.lines(f)[0].startswith("REWRITTEN")


def decisions(file: Path, root: Path, settings: Settings | None = None, run=None) -> FileDecisions:
    """The decisions of ``generate`` with ``settings`` (default ``--unsafe-fixes``) for ``file``
    of the tree ``root``: the same rescan, rule order, gate and steps (``plan.file_steps``).
    ``run``: a ``pipeline.read`` of that tree and settings, to share across files."""
    rel = file.resolve().relative_to(root.resolve()).as_posix()
    run = run or pipeline.read(settings or Settings(root, unsafe_fixes=True))
    if run.report is None:  # the tree scan: its tree-level findings are no file's own
        pipeline.scan(run)
    text = file.read_bytes().decode("utf-8")
    found, errs = run.audit.rescan(text, rel)
    if errs:
        return FileDecisions(rel, text, error=f"{errs[0].reason} {errs[0].detail}")
    uses = [f for f in run.report.findings if f.path == rel and tree_uses.wrapper_of(f)]
    lines = _decisions(run, text, rel, found, uses)
    every = sorted(found + uses, key=lambda f: (f.line, f.col, f.rule))
    return FileDecisions(rel, text, every, run.audit.rules, lines=lines)


def explain(
    file: Path,
    line: int,
    root: Path | None = None,
    target: str = "torch",
    unsafe_fixes: bool = True,
    select: tuple[str, ...] = (),
    ignore: tuple[str, ...] = (),
    torch_floor: str = "auto",
) -> str:
    """The decision of ``generate`` with these options (``--unsafe-fixes`` by default, as the
    library call; the command line passes its own flags) for each finding on ``line``, with the
    gate's evidence or the reason it is left."""
    root = (root or tree_root(file)).resolve()
    settings = Settings(
        root, target, unsafe_fixes, tuple(select), tuple(ignore), torch_floor=torch_floor
    )
    return at_line(decisions(file, root, settings), line)


def at_line(d: FileDecisions, line: int) -> str:
    """``--explain``'s text for ``line`` of a file already decided (one ``decisions`` answers
    every line of its file)."""
    if d.error:
        return f"{d.rel}: the scan fails: {d.error}\n"
    here = [f for f in d.found if f.line <= line <= f.end_line]
    src = d.text.split("\n")[line - 1].strip() if line <= d.text.count("\n") + 1 else ""
    out = [f"{d.rel}:{line}: {src}"]
    if not here:
        return "\n".join(out + ["  no finding on this line"]) + "\n"
    for f in here:
        rule = d.rules[f.rule]
        first, *more = d.lines(f)
        out += [f"  {f.rule} ({rule.name}, {rule.safety}) col {f.col}: {first}", *more]
    return "\n".join(out) + "\n"


def _steps(run, text: str, rel: str, found, evidence=None):
    """(generate's steps for the file, their results, the text the series leaves)."""
    rule_ids = sorted({f.rule for f in found if f.rule in run.specs})
    steps = file_steps(run, text, rel, found, rule_ids, evidence=evidence)
    results = [res for res, _ in steps.values() if res is not None]
    unit = helper_rename.of(run)
    start = unit.start(rel, text) if unit is not None else text
    return steps, results, results[-1].after if results else start


def _decisions(run, text: str, rel: str, found, uses=()):
    """``decide(finding)`` -> the lines that say what generate does with it. ``uses``: the tree
    scan's findings at uses of project wrappers in the file (``tree_uses``)."""
    evidence: dict = {}
    steps, results, final = _steps(run, text, rel, found, evidence)
    applied = {a for r in results for a in r.outcome.applied}
    failed = {(x[0], x[1]): x[2] for r in results for x in r.outcome.failed}
    errors = {(f.rule, f.line): r.error for r, fs in steps.values() if r and r.error for f in fs}
    unit = helper_rename.of(run)
    taken = unit.sites(rel, [*found, *uses]) if unit is not None else set()
    still = _still_there(run, text, final, rel)
    gone = _uses_gone(
        run, rel, text, final, [f for f in uses if (f.rule, f.line, f.col) not in taken]
    )

    def decide(f) -> list[str]:
        site = (f.rule, f.line)
        if (f.rule, f.line, f.col) in taken:
            out = [f"REWRITTEN ({unit.describe(unit.helper_at(rel, f))})"]
            return out + [f"    -> {_line_after(text, final, f.line)}"]
        if tree_uses.wrapper_of(f) is not None:
            out = [f"left: {tree_uses.REASON}", f"    the wrapper: `{tree_uses.wrapper_of(f)}`"]
            if (f.rule, f.line, f.col) in gone:
                out.append(f"    {WRAPPER_GONE}: the use is no finding after it")
            return out
        if f.rule not in run.specs:
            why = run.skipped.get(f.rule, "no codemod for this rule")
            also = unit.reason_for(rel, f) if unit is not None else ""
            out = [f"left: {why}" + (f"; {also}" if also else "")]
        elif site in errors:
            out = [f"LEFT: {errors[site]}"]
        elif site in applied:
            out = ["REWRITTEN (no evidence that this code is about CUDA itself)"]
            return out + [f"    -> {_line_after(text, final, f.line)}"]
        elif site in evidence:
            about = any(e.kind.startswith("cuda-") for e in evidence[site])
            out = ["LEFT" + (", the code is about CUDA itself:" if about else ":")]
            out += [f"    {e.kind} ({KINDS[e.kind]}): {e.detail}" for e in evidence[site]]
        else:
            out = [f"LEFT: {failed.get(site, 'no rewrite matched this site')}"]
        if final != text and not still(f):  # another site's rewrite took its line with it
            out.append(f"    {TAKEN} -> {_line_after(text, final, f.line)}")
        return out

    return decide


def _uses_gone(run, rel: str, text: str, final: str, uses) -> set[tuple[str, int, int]]:
    """(rule, line, col) of the ``uses`` of wrappers that the tree-level pass no longer finds
    once the series has changed this file and the files defining their wrappers (each decided
    by generate's own steps, as this one)."""
    if not uses:
        return set()
    finals = {rel: final}
    quals = {tree_uses.wrapper_of(f) for f in uses}
    for other in tree_uses.chain_files(run, tree_uses.known(run), quals):
        if other not in finals and (new := _final_of(run, other)) is not None:
            finals[other] = new
    after, _ = tree_uses.after(run, finals)
    left = Counter((g.rule, g.line) for g in after if g.path == rel)
    gone = set()
    for f in uses:
        key = (f.rule, _map_line(text, final, f.line))
        if left[key] > 0:
            left[key] -= 1
        else:
            gone.add((f.rule, f.line, f.col))
    return gone


def _final_of(run, rel: str) -> str | None:
    """The text generate's steps leave for another file of the tree (its own text when it
    cannot be rescanned, None when it cannot be read)."""
    try:
        text = (Path(run.settings.root) / rel).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found, errs = run.audit.rescan(text, rel)
    return text if errs else _steps(run, text, rel, found)[2]


def _line_after(text: str, final: str, line: int, width: int = 160) -> str:
    """Line ``line`` of ``text`` as the series leaves it: the lines that replace the changed
    block holding it, joined by ``⏎`` (a guard written above a statement, a call wrapped over
    several lines), cut at ``width``."""
    a, b = text.split("\n"), final.split("\n")
    for tag, i1, i2, j1, j2 in opcodes(a, b):
        if tag != "equal" and i1 < line <= i2:
            shown = " ⏎ ".join(x.strip() for x in b[j1:j2] if x.strip())
            return shown if len(shown) <= width else shown[: width - 1] + "…"
    at = _map_line(text, final, line)
    return b[at - 1].strip() if 0 < at <= len(b) else ""


def _still_there(run, text: str, final: str, rel: str):
    """``still(f)``: the rescan of ``final`` finds ``f``'s rule on its (mapped) line."""
    found, errs = run.audit.rescan(final, rel) if final != text else ([], [])
    left = {(g.rule, g.line) for g in found}

    def still(f) -> bool:
        return bool(errs) or (f.rule, _map_line(text, final, f.line)) in left

    return still
