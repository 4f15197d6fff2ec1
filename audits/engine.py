"""The scan driver: walk, cache, byte prefilter, process pool, merge into one Report.

The workers (``audits.workers``) read each file once; the tree-level wrapper pass
(``audits.wrapper_pass``) then joins what they found, reading no file again.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from . import __version__, workers
from .cache import Cache, default_dir
from .catalog import Catalog, load
from .languages import LANGUAGES, load_scanner
from .model import FileError, Finding, Report, Rule
from .walk import DEFAULT_MAX_BYTES, Entry, package_prefix, walk
from .wrapper_pass import follow_wrappers

INPROCESS_BELOW = 48  # fewer files to parse than this: no pool (its start-up costs more)
# Part of the cache key: bump it when a scanner finds something else in the same bytes, so that
# results cached by the older scanner are not served (2: imports nested in module-level blocks;
# 3: CMake configure_file placeholders; 4: more Python rules and the wrapper pass; 5: wrapper
# uses in the wrapper's own module, all of them; 6: names bound by imports inside a function).
RESULTS_REVISION = 6

Progress = Callable[[int, int], None]


@dataclass
class Options:
    root: str
    select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    excludes: Sequence[str] = ()
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    languages: Sequence[str] | None = None  # None = every language with a scanner
    jobs: int = 0  # 0 = os.cpu_count()
    use_cache: bool = True
    cache_dir: str | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    catalog_path: str | None = None


def select_rules(cat: Catalog, opts: Options) -> list[Rule]:
    return cat.select(opts.select, opts.ignore)


@dataclass
class _Run:
    """One scan's state: per-file results, the words read this run, the cache."""

    cache: Cache | None
    verified_ns: int  # before any file is read: the cache's racy-clean reference
    results: dict[str, tuple[list[Finding], list[FileError]]] = field(default_factory=dict)
    fresh: dict[str, tuple[str, bytes]] = field(default_factory=dict)

    def record(self, e: Entry, out: Any) -> None:
        key = [e.size, e.mtime_ns, e.inode]
        if out == workers.SAME:
            hit = self.cache.reuse(e.relpath, key, self.verified_ns)
            out = workers.scan_one(e) if hit is None else (*hit, None, None)
        fs, errs, dig, found = out
        self.results[e.relpath] = (fs, errs)
        if dig is not None and found is not None:
            self.fresh[e.relpath] = (dig, found)
        if self.cache is not None and dig is not None:
            self.cache.store(e.relpath, key, dig, fs, errs, self.verified_ns)


def run_scan(
    opts: Options, progress: Progress | None = None, catalog: Catalog | None = None
) -> Report:
    with workers.gc_paused():  # see gc_paused; the pool's processes start with it paused too
        return _run_scan(opts, progress, catalog)


def _run_scan(opts: Options, progress: Progress | None, catalog: Catalog | None) -> Report:
    t0 = time.perf_counter()
    verified_ns = time.time_ns()
    cat = catalog or load(opts.catalog_path)
    rules = select_rules(cat, opts)
    langs = [
        lang
        for lang in LANGUAGES  # only the scanners asked for are imported
        if (opts.languages is None or lang.name in opts.languages) and load_scanner(lang)
    ]
    entries, errors = walk(
        opts.root, excludes=opts.excludes, max_bytes=opts.max_bytes, languages=langs
    )
    prefix = package_prefix(opts.root)
    cache = None
    if opts.use_cache:
        key = f"{__version__}\0{RESULTS_REVISION}\0{cat.version}\0{prefix}\0{opts.max_bytes}"
        cache = Cache(opts.cache_dir or default_dir(), opts.root, key)
        cache.load()
    run = _Run(cache, verified_ns)
    todo = _cached(entries, run)
    if todo:
        _scan_todo(
            todo, run, opts, (opts.catalog_path, prefix, [lang.name for lang in langs]), progress
        )
    if cache is not None:
        cache.prune({e.relpath for e in entries})
        try:
            cache.save()
        except OSError as ex:
            errors.append(FileError(cache.path, "cache", f"not saved: {ex.strerror or ex}"))
    if any(lang.name == "python" for lang in langs):
        followed = follow_wrappers(
            entries, run.results, run.fresh, cat, prefix, cache, RESULTS_REVISION
        )
        for rel, fs in followed.items():
            run.results[rel] = (run.results[rel][0] + fs, run.results[rel][1])
    return _report(opts, cat, rules, entries, errors, run.results, t0)


def _cached(entries: list[Entry], run: _Run) -> list[tuple[Entry, str | None]]:
    """Files whose stat key the cache vouches for go to ``run.results``; the rest, each with its
    cached digest (or None), are to be checked or scanned."""
    todo: list[tuple[Entry, str | None]] = []
    cache = run.cache
    for e in entries:
        hit = cache.lookup_stat(e.relpath, [e.size, e.mtime_ns, e.inode]) if cache else None
        if hit is not None:
            run.results[e.relpath] = hit
        else:
            todo.append((e, cache.digest_of(e.relpath) if cache else None))
    return todo


def _scan_todo(
    todo: list[tuple[Entry, str | None]],
    run: _Run,
    opts: Options,
    init_args: tuple,
    progress: Progress | None,
) -> None:
    jobs = opts.jobs or os.cpu_count() or 1
    if jobs <= 1 or len(todo) < INPROCESS_BELOW:
        workers.init_worker(*init_args)
        for i, (e, old) in enumerate(todo):
            run.record(e, workers.check_one(e, old))
            if progress:
                progress(i + 1, len(todo))
        return
    from concurrent.futures import ProcessPoolExecutor  # not on the warm path (~25 ms)

    by_rel = {e.relpath: e for e, _ in todo}
    done = 0
    with ProcessPoolExecutor(jobs, initializer=workers.init_worker, initargs=init_args) as pool:
        for out in pool.map(workers.scan_batch, workers.batches(todo, jobs)):
            for rel, res in out:
                run.record(by_rel[rel], res)
            done += len(out)
            if progress:
                progress(done, len(todo))


def _report(opts, cat, rules, entries, errors, results, t0) -> Report:
    selected = {r.id for r in rules}
    findings: list[Finding] = []
    langs_count: dict[str, int] = {}
    pfi = opts.per_file_ignores
    for e in entries:
        fs, errs = results[e.relpath]
        fs = [f for f in fs if f.rule in selected]
        if pfi and fs:
            fs = _apply_per_file_ignores(fs, e.relpath, pfi, cat)
        findings.extend(fs)
        errors.extend(errs)
        if not errs:
            langs_count[e.language] = langs_count.get(e.language, 0) + 1
    findings.sort(key=Finding.sort_key)
    errors.sort(key=lambda x: (x.path, x.reason))
    return Report(
        root=os.path.realpath(opts.root),
        findings=findings,
        errors=errors,
        files_scanned=sum(langs_count.values()),
        files_with_findings=len({f.path for f in findings}),
        tool_version=__version__,
        catalog_version=cat.version,
        duration_s=time.perf_counter() - t0,
        languages=langs_count,
    )


def _apply_per_file_ignores(
    fs: list[Finding], rel: str, pfi: dict[str, list[str]], cat: Catalog
) -> list[Finding]:
    import fnmatch

    codes = [c for pat, cs in pfi.items() if fnmatch.fnmatchcase(rel, pat) for c in cs]
    if not codes:
        return fs
    dropped = {r.id for r in cat.select(codes)}
    return [f for f in fs if f.rule not in dropped]
