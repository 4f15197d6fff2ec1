"""A series that edits upstream's op database is also checked by the OpInfos' own checks
(``patches.matrix.inputs``): the installed file and the file as the series leaves it, every
sample against CPU and every error input against the error it names, on each device."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from patches.matrix import inputs
from patches.prove.config import ProveError

OP_DB = "torch/testing/_internal/common_methods_invocations.py"


class OpDatabaseError(ProveError):
    """The series does not apply to the installed op database, or leaves it unparseable."""


def touches(series: Path) -> bool:
    return any(f"+++ b/{OP_DB}" in p.read_text(errors="replace") for p in _patches(series))


def _patches(series: Path) -> list[Path]:
    return sorted(series.glob("*.patch"))


def check_op_database(site: Path, series: Path, devices: list[str]) -> dict | None:
    """The ``patches.matrix.inputs`` report for ``series`` on the op database under ``site``
    (the folder holding ``torch``), or None when the series leaves that file alone."""
    if not touches(series):
        return None
    with tempfile.TemporaryDirectory(prefix="hn-opdb-") as tmp:
        after = Path(tmp) / "after"
        (after / OP_DB).parent.mkdir(parents=True)
        shutil.copy(site / OP_DB, after / OP_DB)
        for patch in _patches(series):
            proc = subprocess.run(
                ["git", "apply", f"--include={OP_DB}", str(patch)],
                cwd=after,
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                raise OpDatabaseError(f"{patch.name} does not apply to {OP_DB}: {proc.stderr}")
        try:
            return inputs.check(site / OP_DB, after / OP_DB, devices, "float32,bool")
        except inputs.InputsError as e:
            raise OpDatabaseError(str(e)) from None
