"""Wall and CPU time of a ``--devices cpu,trn`` validation of the installed torch (issue 19).

    .venv/bin/python tests/benchmarks/bench_validate.py [--baseline REV] [--repeat N]

In one go, on one box: the direct pytest runs of the test file on cpu and on trn (the
bootstrap, as patches.validate runs them, minus the validation), then

    python -m patches.validate --tree installed --series S --devices cpu,trn \\
        --tests FILE --no-coverage [-j J]

for each ``--jobs`` value asked for (default: ``auto`` and ``1``), and with ``--baseline REV``
the same command from REV's ``patches/`` (``git archive``; kernels/ stays this checkout's), the
code before a change measured beside it. S is the behaviour-preserving one-hunk series of
tests/validate/test_prove.py (``neutral_series``). Each figure is the median over ``--repeat``
rounds (each round runs every configuration once, so a change of load hits all of them), with
the CPU time of the whole process tree (user + sys of the reaped children), which a loaded box
disturbs far less than wall time, and ``uptime``'s load average before and after. Ratios are
against the direct trn run and against the sum of the four direct runs (cpu and trn, before and
after) that the validation consists of. Target (issue 19): the cpu,trn validation of
test_dlpack.py in under 30 s on the 2-core box when idle.

The code measured is the checkout the script lives in (it goes first on PYTHONPATH, kernels/
included), and one untimed trn boot comes first, so a pending build of the trn native core is
never part of a figure. To measure a commit while others edit the shared checkout:
``git archive REV | tar -x -C DIR`` and run ``DIR/tests/benchmarks/bench_validate.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
UPSTREAM = REPO.parent / "shared" / "upstream" / "pytorch-tests"
BOOT = REPO / "patches" / "common" / "device_boot.py"


def load() -> str:
    """uptime's load averages (1, 5, 15 min)."""
    return ", ".join(Path("/proc/loadavg").read_text().split()[:3])


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float, str]:
    """(wall s, CPU s of the process tree, stderr tail) of one command; fails loudly."""
    t0, c0 = time.monotonic(), children_cpu()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall, cpu = time.monotonic() - t0, children_cpu() - c0
    # pytest exits 1 when tests fail (test_dlpack.py has failures on both devices, before and
    # after alike); anything else is a broken measurement
    if proc.returncode not in (0, 1):
        sys.exit(
            f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"
        )
    return wall, cpu, proc.stderr


def neutral_series(folder: Path) -> Path:
    spec = importlib.util.spec_from_file_location(
        "_bench_prove", REPO / "tests" / "validate" / "test_prove.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.neutral_series(folder)


def baseline_tree(rev: str, dest: Path) -> Path:
    """REV's ``patches/`` package alone, extracted into ``dest``; a folder holding a
    ``patches/`` package (an export made beforehand) is used as it is."""
    if (Path(rev) / "patches" / "__init__.py").is_file():
        return Path(rev).resolve()
    blob = subprocess.run(
        ["git", "archive", "--format=tar", rev, "patches"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", default=str(UPSTREAM / "test_dlpack.py"))
    ap.add_argument("--jobs", default="auto,1", help="comma list of -j values (default auto,1)")
    ap.add_argument(
        "--baseline",
        help="also time this git revision's patches.validate (or a folder holding its patches/)",
    )
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    py = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="bench-validate-"))
    series = neutral_series(tmp / "series")
    test = Path(a.tests).resolve()
    direct = {
        f"direct {dev}": (
            [py, str(BOOT), dev, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
            REPO,
        )
        for dev in ("cpu", "trn")
    }
    validate_args = [
        "-m",
        "patches.validate",
        "--tree",
        "installed",
        "--series",
        str(series),
        "--devices",
        "cpu,trn",
        "--tests",
        str(test),
        "--no-coverage",
        "--format",
        "json",
    ]
    configs = dict(direct)
    for j in a.jobs.split(","):
        configs[f"validate -j {j}"] = ([py, *validate_args, "-j", j], REPO)
    if a.baseline:
        old = baseline_tree(a.baseline, tmp / "baseline")
        configs[f"validate @ {a.baseline}"] = ([py, *validate_args], old)
    # the code measured is this checkout's (kernels/ too, whatever else is installed editable)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    # not timed: a trn boot first, so a pending build of the native core (kernels/csrc
    # changed since the last build) is not measured as part of whichever run comes first
    timed([py, str(BOOT), "trn", "--probe"], REPO, env)
    print(
        f"bench_validate: {test.name}, {len(os.sched_getaffinity(0))} cores, {args_line(a)}",
        flush=True,
    )
    load0 = load()
    walls: dict[str, list[float]] = {k: [] for k in configs}
    cpus: dict[str, list[float]] = {k: [] for k in configs}
    runs: dict[str, list[str]] = {}
    for i in range(a.repeat):
        for name, (cmd, cwd) in configs.items():
            w, c, err = timed(cmd, cwd, env)
            walls[name].append(w)
            cpus[name].append(c)
            runs[name] = [ln.strip() for ln in err.splitlines() if ln.startswith("  ")]
            print(
                f"  round {i + 1}: {name}: {w:.1f} s wall, {c:.1f} s CPU (load {load()})",
                flush=True,
            )
    load1 = load()
    med = {k: statistics.median(v) for k, v in walls.items()}
    cmed = {k: statistics.median(v) for k, v in cpus.items()}
    four = 2 * (med["direct cpu"] + med["direct trn"])
    four_cpu = 2 * (cmed["direct cpu"] + cmed["direct trn"])
    print(f"\nload average (1, 5, 15 min): {load0} before, {load1} after")
    print("| run | wall | x direct trn | x 4 direct runs | CPU | CPU x 4 direct |")
    print("|---|---:|---:|---:|---:|---:|")
    for k in configs:
        print(
            f"| {k} | {med[k]:.1f} s | {med[k] / med['direct trn']:.2f} | {med[k] / four:.2f} "
            f"| {cmed[k]:.1f} s | {cmed[k] / four_cpu:.2f} |"
        )
    for k, lines in runs.items():
        if lines:
            print(f"{k}: " + "; ".join(lines))
    print(json.dumps({"wall_s": med, "cpu_s": cmed, "load": [load0, load1]}))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def args_line(a) -> str:
    return f"jobs {a.jobs}, baseline {a.baseline or '-'}, repeat {a.repeat}"


if __name__ == "__main__":
    sys.exit(main())
