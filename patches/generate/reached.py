"""Whether a tree file keeps CUDA work after this run, for ``cuda-reached`` (a test module's gate
stays while the project code it imports keeps such work): the file's own steps, as this run
makes them (``plan.file_steps``), then its rescan; ``[reached] work`` names the rules whose
findings are CUDA work that fails without CUDA. Asked on demand, once per file and run (the
tree index's memo); ``generate`` and ``--explain`` share it through ``plan.tree_index``."""

from __future__ import annotations

from patches.generate.intent.data import reached_work
from patches.generate.state import Run


def install(run: Run) -> None:
    """Let the run's tree index answer ``kept_cuda(rel)`` (``intent/kinds/reached.py``)."""
    run.tree.kept_cuda = lambda rel: kept_cuda(run, rel)


def kept_cuda(run: Run, rel: str) -> str:
    """``"<file>:<line> <code>"`` of the first CUDA work ``rel`` keeps after this run, else
    ``""`` (also for a file asked again while it is being decided: a cycle of imports)."""
    memo = run.tree.memo.setdefault("kept-cuda", {})
    if rel not in memo:
        memo[rel] = ""
        memo[rel] = _kept(run, rel)
    return memo[rel]


def _kept(run: Run, rel: str) -> str:
    data = run.tree.files().get(rel, b"")
    if b"cuda" not in data.lower() and b"nccl" not in data.lower():
        return ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ""
    found, errs = run.audit.rescan(text, rel)
    work = reached_work()
    if errs or not any(f.rule in work for f in found):
        return ""
    rules = sorted({f.rule for f in found if f.rule in run.specs})
    final = text
    if rules:
        from patches.generate.plan import file_steps  # plan imports this module's user

        steps = file_steps(run, text, rel, found, rules)
        for rule in rules:
            res = steps.get(rule, (None, []))[0]
            if res is not None and not res.error and res.changed:
                final = res.after
        found = run.audit.rescan(final, rel)[0]
    kept = [f for f in found if f.rule in work]
    return f"{rel}:{kept[0].line} {kept[0].source.strip()[:50]}" if kept else ""
