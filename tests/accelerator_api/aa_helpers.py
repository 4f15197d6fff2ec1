"""Subprocess helpers: any test that registers a device runs it in its own process."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = Path(__file__).resolve().parent / "apps"
PLUGIN_MISSING = 3  # the autoport runner's exit code when an --import plugin fails


def run_py(args, env=None, timeout=240):
    """Run `python ARGS` from the repo root; returns the CompletedProcess (text)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("HN_AUTOPORT")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def last_json(stdout: str):
    return json.loads(stdout.strip().splitlines()[-1])
