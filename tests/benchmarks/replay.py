"""Replay PyTorch's own neutralisation: run generate on torch 2.4.1, compare with 2.13.0.

    make replay [ARGS="--mode unsafe --files 'torch/nn/*'"]
    .venv/bin/python tests/benchmarks/replay.py [--mode safe|unsafe|both] [--files GLOB ...]
        [--why] [--json OUT] [--compare BASE.json] [--keep DIR] [--no-rerun] [--project DIR]
        [--labels YAML] [--later YAML ...] [--plain]

The label list (``../shared/upstream/replay/labels_2.4.1_2.13.0.yaml``, read at run time, never
copied) names every CUDA-only site upstream neutralised between the releases and every CUDA
statement 2.13.0 kept. For each mode: the covered 2.4.1 files (from the pip wheel, see
replay_fetch) go into a scratch git repo; ``python -m patches.generate TREE --out SERIES
[--unsafe-fixes]`` writes the series; it is applied one patch at a time with ``git am`` (every
prefix must apply and every changed file compile, with no attribute read from a neutral object
that lacks it: bisect_series's check); every changed file must pass PyTorch's lint config at
the end of the series (pytorch_style: B950's limit, and the formatter where the file was under
it), and each patch's own state is linted the same way (reported, not a failure); every label
is scored on the result (replay_score); generate runs again on the patched tree (a rerun must
add nothing). Prints recall, agreement and rewrites of kept sites per kind and per form, the
checks, every rewrite of a kept site and every miss; beside the kept-site list, reader's aids
(never instead of it): kept labels to reread (replay_moved), kept sites where the new release
adds another backend beside CUDA (replay_beside), kept sites with a twin upstream neutralised
(replay_twins), and with --later those upstream made in a later release (replay_later). Exit 0 when scored, 1 when a check failed, 2 when the sources cannot be had.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import replay_beside  # noqa: E402
import replay_compare  # noqa: E402
import replay_later  # noqa: E402
import replay_moved  # noqa: E402
import replay_report  # noqa: E402
import replay_score  # noqa: E402
import replay_twins  # noqa: E402
from replay_fetch import FetchError, WheelText, sources  # noqa: E402

from patches.common import gitutil  # noqa: E402

LABELS = REPO.parent / "shared" / "upstream" / "replay" / "labels_2.4.1_2.13.0.yaml"


@dataclass
class ModeResult:
    mode: str
    patches: int = 0
    applied: int = 0
    apply_error: str = ""
    prefix_failures: list[str] = field(default_factory=list)
    rerun_patches: int | None = None
    generate_summary: str = ""
    seconds: dict[str, float] = field(default_factory=dict)
    records: list[replay_score.Record] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)  # "path:line" of every old line rewritten
    # PyTorch's lint for the changed files (pytorch_style): the series' end state (a check) and
    # each patch's own state (reported: a patch merged alone)
    lint_failures: list[str] = field(default_factory=list)
    patch_lint: list[str] = field(default_factory=list)


def load_labels(path: Path) -> dict:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path, encoding="utf-8") as f:
        return yaml.load(f, Loader=loader)


def generate(tree: Path, out: Path, opts, cache: Path) -> tuple[int, str]:
    """Run the real codemod CLI (from ``opts.project``); (number of patches, its summary)."""
    cmd = [sys.executable, "-m", "patches.generate", str(tree), "--out", str(out)]
    cmd += ["--unsafe-fixes"] if opts.unsafe else []
    floor = getattr(opts, "torch_floor", None)  # the wild benchmark's; torch's tree has none
    cmd += ["--torch-floor", floor] if floor else []
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))  # a private, cold scan cache
    proc = subprocess.run(cmd, cwd=opts.project, env=env, capture_output=True, text=True)
    (out.parent / f"{out.name}.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise RuntimeError(f"generate exited {proc.returncode}: " + " | ".join(tail))
    series = out / "series"
    names = series.read_text().split() if series.exists() else []
    lines = proc.stderr.strip().splitlines()
    faults = [x for x in lines if ": codemod-fault " in x]  # files the run went on without
    return len(names), "\n".join(lines[:1] + faults)


def make_tree(src: Path, files: list[str], dest: Path) -> Path:
    for rel in files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes((src / rel).read_bytes())
    gitutil.git("init", "-q", cwd=dest)
    gitutil.git("add", "-A", ".", cwd=dest)
    gitutil.git("commit", "-q", "-m", "torch 2.4.1", cwd=dest)
    gitutil.git("tag", "base", cwd=dest)
    return dest


def apply_each(tree: Path, series: Path, res: ModeResult) -> None:
    """``git am`` one patch at a time; after each, every file it changed must compile, read no
    attribute a neutral object lacks (bisect_series.bad_attributes), read no name it did not
    bind (a ``.to(device)`` whose ``device`` line a later patch adds) and keep its line
    endings."""
    for i, name in enumerate((series / "series").read_text().split(), 1):
        try:
            gitutil.am(tree, [series / name])
        except gitutil.GitError as e:
            res.apply_error = f"patch {i} ({name}) does not apply: {e}"
            return
        res.applied += 1
        changed = gitutil.git("diff", "--name-only", "HEAD~1", "HEAD", cwd=tree).stdout.split()
        for rel in changed:
            failures, lint_says = _prefix_checks(tree, rel)
            res.prefix_failures += [f"prefix {i} ({name}): {rel} {f}" for f in failures]
            res.patch_lint += [f"patch {i} ({name}): {why}" for why in lint_says]


def _prefix_checks(tree: Path, rel: str) -> tuple[list[str], list[str]]:
    """(what fails, what PyTorch's lint says) of ``rel`` after the patch just applied."""
    from bisect_series import bad_attributes  # imports torch: only when there is a series

    text = (tree / rel).read_text(encoding="utf-8")
    try:
        with warnings.catch_warnings():  # the project's own warnings are not the check's
            warnings.simplefilter("ignore")
            compile(text, rel, "exec", dont_inherit=True)
    except SyntaxError as e:
        return [f"does not compile: {e}"], []
    was = subprocess.run(["git", "show", f"HEAD~1:{rel}"], cwd=tree, capture_output=True)
    # as text mode reads it (universal newlines), for the checks that compare lines
    before = was.stdout.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    out = list(bad_attributes(text))
    out += [
        f"reads `{n}`, bound nowhere" for n in sorted(_unbound(text, rel) - _unbound(before, rel))
    ]
    ends = (_newlines(was.stdout), _newlines((tree / rel).read_bytes()))
    if ends[0] in ("lf", "crlf") and ends[1] != ends[0]:
        out.append(f"line endings {ends}")
    return out, lint(tree, rel, before, text)


def _unbound(text: str, rel: str) -> set[str]:
    """The names ``text`` reads and binds nowhere (ruff's F821); empty without ruff."""
    from patches.generate.pytorch_style import ruff

    exe = ruff()
    if exe is None or not rel.endswith(".py"):
        return set()
    cmd = [exe, "check", "--isolated", "--select", "F821", "--output-format", "json"]
    done = subprocess.run(
        [*cmd, "--stdin-filename", rel, "-"], input=text.encode(), capture_output=True
    )
    try:
        found = json.loads(done.stdout or b"[]")
    except ValueError:
        return set()
    return {m["message"].split("`")[1] for m in found if m["message"].count("`") >= 2}


def _newlines(data: bytes) -> str:
    """How ``data``'s lines end: "lf", "crlf", "mixed", or "none"."""
    crlf, lf = data.count(b"\r\n"), data.count(b"\n")
    return "none" if not lf else "crlf" if crlf == lf else "lf" if not crlf else "mixed"


def lint(tree: Path, rel: str, before: str, after: str) -> list[str]:
    """What PyTorch's lint config says of ``after``'s lines changed from ``before``
    (patches/generate/pytorch_style: B950's line limit everywhere; the formatter's output where
    the file was under the formatter at the base of the series)."""
    from patches.generate import pytorch_style as style

    out = [f"{rel}:{n}: over {style.B950_LIMIT} columns" for n in style.long_lines(before, after)]
    base = gitutil.git("show", f"base:{rel}", cwd=tree).stdout
    if style.formatted(base, rel) and not style.formatted(after, rel):
        out.append(f"{rel}: under PyTorch's formatter at the base, not after (ruff format)")
    return out


def lint_series(tree: Path, res: ModeResult) -> None:
    """The end state of every file the series changed passes PyTorch's lint config."""
    for rel in gitutil.git("diff", "--name-only", "base", "HEAD", cwd=tree).stdout.split():
        base = gitutil.git("show", f"base:{rel}", cwd=tree).stdout
        after = (tree / rel).read_text(encoding="utf-8")
        res.lint_failures += lint(tree, rel, base, after)


def run_mode(labels: list[dict], src: Path, files: list[str], opts, work: Path):
    res = ModeResult("unsafe" if opts.unsafe else "safe")
    base = work / res.mode
    shutil.rmtree(base, ignore_errors=True)  # a kept folder from an earlier run
    t0 = time.perf_counter()
    tree = make_tree(src, files, base / "tree")
    cache = base / "cache"
    res.patches, res.generate_summary = generate(tree, base / "series", opts, cache)
    t1 = time.perf_counter()
    res.seconds["generate"] = round(t1 - t0, 1)
    if res.patches:
        apply_each(tree, base / "series", res)
        lint_series(tree, res)
    t2 = time.perf_counter()
    res.seconds["apply+compile"] = round(t2 - t1, 1)
    diff = gitutil.git("diff", "-U0", "--no-color", "base", "HEAD", cwd=tree).stdout
    eq = replay_score.load_equivalences()
    old = {rel: (src / rel).read_text(encoding="utf-8").splitlines() for rel in files}
    hunks = replay_score.parse_diff(diff)
    res.records = replay_score.score(labels, hunks, old, eq)
    res.touched = replay_score.touched_lines(hunks)
    t3 = time.perf_counter()
    res.seconds["score"] = round(t3 - t2, 1)
    if not opts.no_rerun and not res.apply_error:
        res.rerun_patches, _ = generate(tree, base / "rerun", opts, cache)
        res.seconds["rerun"] = round(time.perf_counter() - t3, 1)
    return res


def tallies(res: ModeResult) -> dict:
    groups = replay_score.summarize(res.records)
    return {g: {k: asdict(t) for k, t in d.items()} for g, d in groups.items()}


def explain_misses(res: ModeResult, src: Path, opts) -> None:
    """Fill ``why`` of every missed neutralized label with generate --explain's answer, asked
    of the checkout in ``opts.project`` on the unpatched sources."""
    misses = [r for r in res.records if r.status == "neutralized" and not r.rewritten]
    sites = sorted({(r.path, r.line, *r.span) for r in misses})
    cmd = [sys.executable, str(Path(__file__).with_name("replay_why.py")), str(src)]
    proc = subprocess.run(
        cmd, cwd=opts.project, input=json.dumps(sites), capture_output=True, text=True
    )
    if proc.returncode:
        print(f"replay: --why failed: {proc.stderr.strip()[-300:]}", file=sys.stderr)
        return
    why = json.loads(proc.stdout)
    for r in misses:
        r.why = why.get(f"{r.path}:{r.line}", "")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["safe", "unsafe", "both"], default="both")
    ap.add_argument(
        "--files",
        action="append",
        default=[],
        metavar="GLOB",
        help="score only labelled files matching GLOB (fnmatch; repeatable)",
    )
    ap.add_argument("--labels", type=Path, default=LABELS, help="the label list (YAML)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the results as JSON")
    ap.add_argument(
        "--compare", type=Path, metavar="BASE", help="what changed since an earlier --json run"
    )
    ap.add_argument(
        "--keep", type=Path, metavar="DIR", help="work in DIR (trees, series, logs) and keep it"
    )
    ap.add_argument(
        "--project",
        type=Path,
        default=REPO,
        help="the hwneutral checkout whose patches.generate runs (default: this one)",
    )
    ap.add_argument("--no-rerun", action="store_true", help="skip the idempotence rerun")
    ap.add_argument(
        "--why",
        action="store_true",
        help="ask generate --explain why each miss of the last mode is left (explain reads as --unsafe-fixes)",
    )
    ap.add_argument("--plain", action="store_true", help="plain text even when rich is installed")
    ap.add_argument(
        "--later",
        type=Path,
        action="append",
        default=[],
        metavar="YAML",
        help="a later pair's label list, once per pair in release order: say which kept-site "
        "rewrites upstream made in a later release",
    )
    return ap.parse_args(argv)


