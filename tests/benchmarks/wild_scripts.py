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
from dataclasses import asdict, dataclass
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

from patches.common import gitutil  # noqa: E402


@dataclass(frozen=True)
class Project:
    name: str  # on PyPI
    version: str
    sdist: tuple[str, str]  # (filename, sha256)
    folders: tuple[str, ...]  # under the sdist's top folder; "src=dst" moves src to dst
    held_out: bool = False  # measured at first contact: the codemod was never tuned on it


PROJECTS = {
    "ignite": Project(
        "pytorch-ignite",
        "0.5.5",
        (
            "pytorch_ignite-0.5.5.tar.gz",
            "2c14de75c939a3cc06d2e7de00b1e0a261917ef9bd874dac2e69d789dfa9cc64",
        ),
        ("examples", "pyproject.toml"),
    ),
    "fairscale": Project(
        "fairscale",
        "0.4.13",
        (
            "fairscale-0.4.13.tar.gz",
            "1b797825c427f5dba92253fd0d8daa574e8bd651a2423497775fab1b30cfb768",
        ),
        ("benchmarks", "pyproject.toml", "setup.cfg", "requirements.txt"),
    ),
    "fairseq": Project(
        "fairseq",
        "0.12.2",
        (
            "fairseq-0.12.2.tar.gz",
            "34f1b18426bf3844714534162f065ab733e049597476daa35fffb4d06a92b524",
        ),
        ("fairseq/examples=examples", "fairseq_cli", "setup.cfg"),
    ),
    # held out (round 22): first measured before any change made for them
    "opacus": Project(
        "opacus",
        "1.6.0",
        (
            "opacus-1.6.0.tar.gz",
            "20d77252c1e8528cd5826fbaba345cd39ed5c3edb841707eafb6403fe276140a",
        ),
        ("examples", "benchmarks", "setup.cfg", "requirements.txt"),
        held_out=True,
    ),
    "timm": Project(
        "timm",
        "1.0.31",
        (
            "timm-1.0.31.tar.gz",
            "baa0b333339c46d3d6d4965d99b69f5053afed71210e8f433d7ea5ee6a18f0ec",
        ),
        ("tests", "pyproject.toml"),
        held_out=True,
    ),
    "peft": Project(
        "peft",
        "0.21.2",
        (
            "peft-0.21.2.tar.gz",
            "b803ccfb3f3f316004d850284306687833a2235ea278fb56abc856203456142e",
        ),
        ("tests", "pyproject.toml", "setup.cfg", "setup.py"),
        held_out=True,
    ),
    "accelerate": Project(
        "accelerate",
        "1.16.0",
        (
            "accelerate-1.16.0.tar.gz",
            "43c446b9affb145220946a63fe32e14e968fcfca645d25b5f1f3fdbc375657ae",
        ),
        (
            "src/accelerate/test_utils/scripts=scripts",
            "tests",
            "pyproject.toml",
            "setup.cfg",
            "setup.py",
        ),
        held_out=True,
    ),
    "deepspeed": Project(
        "deepspeed",
        "0.19.8",
        (
            "deepspeed-0.19.8.tar.gz",
            "9e491abd0827ea5c389dd702e15e11e13d83d904bac4a20d6c2a4cb37207a9af",
        ),
        ("benchmarks", "bin", "setup.cfg", "requirements"),
        held_out=True,
    ),
    # held out (round 23): first measured before any change made for them
    "espnet": Project(
        "espnet",
        "202611",
        (
            "espnet-202611.tar.gz",
            "eb5816c4d2e4a18eaa2afacc2f8cf74f93e5534dec0fdcee0b2c89b6f7ddd1fd",
        ),
        ("egs2", "utils", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "gpytorch": Project(
        "gpytorch",
        "1.15.2",
        (
            "gpytorch-1.15.2.tar.gz",
            "380625e93f851b85f772b25c5fb0a6c6d2e3eb2ef667f1e566ab4f95b8775361",
        ),
        ("test", "examples", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "litgpt": Project(
        "litgpt",
        "0.5.13",
        (
            "litgpt-0.5.13.tar.gz",
            "77be78814d0334e8e32ee6dac417e9718ebad45529458995ca255af24cf15cf3",
        ),
        ("tests", "pyproject.toml"),
        held_out=True,
    ),
    # held out (round 24): libraries people import, measured at first contact
    "skorch": Project(
        "skorch",
        "1.4.0",
        (
            "skorch-1.4.0.tar.gz",
            "f7a5d3c13a3aecf0a0fe689ff25188be1145a95268f8fe81f01aaa9fbd7cead1",
        ),
        ("skorch", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "monai": Project(
        "monai",
        "1.6.1",
        (
            "monai-1.6.1.tar.gz",
            "e24ae4bb944f1779b7a6445acc4ff2efd9cc504d05dffe2498c49af117350136",
        ),
        ("monai", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "pyg": Project(
        "torch-geometric",
        "2.8.1",
        (
            "torch_geometric-2.8.1.tar.gz",
            "3d4431567fcf4865a29cfec25c52484382dd38fd46a45fb4f9d473545d64b812",
        ),
        ("torch_geometric", "pyproject.toml"),
        held_out=True,
    ),
    "mmengine": Project(
        "mmengine",
        "0.10.7",
        (
            "mmengine-0.10.7.tar.gz",
            "d20ffcc31127567e53dceff132612a87f0081de06cbb7ab2bdb7439125a69225",
        ),
        ("mmengine", "setup.cfg"),
        held_out=True,
    ),
    # held out (round 25): what people run to train and serve (a detector's CLI, a trainer, a
    # diffusion library, an embedding library), measured at first contact
    "ultralytics": Project(
        "ultralytics",
        "8.4.190",
        (
            "ultralytics-8.4.190.tar.gz",
            "c7a0ebb21d10f1de98682b6a4dc22bc0d1d0634b9398c086bd03b1e5bf40cbc3",
        ),
        ("ultralytics", "tests", "pyproject.toml"),
        held_out=True,
    ),
    "lightning": Project(
        "lightning",
        "2.6.6",
        (
            "lightning-2.6.6.tar.gz",
            "1c6329e241f8a85f29fedead89c1ee138b36caa08de60c260c6a7eaee81c8295",
        ),
        ("src/lightning=lightning", "pyproject.toml", "requirements"),
        held_out=True,
    ),
    "diffusers": Project(
        "diffusers",
        "0.42.1",
        (
            "diffusers-0.42.1.tar.gz",
            "ce855ab670c8cd1c7a61be8f12fbc68c081bca8ec5e747273946d8d6c2aff23b",
        ),
        ("src/diffusers=diffusers", "tests", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "sentence-transformers": Project(
        "sentence-transformers",
        "6.3.0",
        (
            "sentence_transformers-6.3.0.tar.gz",
            "a19acbf76a958817136ee4e89f90b483255d77f3dc9a7309814f7600592c450e",
        ),
        ("sentence_transformers", "tests", "pyproject.toml"),
        held_out=True,
    ),
    # held out (round 26): a CLIP trainer's CLI, an RL library, a fine-tuning library and its
    # CLI scripts, a vision library with its benchmarks, measured at first contact
    "open_clip": Project(
        "open_clip_torch",
        "3.3.0",
        (
            "open_clip_torch-3.3.0.tar.gz",
            "904b1a9f909df8281bb3de60ab95491cd2994a509177ea4f9d6292a84fe24d6d",
        ),
        (
            "src/open_clip=open_clip",
            "src/open_clip_train=open_clip_train",
            "tests",
            "pyproject.toml",
        ),
        held_out=True,
    ),
    "stable-baselines3": Project(
        "stable-baselines3",
        "2.9.2",
        (
            "stable_baselines3-2.9.2.tar.gz",
            "8af267e9513343f481b3f0680b7740ad79a746873db24f18a9fb2edcbd9a2df7",
        ),
        ("stable_baselines3", "tests", "pyproject.toml", "setup.py"),
        held_out=True,
    ),
    "trl": Project(
        "trl",
        "1.16.0",
        (
            "trl-1.16.0.tar.gz",
            "999bd4a85b08870b7bfa387e1efa5177d2a4b88fe82b2526a057ac5d3cc600cd",
        ),
        ("trl", "pyproject.toml", "setup.cfg"),
        held_out=True,
    ),
    "kornia": Project(
        "kornia",
        "0.9.0",
        (
            "kornia-0.9.0.tar.gz",
            "65e82219b10e73289fb8cb3c739879d917e6908c0a977b1d65f388cba1741f71",
        ),
        ("kornia", "benchmarks", "pyproject.toml"),
        held_out=True,
    ),
}
SETS = {
    "tuned": [k for k, p in PROJECTS.items() if not p.held_out],
    "held-out": [k for k, p in PROJECTS.items() if p.held_out],
    "all": list(PROJECTS),
}


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
        "crashes": decisions["crashes"],
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
    results = []
    with tempfile.TemporaryDirectory(prefix="hn-wild-") as tmp:
        work = opts.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for key in opts.keys:
            try:
                results.append(run_project(key, opts, work))
            except FetchError as e:
                print(f"wild_scripts: {key}: {e}", file=sys.stderr)
                return 2
            except (RuntimeError, gitutil.GitError) as e:
                print(f"wild_scripts: {key}: {e}", file=sys.stderr)
                return 1
    wild_report.show(results, opts.plain)
    if opts.json:
        opts.json.write_text(json.dumps({"projects": results}, indent=1))
    return 1 if any(failed(r) for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
