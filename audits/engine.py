"""The scan driver: walk, cache, byte prefilter, process pool, merge into one Report."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from . import __version__
from .cache import Cache, default_dir, digest
from .catalog import Catalog, load
from .languages import BY_NAME, LANGUAGES, load_scanner
from .model import FileError, Finding, Report, Rule
from .walk import DEFAULT_MAX_BYTES, Entry, package_prefix, walk

INPROCESS_BELOW = 48  # fewer files to parse than this: no pool (its start-up costs more)
# Part of the cache key: bump it when a scanner finds something else in the same bytes, so that
# results cached by the older scanner are not served (2: imports nested in module-level blocks;
# 3: CMake configure_file placeholders; 4: issue 13's Python rules and the wrapper pass).
RESULTS_REVISION = 4


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


# ----------------------------------------------------------------------------- worker side
_W: dict = {}


def _init_worker(catalog_path: str | None, prefix: str, languages: Sequence[str]) -> None:
    # Scanners get every rule of their language: precedence between rules (a specific rule over
    # a catch-all) must not change with the selection, which is applied to the results instead.
    cat = load(catalog_path)
    _W.clear()
    _W["prefix"] = prefix
    _W["rules"] = {
        name: [r for r in cat.rules if r.language in BY_NAME[name].rule_languages]
        for name in languages
    }
    _W["scanners"] = {name: load_scanner(BY_NAME[name]) for name in languages}


SAME = "same"  # _check_one: the content equals the cached digest, the cached results stand


def _check_one(e: Entry, old_digest: str | None):
    """``SAME`` when the file still hashes to ``old_digest``, else ``_scan_one(e)``."""
    if old_digest is not None:
        try:
            with open(e.abspath, "rb") as f:
                if digest(f.read()) == old_digest:
                    return SAME
        except OSError:
            pass  # _scan_one reports it
    return _scan_one(e)


def _scan_one(e: Entry) -> tuple[list[Finding], list[FileError], str | None]:
    try:
        with open(e.abspath, "rb") as f:
            data = f.read()
    except OSError as ex:
        return [], [FileError(e.relpath, "unreadable", ex.strerror or str(ex))], None
    dig = digest(data)
    lang = BY_NAME[e.language]
    if not lang.may_match(data, e.relpath):
        return [], [], dig
    nul = data.find(b"\0")
    if nul >= 0:
        return [], [FileError(e.relpath, "binary", f"NUL byte at offset {nul}")], dig
    scanner = _W["scanners"][e.language]
    rules = _W["rules"][e.language]
    try:
        if e.language == "python":
            fs, errs = scanner.scan_source(data, e.relpath, rules, package_prefix=_W["prefix"])
        else:
            fs, errs = scanner.scan_source(data, e.relpath, rules)
    except Exception as ex:  # a scanner bug must not lose the rest of the run
        return [], [FileError(e.relpath, "internal", f"{type(ex).__name__}: {ex}")], None
    return fs, errs, dig


def _scan_batch(batch: list[tuple[Entry, str | None]]) -> list[tuple[str, Any]]:
    return [(e.relpath, _check_one(e, old)) for e, old in batch]


# ----------------------------------------------------------------------------- driver side
def select_rules(cat: Catalog, opts: Options) -> list[Rule]:
    return cat.select(opts.select, opts.ignore)


def run_scan(
    opts: Options,
    progress: Callable[[int, int], None] | None = None,
    catalog: Catalog | None = None,
) -> Report:
    t0 = time.perf_counter()
    verified_ns = time.time_ns()  # before any file is read: the cache's racy-clean reference
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
    selected = {r.id for r in rules}

    cache = None
    if opts.use_cache:
        key = f"{__version__}\0{RESULTS_REVISION}\0{cat.version}\0{prefix}\0{opts.max_bytes}"
        cache = Cache(opts.cache_dir or default_dir(), opts.root, key)
        cache.load()

    results: dict[str, tuple[list[Finding], list[FileError]]] = {}
    todo: list[tuple[Entry, str | None]] = []
    for e in entries:
        hit = cache.lookup_stat(e.relpath, [e.size, e.mtime_ns, e.inode]) if cache else None
        if hit is not None:
            results[e.relpath] = hit
        else:
            todo.append((e, cache.digest_of(e.relpath) if cache else None))

    def record(e: Entry, out) -> None:
        key = [e.size, e.mtime_ns, e.inode]
        if out == SAME:
            hit = cache.reuse(e.relpath, key, verified_ns)
            out = _scan_one(e) if hit is None else (*hit, None)
        fs, errs, dig = out
        results[e.relpath] = (fs, errs)
        if cache is not None and dig is not None:
            cache.store(e.relpath, key, dig, fs, errs, verified_ns)

    by_rel = {e.relpath: e for e, _ in todo}
    jobs = opts.jobs or os.cpu_count() or 1
    if todo:
        args = (opts.catalog_path, prefix, [lang.name for lang in langs])
        if jobs <= 1 or len(todo) < INPROCESS_BELOW:
            _init_worker(*args)
            for i, (e, old) in enumerate(todo):
                record(e, _check_one(e, old))
                if progress:
                    progress(i + 1, len(todo))
        else:
            from concurrent.futures import ProcessPoolExecutor  # not on the warm path (~25 ms)

            batches = _batches(todo, jobs)
            done = 0
            with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=args) as pool:
                for out in pool.map(_scan_batch, batches):
                    for rel, res in out:
                        record(by_rel[rel], res)
                    done += len(out)
                    if progress:
                        progress(done, len(todo))
    if cache is not None:
        cache.prune({e.relpath for e in entries})
        try:
            cache.save()
        except OSError as ex:
            errors.append(FileError(cache.path, "cache", f"not saved: {ex.strerror or ex}"))

    if "python" in [lang.name for lang in langs]:
        followed = _follow_wrappers(entries, results, cat, prefix, cache, opts)
        for rel, fs in followed.items():
            results[rel] = (results[rel][0] + fs, results[rel][1])
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


def _follow_wrappers(entries, results, cat, prefix, cache, opts) -> dict[str, list[Finding]]:
    """The tree-level pass (audits/python/wrappers.py): uses of project-local wrappers of CUDA
    predicates and queries. Its result depends on every Python file, so it is cached as a whole,
    keyed by every Python file's stat key: a warm run with nothing changed reads no file."""
    import hashlib
    import json

    from .python.wrappers import follow

    py = [e for e in entries if e.language == "python"]
    if not py:
        return {}
    key = hashlib.sha256(
        json.dumps(
            [RESULTS_REVISION, cat.version, prefix]
            + [[e.relpath, e.size, e.mtime_ns, e.inode] for e in py]
        ).encode()
    ).hexdigest()
    path = None
    if cache is not None:
        path = cache.path[: -len(".json")] + ".wrappers"  # not *.json: one scan cache per root
        try:
            with open(path, encoding="utf-8") as f:
                stored = json.load(f)
            if stored.get("key") == key:
                return {
                    rel: [Finding.from_dict(d) for d in fs]
                    for rel, fs in stored["findings"].items()
                }
        except (OSError, ValueError, KeyError, TypeError):
            pass
    abspath = {e.relpath: e.abspath for e in py}

    def read(rel: str) -> bytes | None:
        try:
            with open(abspath[rel], "rb") as f:
                return f.read()
        except OSError:
            return None

    found = [f for e in py for f in results[e.relpath][0]]
    rules = [r for r in cat.rules if r.language == "python"]
    out: dict[str, list[Finding]] = {}
    for f in follow(sorted(abspath), read, found, rules, prefix):
        out.setdefault(f.path, []).append(f)
    if path is not None:
        try:
            data = {rel: [f.__dict__ for f in fs] for rel, fs in out.items()}
            with open(path, "w", encoding="utf-8") as fh:
                json.dump({"key": key, "findings": data}, fh)
        except OSError:
            pass
    return out


def _batches(
    todo: list[tuple[Entry, str | None]], jobs: int
) -> list[list[tuple[Entry, str | None]]]:
    """Largest files first, dealt into many small batches so the pool stays balanced."""
    order = sorted(todo, key=lambda t: -t[0].size)
    n = max(jobs * 8, 1)
    out: list[list[tuple[Entry, str | None]]] = [[] for _ in range(min(n, len(order)))]
    for i, e in enumerate(order):
        out[i % len(out)].append(e)
    return out


def _apply_per_file_ignores(
    fs: list[Finding], rel: str, pfi: dict[str, list[str]], cat: Catalog
) -> list[Finding]:
    import fnmatch

    codes = [c for pat, cs in pfi.items() if fnmatch.fnmatchcase(rel, pat) for c in cs]
    if not codes:
        return fs
    dropped = {r.id for r in cat.select(codes)}
    return [f for f in fs if f.rule not in dropped]