def select(data: dict, globs: list[str]) -> tuple[list[dict], dict[str, dict]]:
    shas = data["pair"]["file_sha256"]
    keep = [p for p in shas if not globs or any(fnmatch.fnmatch(p, g) for g in globs)]
    labels = [lab for lab in data["labels"] if lab["path"] in keep]
    return labels, {p: shas[p] for p in keep}


def later_report(data: dict, nxt: list[dict], labels: list[dict], results) -> dict | None:
    """replay_later's verdict per mode, printed; None when a later release cannot be read."""
    if not nxt:
        return {}
    text = WheelText()
    try:
        later = {r.mode: replay_later.check(data, nxt, r.records, text) for r in results}
    except FetchError as e:
        print(f"replay: --later: {e}", file=sys.stderr)
        return None
    finally:
        text.close()
    kept = sum(lab["status"] == "kept" for lab in labels)
    for mode, res in later.items():
        replay_later.show(mode, res, kept)
    return later


def main(argv=None) -> int:
    opts = parse_args(argv)
    if not opts.labels.is_file():
        print(f"replay: no label list at {opts.labels}", file=sys.stderr)
        return 2
    data = load_labels(opts.labels)
    nxt = [load_labels(p) for p in opts.later]
    try:
        replay_later.chain(data, nxt)
    except ValueError as e:
        print(f"replay: --later: {e}", file=sys.stderr)
        return 2
    labels, shas = select(data, opts.files)
    if not shas:
        print(f"replay: no labelled file matches {opts.files}", file=sys.stderr)
        return 2
    pair = data["pair"]
    try:
        t0 = time.perf_counter()
        old = sources(pair["old"], {p: s["old_sha256"] for p, s in shas.items()})
        new = sources(pair["new"], {p: s["new_sha256"] for p, s in shas.items()})
        fetched = time.perf_counter() - t0
    except FetchError as e:
        print(f"replay: {e}", file=sys.stderr)
        return 2
    modes = [False, True] if opts.mode == "both" else [opts.mode == "unsafe"]
    with tempfile.TemporaryDirectory(prefix="hn-replay-") as tmp:
        work = opts.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        results = []
        for unsafe in modes:
            opts.unsafe = unsafe
            try:
                results.append(run_mode(labels, old, sorted(shas), opts, work))
            except (RuntimeError, gitutil.GitError) as e:
                print(f"replay: {'unsafe' if unsafe else 'safe'} mode: {e}", file=sys.stderr)
                return 1
        if opts.why:
            t0 = time.perf_counter()
            explain_misses(results[-1], old, opts)
            results[-1].seconds["why"] = round(time.perf_counter() - t0, 1)
    head = {
        "pair": f"{pair['old']} -> {pair['new']}",
        "files": len(shas),
        "labels": len(labels),
        "fetch_seconds": round(fetched, 1),
    }
    replay_report.show(head, results, plain=opts.plain)
    moved = {r.mode: replay_moved.check(labels, new, r.records) for r in results}
    for mode, hits in moved.items():
        replay_moved.show(mode, pair["new"], hits)
    beside = {r.mode: replay_beside.check(labels, old, new, r.records) for r in results}
    for r in results:
        of = sum(x.status == "kept" and x.rewritten for x in r.records)
        replay_beside.show(r.mode, pair["new"], beside[r.mode], of)
    later = later_report(data, nxt, labels, results)
    if later is None:
        return 2
    twins = [replay_twins.check(r.mode, data, r.records, nxt) for r in results]
    for res in twins:
        replay_twins.show(res)
    if opts.compare:
        replay_compare.show(opts.compare, results)
    if opts.json:
        payload = {**head, "modes": [dict(asdict(r), summary=tallies(r)) for r in results]}
        payload["safe_not_unsafe"] = replay_report.safe_not_unsafe(results)
        payload["later"] = {
            mode: dict(asdict(res), still_kept=res.still_kept) for mode, res in later.items()
        }
        payload["moved_rewritten"] = moved
        payload["kept_beside_another_backend"] = beside
        payload["kept_twins"] = {res.mode: asdict(res) for res in twins}
        opts.json.write_text(json.dumps(payload, indent=1))
    failed = any(
        r.apply_error or r.prefix_failures or r.rerun_patches or r.lint_failures for r in results
    )
    failed = failed or bool(replay_report.safe_not_unsafe(results))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
