"""A series that edits upstream's op database is also checked by the OpInfos' own checks
(``patches.matrix.inputs``): each edited module of it (``common_methods_invocations.py``, an
``opinfo/definitions`` file) as installed and as the series leaves it, every sample against CPU
and every error input against the error it names, on each device."""

from __future__ import annotations

import fnmatch
import re
import shutil
import tempfile
from pathlib import Path

from patches.common import gitutil
from patches.matrix import inputs
from patches.prove.config import ProveError

OP_DB = "torch/testing/_internal/common_methods_invocations.py"
OP_DB_FILES = (OP_DB, "torch/testing/_internal/opinfo/definitions/*.py")


class OpDatabaseError(ProveError):
    """The series does not apply to the installed op database, or leaves it unparseable."""


def _patches(series: Path) -> list[Path]:
    return sorted(series.glob("*.patch"))


def edited(series: Path) -> list[str]:
    """The op database's files the series edits, in path order."""
    paths = set()
    for patch in _patches(series):
        for m in re.finditer(r"^\+\+\+ b/(\S+)", patch.read_text(errors="replace"), re.M):
            if any(fnmatch.fnmatch(m.group(1), pat) for pat in OP_DB_FILES):
                paths.add(m.group(1))
    return sorted(paths)


def _apply(site: Path, series: Path, rel: str, root: Path) -> Path:
    after = root / rel
    after.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(site / rel, after)
    for patch in _patches(series):
        proc = gitutil.git("apply", f"--include={rel}", str(patch), cwd=root, check=False)
        if proc.returncode != 0:
            raise OpDatabaseError(f"{patch.name} does not apply to {rel}: {proc.stderr}")
    return after


def check_op_database(site: Path, series: Path, devices: list[str]) -> dict | None:
    """The ``patches.matrix.inputs`` reports for ``series`` on the op database under ``site``
    (the folder holding ``torch``): ``{"files": {path: report}, "regressions": [...]}``, or None
    when the series leaves the op database alone."""
    files = edited(series)
    if not files:
        return None
    out: dict = {"files": {}, "regressions": []}
    with tempfile.TemporaryDirectory(prefix="hn-opdb-") as tmp:
        for rel in files:
            after = _apply(site, series, rel, Path(tmp))
            try:
                report = inputs.check(site / rel, after, devices, "float32,bool")
            except inputs.InputsError as e:
                raise OpDatabaseError(f"{rel}: {e}") from None
            out["files"][rel] = report
            out["regressions"] += report["regressions"]
    return out
