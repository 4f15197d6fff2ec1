"""Small wrappers around the real ``git`` binary: dirty checks, throwaway repos, ``git am``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# A fixed identity and dates so throwaway repos are reproducible and never read user config.
_ENV = {
    "GIT_AUTHOR_NAME": "hwneutral",
    "GIT_AUTHOR_EMAIL": "hwneutral@localhost",
    "GIT_COMMITTER_NAME": "hwneutral",
    "GIT_COMMITTER_EMAIL": "hwneutral@localhost",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


class GitError(RuntimeError):
    pass


def git(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, **_ENV}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if check and proc.returncode:
        raise GitError(
            f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc


def repo_root(path: Path) -> Path | None:
    """The work tree containing ``path``, or None when it is not inside a git repository."""
    start = path if path.is_dir() else path.parent
    proc = git("rev-parse", "--show-toplevel", cwd=start, check=False)
    return Path(proc.stdout.strip()) if proc.returncode == 0 else None


def dirty_paths(path: Path) -> list[str]:
    """Modified, staged or untracked files under ``path`` (empty when clean or not in git)."""
    root = repo_root(path)
    if root is None:
        return []
    rel = os.path.relpath(path.resolve(), root.resolve())
    proc = git("status", "--porcelain", "--untracked-files=all", "--", rel, cwd=root)
    return [ln[3:] for ln in proc.stdout.splitlines() if ln.strip()]


def init_copy(src: Path, dst: Path, ignore=None) -> Path:
    """Copy ``src`` to ``dst`` (a new directory), make it a git repo and commit everything."""
    shutil.copytree(src, dst, symlinks=True, ignore=ignore)
    git("init", "-q", cwd=dst)
    git("add", "-A", "-f", ".", cwd=dst)
    git("commit", "-q", "--no-verify", "-m", "base", cwd=dst)
    return dst


def am(repo: Path, patches: list[Path]) -> None:
    """Apply ``patches`` in order with ``git am``; no fuzz (git am never fuzzes) and no 3-way.

    ``--keep-non-patch`` keeps the ``[hw-neutral]`` tag in the subject; ``--keep-cr`` keeps the
    CRs of CRLF files (mailsplit strips them otherwise, exactly as for real format-patch output).
    """
    if not patches:
        return
    proc = git(
        "am",
        "--keep-non-patch",
        "--keep-cr",
        "--whitespace=nowarn",
        *map(str, patches),
        cwd=repo,
        check=False,
    )
    if proc.returncode:
        git("am", "--abort", cwd=repo, check=False)
        raise GitError(f"git am failed: {proc.stdout.strip()} {proc.stderr.strip()}")


def log_subjects(repo: Path, count: int) -> list[str]:
    if count == 0:
        return []
    proc = git("log", f"-{count}", "--reverse", "--format=%s", cwd=repo)
    return proc.stdout.splitlines()
