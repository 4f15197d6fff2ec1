"""Shared helpers: a git copy of project/ and the patch series for it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).with_name("project")
REPO_ROOT = Path(__file__).resolve().parents[2]
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True
    ).stdout


def make_repo(dest: Path) -> Path:
    shutil.copytree(PROJECT, dest, ignore=shutil.ignore_patterns("__pycache__"))
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "base")
    return dest


def series_from_edit(
    repo: Path, out: Path, edits: dict[str, list[tuple[str, str]]], subject: str
) -> Path:
    """Commit ``edits`` ({path: [(old, new), ...]}) in ``repo``, ``git format-patch`` it into
    ``out`` with a quilt ``series`` file, then drop the commit again (the tree stays as it was)."""
    for rel, subs in edits.items():
        p = repo / rel
        text = p.read_text()
        for old, new in subs:
            assert old in text, (rel, old)
            text = text.replace(old, new)
        p.write_text(text)
    git(repo, "commit", "-q", "-am", subject)
    out.mkdir(parents=True, exist_ok=True)
    names = git(repo, "format-patch", "-1", "-o", str(out)).split()
    (out / "series").write_text("".join(Path(n).name + "\n" for n in names))
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    return out


# The device-generic change to project/, written by hand: the reference a correct generator output
# must match in effect (torch.cuda.is_available -> torch.accelerator.is_available with the device
# taken from the accelerator, onlyCUDA -> onlyAccelerator, .cuda() -> .to(accelerator)).
NEUTRAL_EDITS = {
    "devlib/ops.py": [
        (
            'return "cuda" if torch.cuda.is_available() else "cpu"',
            "return (torch.accelerator.current_accelerator().type\n"
            '            if torch.accelerator.is_available() else "cpu")',
        )
    ],
    "tests/test_scale_device.py": [("onlyCUDA", "onlyAccelerator")],
    "tests/test_move.py": [
        ("not torch.cuda.is_available()", "not torch.accelerator.is_available()"),
        (".cuda()", ".to(torch.accelerator.current_accelerator())"),
    ],
}

# Deliberately wrong: drops the CPU fallback, so pick_device() breaks where no accelerator exists.
WRONG_EDITS = {
    "devlib/ops.py": [
        (
            'return "cuda" if torch.cuda.is_available() else "cpu"',
            "return torch.accelerator.current_accelerator().type",
        )
    ],
}


def generate_series(repo: Path, out: Path) -> tuple[Path | None, str]:
    """The series ``python -m patches.generate`` writes for ``repo`` (None + why when it fails)."""
    proc = subprocess.run(
        [sys.executable, "-m", "patches.generate", str(repo), "--out", str(out), "--unsafe-fixes"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    if proc.returncode == 0 and list(out.glob("*.patch")):
        return out, "patches.generate"
    return None, f"patches.generate rc {proc.returncode}: {proc.stderr.strip()[-300:]}"


def run_validate(*args: str) -> tuple[int, dict, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "patches.validate", "--format", "json", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, report, proc.stderr
