"""Port scripts nobody on this team wrote: example and benchmark folders of pinned PyPI sdists.

    .venv/bin/python tests/benchmarks/wild_scripts.py [--set tuned|held-out|all]
        [--projects ignite,fairscale,...] [--keep DIR] [--json OUT] [--plain]
        [--project CHECKOUT] [--torch-floor auto|none|X.Y]

``--set tuned`` (the default): ignite, fairscale, fairseq, the projects round 21 mended the codemod
from; ``--set held-out``: projects (``held_out=True``) measured at first contact, reported apart.
Per project (PROJECTS: the sdist, pinned by version and sha256, fetched once by wild_fetch into
``~/.cache/hwneutral/sdists``): the folders go into a scratch git repo; ``python -m
patches.generate TREE --out SERIES --unsafe-fixes`` writes the series, which is applied one
patch at a time with ``git am`` (every patch must apply, every changed file compile after each:
replay.apply_each); generate runs again on the result (a rerun must add nothing). generate's
own decision for every finding of the unpatched tree (wild_why: ``--explain``'s reasons) gives
the tallies (findings before / fixed / left per rule, left ones per reason, "no `device` in
scope" apart) and the split units (wild_units: a function, or the top level, where the series
rewrote a CUDA site and left another). ``--torch-floor`` is generate's (default ``auto``: each
project's declared torch; ``none`` measures the rewrites as for the newest torch, as rounds 21 to
24 did). Exit 0 when every check passes, 1 when one fails or generate crashes, 2 when an sdist
cannot be had.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import replay  # noqa: E402
import replay_score  # noqa: E402
import wild_fetch  # noqa: E402
import wild_report  # noqa: E402
import wild_units  # noqa: E402
from replay_fetch import FetchError  # noqa: E402
from wild_projects import PROJECTS, SETS  # noqa: E402

from patches.common import gitutil  # noqa: E402


def decide(tree: Path, project: Path, cache: Path, floor: str) -> subprocess.Popen:
    """wild_why on the unpatched ``tree``, asked of the checkout ``project`` with a private, cold
    scan cache (started, not awaited: it reads the tree while generate does; ``decided`` waits
    for it)."""
    cmd = [sys.executable, str(Path(__file__).with_name("wild_why.py")), str(tree), floor]
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    pipe = subprocess.PIPE
    return subprocess.Popen(cmd, cwd=project, env=env, stdout=pipe, stderr=pipe, text=True)


def decided(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"wild_why exited {proc.returncode}: {err.strip()[-800:]}")
    return json.loads(out)


_FIGURES = re.compile(r"(\d+) findings fixed, (\d+) left")


def generate_says(summary: str) -> dict:
    """generate's own figures from its summary line: fixed, and left after the series (a rescan
    of its result: findings on lines the series wrote count there)."""
    m = _FIGURES.search(summary)
    return {"fixed": int(m.group(1)), "left_after": int(m.group(2))} if m else {}


def faults(summary: str) -> list[dict]:
    """Files generate left because its codemod failed on them (a fault to report; the run went
    on without them)."""
    out = []
    for line in summary.splitlines():
        head, sep, detail = line.strip().partition(": codemod-fault ")
        if sep and head.startswith("error "):
            out.append({"file": head.removeprefix("error "), "traceback": detail})
    return out


def checks(res: replay.ModeResult) -> dict:
    return {
        "patches": res.patches,
        "applied": res.applied,
        "apply_error": res.apply_error,
        "prefix_failures": res.prefix_failures,
        "rerun_patches": res.rerun_patches,
    }


def run_project(key: str, opts, work: Path) -> dict:
    """Fetch the project's sdist and measure its folders."""
    proj, base = PROJECTS[key], work / key
    shutil.rmtree(base, ignore_errors=True)  # a kept folder from an earlier run
    t0 = time.perf_counter()
    archive = wild_fetch.download(proj.name, proj.version, proj.sdist)
    src = wild_fetch.extract(archive, base / "src", list(proj.folders))
    fetched = round(time.perf_counter() - t0, 1)
    res = measure(src, opts, base)
    res["seconds"] = {"fetch": fetched, **res["seconds"]}
    name = f"{proj.name}=={proj.version}"
    return {"project": name, "folders": list(proj.folders), "held_out": proj.held_out, **res}


