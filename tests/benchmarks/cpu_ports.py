"""Which ported scripts run on a CPU-only machine: the probes of common script lines
(tests/patches/fixtures/probes, one idiom or a few per script, 49 scripts), each ported with
``patches.generate --apply --unsafe-fixes`` and run, original and port, with no GPU visible.

    python tests/benchmarks/cpu_ports.py [--src CHECKOUT] [--target torch|accelerator_api] [--trn] [DIR]

``--src`` ports with another checkout's codemod (its root on ``PYTHONPATH``; e.g. a worktree of
an earlier commit), so two rounds can be compared on the same scripts. Prints one row per script
(exit status of the original and of the port, the port's last error line) and the totals. Each
script runs once with a 120 s limit. A port that runs where its original stops is the aim; which
ones still stop is docs/patches.md's "left" list. ``--trn`` also runs each port on the trn
device (``HN_TRN=1``, 8 devices: every availability check of a port is true there), the
branches a CPU run skips.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBES = ROOT / "tests" / "patches" / "fixtures" / "probes"


def _run(script: Path, env: dict) -> tuple[int, str]:
    try:
        p = subprocess.run(
            [sys.executable, script.name],
            cwd=script.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        return 124, "timed out"
    lines = (p.stderr or "").strip().splitlines()
    return p.returncode, lines[-1][:100] if p.returncode and lines else ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", default=str(PROBES))
    ap.add_argument("--src", default=str(ROOT), help="checkout whose codemod ports the scripts")
    ap.add_argument("--target", default="torch", choices=("torch", "accelerator_api"))
    ap.add_argument("--trn", action="store_true", help="also run each port on trn")
    args = ap.parse_args(argv)
    src = Path(args.src).resolve()
    base = {k: v for k, v in os.environ.items() if k not in ("HN_TRN", "HN_AUTOPORT")}
    env = {**base, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(src)}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "ported"
        shutil.copytree(args.dir, work)
        gen = [sys.executable, "-m", "patches.generate", str(work), "--apply", "--unsafe-fixes"]
        gen += ["--target", args.target, "--force"]
        done = subprocess.run(gen, env=env, cwd=src, capture_output=True, text=True)
        if done.returncode not in (0, 1):
            print(done.stderr[-2000:], file=sys.stderr)
            return 2
        rows, ok, ran, on_trn = [], 0, 0, 0
        for script in sorted(work.glob("*.py")):
            orig, _ = _run(Path(args.dir) / script.name, env)
            port, why = _run(script, env)
            ok += port == 0
            ran += orig == 0
            row = f"{script.name:<18} original {orig:>3}  port {port:>3}"
            if args.trn:
                trn, trn_why = _run(script, {**env, "HN_TRN": "1"})
                on_trn += trn == 0
                row += f"  trn {trn:>3}"
                why = why or (f"trn: {trn_why}" if trn else "")
            rows.append(f"{row}  {why}")
    print("\n".join(rows))
    total = len(rows)
    print(f"{ok}/{total} ports run on the CPU ({ran}/{total} originals do); codemod from {src}")
    if args.trn:
        print(f"{on_trn}/{total} ports run on trn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
