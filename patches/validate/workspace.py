"""The scratch trees of a validation: ``before/`` and ``after/`` from the user's tree, and the
series applied onto ``after/``.

The user's tree is never touched: the workspaces are ``git clone --shared`` of a revision, a copy
when the tree is not a git checkout, or, for ``--tree installed``, a shadow package of the
installed torch plus copies of the test files (see patches.validate.shadow).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from patches.common.gitutil import GitError, dirty_paths, git
from patches.validate import hunks as hunkcov
from patches.validate import selection, shadow
from patches.validate.options import ValidateError, ValidateOptions

PHASES = ("before", "after")
COPY_IGNORE = shutil.ignore_patterns(
    ".git", "__pycache__", ".venv", "venv", ".pytest_cache", "*.egg-info", ".mypy_cache"
)


@dataclass
class Source:
    """Where the workspaces come from: ``kind`` is ``git``, ``copy`` or ``installed``."""

    kind: str
    path: Path | None  # the tree (None for the installed torch)
    rev: str
    test_root: Path | None = None  # installed: the folder the test paths are relative to
    explicit: list[Path] = field(default_factory=list)  # the test files given (--tests)
    test_rels: list[str] = field(default_factory=list)  # the same, relative to the workspace
    warnings: list[str] = field(default_factory=list)

    def label(self, tree: str) -> str:
        return tree if self.kind == "installed" else str(self.path)


def parse_selectors(tests: list[str]) -> dict[str, list[str]]:
    """test file -> the pytest node ids asked for in it (none: the whole file)."""
    selectors: dict[str, list[str]] = {}
    for t in tests:
        f, sep, rest = t.partition("::")
        ids = selectors.setdefault(f, [])
        if sep:
            ids.append(rest)
    return selectors


def resolve_source(opts: ValidateOptions, touched: list[str], explicit: list[Path]) -> Source:
    """The kind of tree and where the given test files lie in the workspaces."""
    if opts.tree == "installed":
        return _installed_source(opts, touched, explicit)
    tree = Path(opts.tree).resolve()
    if not tree.is_dir():
        raise ValidateError(f"--tree {opts.tree}: not a directory")
    src = Source("git" if (tree / ".git").exists() else "copy", tree, opts.rev)
    src.explicit, src.test_rels = explicit, [t.as_posix() for t in explicit]
    if src.kind == "git":
        dirty = dirty_paths(tree)
        if dirty:
            src.warnings.append(
                f"{len(dirty)} uncommitted change(s) in the tree are not part "
                f"of the validation (it uses {opts.rev}), e.g. {dirty[0]}"
            )
    return src


def _installed_source(opts: ValidateOptions, touched: list[str], explicit: list[Path]) -> Source:
    if not explicit and not any(selection.is_test_file(t) for t in touched):
        raise ValidateError("--tree installed has no checkout to search: pass --tests FILE")
    missing = [str(t) for t in explicit if not t.is_file()]
    if missing:
        raise ValidateError(f"test files not found: {', '.join(missing)}")
    troot = Path(opts.test_root).resolve() if opts.test_root else None
    if troot is None and explicit:
        troot = Path(os.path.commonpath([str(t.resolve().parent) for t in explicit]))
        troot = troot.parent if troot.name in ("test", "tests") else troot
    try:
        rels = [t.resolve().relative_to(troot).as_posix() for t in explicit]
    except ValueError:
        raise ValidateError(f"--tests must lie under --test-root {troot}") from None
    return Source("installed", None, opts.rev, troot, explicit, rels)


def make_workspaces(src: Source, work: Path, touched: list[str]) -> dict[str, Path]:
    """``before/`` and ``after/`` under ``work``, both unpatched."""
    ws = {ph: work / ph for ph in PHASES}
    for d in ws.values():
        if d.exists():
            raise ValidateError(f"working folder {d} already exists")
        try:
            make_workspace(src, d, touched)
        except GitError as e:
            raise ValidateError(str(e)) from e
    return ws


def make_workspace(src: Source, dest: Path, shadow_paths: list[str]) -> None:
    """Create one scratch workspace (``before`` or ``after``) from the tree, unpatched."""
    if src.kind == "git":
        git("clone", "-q", "--shared", "--no-checkout", str(src.path), str(dest), cwd=dest.parent)
        git("checkout", "-q", "--detach", src.rev, cwd=dest)
    elif src.kind == "copy":
        shutil.copytree(src.path, dest, symlinks=True, ignore=COPY_IGNORE)
    else:  # installed torch: a shadow package plus copies of the test files
        dest.mkdir()
        shadow.build_shadow(shadow.installed_site(), dest, shadow_paths)
        for t in src.explicit:
            rel = t.resolve().relative_to(src.test_root) if src.test_root else Path(t.name)
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(t, dest / rel)


def apply_series(ws: Path, patches: list[Path], kind: str) -> list[str]:
    """Apply ``patches`` in order onto ``ws``; return warnings. Raises ValidateError on failure."""
    warnings: list[str] = []
    for p in patches:
        text = p.read_text(errors="replace")
        if kind == "git" and text.startswith("From "):
            _git_am(ws, p, text)
            continue
        args = ["apply", "--whitespace=nowarn"]
        if kind == "installed":
            created = set(selection.created_paths(text))
            for rel in selection.touched_paths(text):
                if not (ws / rel).exists() and rel not in created:
                    args.append(f"--exclude={rel}")
                    warnings.append(
                        f"{p.name}: {rel} is neither installed nor given with "
                        f"--tests; that part of the patch is not validated"
                    )
        proc = git(*args, str(p.resolve()), cwd=ws, check=False)
        if proc.returncode:
            out = (proc.stdout + proc.stderr).strip()
            raise ValidateError(
                f"{p.name} does not apply (git apply){failed_hunk(text, out)}: {out}"
            )
    return warnings


def _git_am(ws: Path, patch: Path, text: str) -> None:
    proc = git(
        "am", "--keep-non-patch", "--whitespace=nowarn", str(patch.resolve()), cwd=ws, check=False
    )
    if proc.returncode:
        git("am", "--abort", cwd=ws, check=False)
        out = (proc.stdout + proc.stderr).strip()
        raise ValidateError(f"{patch.name} does not apply (git am){failed_hunk(text, out)}: {out}")


_FAILED_AT = re.compile(r"patch failed: (\S+):(\d+)")
_NO_FILE = re.compile(r"error: (\S+): (?:does not exist in index|No such file or directory)")


def failed_hunk(patch_text: str, git_output: str) -> str:
    """`` at FILE hunk #N (@@ ... @@)`` for git's "patch failed: FILE:LINE" (version skew)."""
    m = _FAILED_AT.search(git_output)
    if m:
        path, line = m.group(1), int(m.group(2))
        mine = [h for h in hunkcov.parse_patch(patch_text) if h.path == path]
        for i, h in enumerate(mine, 1):
            if h.old_start == line:
                return f" at {path} hunk #{i} ({h.header})"
        return f" at {path} line {line}"
    m = _NO_FILE.search(git_output)
    return f" at {m.group(1)} (file not found: version skew?)" if m else ""
