"""Build (or load from cache) the native core in kernels/csrc with torch.utils.cpp_extension.

The cache lives outside the source tree, keyed by a hash of the sources and the torch version:
$HN_TRN_BUILD_DIR, else $XDG_CACHE_HOME/hwneutral/trn-<hash>, else ~/.cache/hwneutral/trn-<hash>.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import sysconfig
from pathlib import Path

import torch

CSRC = Path(__file__).resolve().parent.parent / "csrc"
NAME = "hn_trn_core"


class BuildError(RuntimeError):
    """The native core could not be built; the message names what is missing."""


def sources() -> list[Path]:
    return sorted(CSRC.glob("*.cpp"))


def source_hash() -> str:
    h = hashlib.sha256(torch.__version__.encode())
    for p in sorted(CSRC.glob("*.[ch]*")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build_dir() -> Path:
    if os.environ.get("HN_TRN_BUILD_DIR"):
        return Path(os.environ["HN_TRN_BUILD_DIR"])
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "hwneutral" / f"trn-{source_hash()}"


def _preflight() -> None:
    """Fail with one sentence naming the missing piece instead of a page of compiler output."""
    cxx = os.environ.get("CXX", "c++")
    if shutil.which(cxx) is None:
        raise BuildError(
            f"trn native core: C++ compiler '{cxx}' not found on PATH (install g++ or set CXX)"
        )
    venv_bin = Path(sys.executable).parent
    if shutil.which("ninja") is None and not (venv_bin / "ninja").exists():
        raise BuildError("trn native core: 'ninja' not found (pip install ninja)")
    py_h = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not py_h.exists():
        raise BuildError(f"trn native core: Python header {py_h} missing (install python3-dev)")
    torch_h = Path(torch.__file__).parent / "include" / "torch" / "extension.h"
    if not torch_h.exists():
        raise BuildError(
            f"trn native core: torch header {torch_h} missing (torch wheel without headers?)"
        )


def load(verbose: bool = False):
    """Return the compiled extension module, building it on first use."""
    from torch.utils import cpp_extension

    _preflight()
    out = build_dir()
    out.mkdir(parents=True, exist_ok=True)
    venv_bin = str(Path(sys.executable).parent)
    if venv_bin not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = venv_bin + os.pathsep + os.environ.get("PATH", "")
    os.environ.setdefault("MAX_JOBS", str(max(1, min(4, os.cpu_count() or 1))))
    try:
        return cpp_extension.load(
            name=NAME,
            sources=[str(p) for p in sources()],
            extra_cflags=["-O2"],
            build_directory=str(out),
            verbose=verbose,
        )
    except Exception as exc:  # cpp_extension raises RuntimeError/CalledProcessError with full logs
        text = str(exc)
        missing = [
            ln.strip()
            for ln in text.splitlines()
            if "fatal error" in ln or "No such file" in ln or " error: " in ln
        ]
        hint = (
            missing[0] if missing else text.strip().splitlines()[-1] if text.strip() else repr(exc)
        )
        raise BuildError(f"trn native core failed to build in {out}: {hint}") from exc
