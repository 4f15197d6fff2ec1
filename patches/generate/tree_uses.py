"""Uses of a project's wrappers of CUDA queries (the audit's tree-level pass) across the series.

The tree scan reports a use of a project function or flag whose value is a CUDA query
(``def get_device(model, i): ... return torch.cuda.current_device()``, then
``x.to(get_device(model, 0))``, in its own file or another) as a finding of the wrapped rule, its
message naming the wrapper ("via `benchmarks.pipe.get_device`"). A file's own rescan does not
find it (it knows no other file). generate never rewrites such a use (``plan._queue``, reason
``REASON``); the use is no finding after the series when the series makes the wrapper neutral.
``after`` answers that with the audit's own tree-level pass over the tree as the series leaves
it: the summary's counts (``recount``) and ``--explain`` (``explain``) both ask it.
"""

from __future__ import annotations

from pathlib import Path

from audits.model import Finding
from audits.resolve import module_name
from patches.generate.audit_io import python_files, wrapper_of
from patches.generate.state import Run

__all__ = ["REASON", "after", "chain_files", "known", "wrapper_of"]

REASON = (
    "a use of a project wrapper of a CUDA query (the audit's tree-level pass): generate does "
    "not rewrite the use, which goes when the series makes the wrapper neutral"
)


def after(
    run: Run, finals: dict[str, str], rescans: dict[str, list[Finding]] | None = None
) -> tuple[list[Finding], dict]:
    """The tree-level pass over the tree with ``finals`` (path -> text after the series) in
    place of those files: (the uses of wrappers, qualified name -> ``Wrapper``). The other
    files' per-file findings are the report's; ``rescans``: the finals' own rescans, where
    already made (else rescanned here)."""
    root = run.settings.root
    rescans = dict(rescans or {})
    per_file = [f for f in run.report.findings if f.path not in finals and wrapper_of(f) is None]
    for rel, text in finals.items():
        if rel not in rescans:
            rescans[rel] = run.audit.rescan(text, rel)[0]
        per_file += [f for f in rescans[rel] if f.rule in run.audit.selected]

    def read(rel: str) -> bytes | None:
        if rel in finals:
            return finals[rel].encode("utf-8")
        try:
            return (Path(root) / rel).read_bytes()
        except OSError:
            return None

    return run.audit.wrappers(_files(run), read, per_file)


def known(run: Run) -> dict:
    """The tree's wrappers as it stands, qualified name -> ``Wrapper`` (once per run)."""
    if run.wrappers is None:
        run.wrappers = after(run, {})[1]
    return run.wrappers


def chain_files(run: Run, known: dict, quals) -> list[str]:
    """The files defining the wrappers ``quals`` and those they return or re-export (their
    ``via`` chain), as the tree names them."""
    files = {module_name(rel, run.audit.prefix): rel for rel in _files(run)}
    out: list[str] = []
    for q in quals:
        seen: set[str] = set()
        while q and q in known and q not in seen:
            seen.add(q)
            rel = files.get(q.rpartition(".")[0])
            if rel is not None and rel not in out:
                out.append(rel)
            q = known[q].via
    return out


def _files(run: Run) -> list[str]:
    """The tree's Python files, walked once per run."""
    if run.python_files is None:
        run.python_files = python_files(Path(run.settings.root))
    return run.python_files
