"""``python -m patches.generate --explain FILE:LINE [TREE]``: the decision for one site, and why.

Scans the file as ``generate`` does (every rule, ``--unsafe-fixes`` implied, the target given),
runs the file's steps, and prints, for each finding on that line, whether the series rewrites it
(and into what) or leaves it, with the intent gate's evidence (``patches/generate/intent/``) or the
family's or catalogue's reason.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from patches.common.cli import UsageError
from patches.generate import pipeline
from patches.generate.codemods import rewrite_steps
from patches.generate.intent import KINDS
from patches.generate.plan import file_groups
from patches.generate.state import Settings


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


def explain(file: Path, line: int, root: Path | None = None, target: str = "torch") -> str:
    root = (root or tree_root(file)).resolve()
    rel = file.resolve().relative_to(root).as_posix()
    run = pipeline.read(Settings(root, target, unsafe_fixes=True))
    rules, specs, skipped = run.audit.rules, run.specs, run.skipped
    text = file.read_bytes().decode("utf-8")
    found, errs = run.audit.rescan(text, rel)
    if errs:
        return f"{rel}: the scan fails: {errs[0].reason} {errs[0].detail}\n"
    here = [f for f in found if f.line <= line <= f.end_line]
    src = text.split("\n")[line - 1].strip() if line <= text.count("\n") + 1 else ""
    out = [f"{rel}:{line}: {src}"]
    if not here:
        return "\n".join(out + ["  no finding on this line"]) + "\n"
    by_rule: dict[str, list] = defaultdict(list)
    for f in found:
        if f.rule in specs:
            by_rule[f.rule].append(f)
    _, _, groups = file_groups(sorted(by_rule), by_rule, specs)
    evidence: dict = {}
    results = rewrite_steps(
        text, rel, groups, findings=found, package_prefix=run.audit.prefix, evidence=evidence
    )
    applied = {a for r in results for a in r.outcome.applied}
    failed = {(x[0], x[1]): x[2] for r in results for x in r.outcome.failed}
    final = results[-1].after.split("\n") if results else []
    for f in here:
        rule = rules[f.rule]
        head = f"  {f.rule} ({rule.name}, {rule.safety}) col {f.col}"
        if f.rule not in specs:
            out.append(f"{head}: left: {skipped.get(f.rule, 'no codemod for this rule')}")
        elif (f.rule, f.line) in applied:
            out.append(f"{head}: REWRITTEN (no evidence that this code is about CUDA itself)")
            if f.line <= len(final):
                out.append(f"    -> {final[f.line - 1].strip()}")
        elif (f.rule, f.line) in evidence:
            about = any(e.kind.startswith("cuda-") for e in evidence[(f.rule, f.line)])
            out.append(f"{head}: LEFT" + (", the code is about CUDA itself:" if about else ":"))
            for e in evidence[(f.rule, f.line)]:
                out.append(f"    {e.kind} ({KINDS[e.kind]}): {e.detail}")
        else:
            why = failed.get((f.rule, f.line), "no rewrite matched this site")
            out.append(f"{head}: LEFT: {why}")
    return "\n".join(out) + "\n"