def measure(src: Path, opts, base: Path) -> dict:
    """The files of ``src`` in a git tree under ``base``: decide and generate, apply, rerun; the
    figures and checks (``opts.project``: the checkout whose codemod runs)."""
    seconds: dict[str, float] = {}
    t1 = time.perf_counter()
    files = sorted(p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file())
    tree = replay.make_tree(src, files, base / "tree")
    why = decide(tree, opts.project, base / "cache-why", getattr(opts, "torch_floor", "auto"))
    res = replay.ModeResult("unsafe")
    try:
        res.patches, res.generate_summary = replay.generate(
            tree, base / "series", opts, base / "cache"
        )
    finally:
        decisions = decided(why)  # before git am changes the tree
    if res.patches:
        replay.apply_each(tree, base / "series", res)
    t2 = time.perf_counter()
    seconds["tree+decide+generate+apply"] = round(t2 - t1, 1)
    rerun = ""
    if not res.apply_error:
        res.rerun_patches, rerun = replay.generate(tree, base / "rerun", opts, base / "cache")
    seconds["rerun"] = round(time.perf_counter() - t2, 1)
    diff = gitutil.git("diff", "-U0", "--no-color", "base", "HEAD", cwd=tree).stdout
    hunks = replay_score.parse_diff(diff)
    sites = []
    for rel, d in decisions["files"].items():
        text = (src / rel).read_text(encoding="utf-8", errors="replace")
        sites += wild_units.sites_of(rel, text, d["findings"], hunks.get(rel, []), d["undecided"])
    splits = wild_units.split_units(sites)
    unmatched = [f"{s.rel}:{s.line} {s.rule}" for s in wild_units.unmatched(sites, hunks)]
    return {
        "files": len(files),
        "files_scanned": decisions["files_scanned"],
        "files_with_findings": decisions["files_with_findings"],
        "files_changed": len(hunks),
        **wild_units.tally(sites),
        "split_units": [asdict(u) for u in splits],
        "sites": [asdict(x) for x in sites],
        "rewritten_not_in_diff": unmatched,
        "crashes": decisions["crashes"] + faults(res.generate_summary),
        "scan_errors": decisions["scan_errors"],
        "checks": checks(res),
        "generate_says": generate_says(res.generate_summary),
        "after_rerun_scan": generate_says(rerun).get("left_after"),
        "generate_summary": res.generate_summary,
        "seconds": seconds,
    }


def failed(r: dict) -> bool:
    c = r["checks"]
    return bool(c["apply_error"] or c["prefix_failures"] or c["rerun_patches"] or r["crashes"])


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--set",
        choices=list(SETS),
        default="tuned",
        help="the projects the codemod was tuned on (default), the held-out ones, or all",
    )
    ap.add_argument(
        "--projects",
        help=f"comma-separated, of {', '.join(PROJECTS)} (instead of --set)",
    )
    ap.add_argument(
        "--keep", type=Path, metavar="DIR", help="work in DIR (trees, series) and keep it"
    )
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write the results as JSON")
    ap.add_argument("--plain", action="store_true", help="plain text even when rich is installed")
    ap.add_argument(
        "--torch-floor",
        default="auto",
        help="generate's --torch-floor (default auto: each project's declared torch; none: "
        "rewrite as for the newest torch)",
    )
    ap.add_argument(
        "--project",
        type=Path,
        default=REPO,
        help="the hwneutral checkout whose patches.generate runs (default: this one)",
    )
    opts = ap.parse_args(argv)
    chosen = opts.projects.split(",") if opts.projects else SETS[opts.set]
    opts.keys = [k.strip() for k in chosen if k.strip()]
    unknown = [k for k in opts.keys if k not in PROJECTS]
    if unknown or not opts.keys:
        ap.error(f"--projects: unknown {unknown}; known: {', '.join(PROJECTS)}")
    opts.unsafe = True  # replay.generate's flag
    return opts


def main(argv=None) -> int:
    opts = parse_args(argv)
    results, broken = [], {}  # broken: a project whose generate or git failed, and why
    with tempfile.TemporaryDirectory(prefix="hn-wild-") as tmp:
        work = opts.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for key in opts.keys:
            try:
                results.append(run_project(key, opts, work))
            except FetchError as e:
                print(f"wild_scripts: {key}: {e}", file=sys.stderr)
                return 2
            except (RuntimeError, gitutil.GitError) as e:  # the other projects still run
                print(f"wild_scripts: {key}: {e}", file=sys.stderr)
                broken[key] = str(e)
    wild_report.show(results, opts.plain)
    for key, why in broken.items():
        print(f"\n{key}: NOT MEASURED: {why}")
    if opts.json:
        opts.json.write_text(json.dumps({"projects": results, "broken": broken}, indent=1))
    return 1 if broken or any(failed(r) for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
