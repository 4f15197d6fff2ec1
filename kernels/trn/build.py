"""Build (or load from cache) the native core in kernels/csrc with torch.utils.cpp_extension.

The cache lives outside the source tree, keyed by what the built core depends on: the sources,
the compile flags, the torch build (version + git revision) and the Python ABI, never by the path
torch is reached through (a shadow tree of links, another venv with the same wheel):
$HN_TRN_BUILD_DIR, else $XDG_CACHE_HOME/hwneutral/trn-<key>, else ~/.cache/hwneutral/trn-<key>.
A finished build leaves a stamp holding its key; with the stamp present the core is imported
directly, without cpp_extension or ninja (whose command lines name torch's include path and
would rebuild under a shadow). Building and loading hold an fcntl lock on the cache folder, so
concurrent processes build once and never read a half-written library.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import os
import shutil
import sys
import sysconfig
from pathlib import Path

import torch

CSRC = Path(__file__).resolve().parent.parent / "csrc"
NAME = "hn_trn_core"
CFLAGS = ["-O2"]
STAMP = "hn-build-key"
LOCK = "hn-build.lock"
# how the last load() got the core: "cache" (stamped build imported directly) or "built"
last_load: str | None = None
loaded_from: Path | None = None  # the cache folder the core was loaded from


class BuildError(RuntimeError):
    """The native core could not be built; the message names what is missing."""


def sources() -> list[Path]:
    return sorted(CSRC.glob("*.cpp"))


def source_hash() -> str:
    """The cache key: sources, flags, torch build and Python ABI; no filesystem path."""
    h = hashlib.sha256()
    for part in (torch.__version__, torch.version.git_version, sys.implementation.cache_tag):
        h.update(str(part).encode() + b"\0")
    h.update(" ".join(CFLAGS).encode() + b"\0")
    for p in sorted(CSRC.glob("*.[ch]*")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def cache_root() -> Path:
    """The device's cache folder: $XDG_CACHE_HOME/hwneutral, else ~/.cache/hwneutral."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hwneutral"


def build_dir() -> Path:
    if os.environ.get("HN_TRN_BUILD_DIR"):
        return Path(os.environ["HN_TRN_BUILD_DIR"])
    return cache_root() / f"trn-{source_hash()}"


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


@contextlib.contextmanager
def locked(out: Path):
    """Exclusive fcntl lock on the cache folder (released by the kernel if the process dies)."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(NAME, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(verbose: bool = False):
    """Return the compiled extension module, building it on first use."""
    global last_load, loaded_from
    key = source_hash()
    out = build_dir()
    lib = out / f"{NAME}{sysconfig.get_config_var('SHLIB_SUFFIX') or '.so'}"
    with locked(out):
        stamp = out / STAMP
        if lib.exists() and stamp.exists() and stamp.read_text().strip() == key:
            last_load, loaded_from = "cache", out
            return _import(lib)
        reason = "no build yet" if not lib.exists() else "sources or torch build changed"
        print(f"trn native core: building in {out} ({reason}; about a minute)", file=sys.stderr)
        stamp.unlink(missing_ok=True)
        # cpp_extension's own lock file, left behind by a build that was killed, would make it
        # wait forever; under our lock no other build of this folder is running
        (out / "lock").unlink(missing_ok=True)
        module = _build(out, verbose)
        stamp.write_text(key + "\n")
        last_load, loaded_from = "built", out
        return module


def real_torch_dir(torch_dir: str) -> str:
    """The installed torch folder behind ``torch_dir``: patches.validate's shadow of torch links
    ``include`` and ``lib`` to it."""
    return str(Path(torch_dir, "include").resolve().parent)


@contextlib.contextmanager
def _real_torch_paths(cpp_extension):
    """Compile against the installed torch's own folders whichever path torch was imported by:
    build.ninja records the -isystem/-L paths, so a build started from a shadow wrote other paths
    into the shared cache folder and ninja recompiled every source for the next process."""
    saved = cpp_extension._TORCH_PATH, cpp_extension.TORCH_LIB_PATH
    real = real_torch_dir(saved[0])
    cpp_extension._TORCH_PATH, cpp_extension.TORCH_LIB_PATH = real, os.path.join(real, "lib")
    try:
        yield
    finally:
        cpp_extension._TORCH_PATH, cpp_extension.TORCH_LIB_PATH = saved


def _build(out: Path, verbose: bool):
    from torch.utils import cpp_extension

    _preflight()
    venv_bin = str(Path(sys.executable).parent)
    if venv_bin not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = venv_bin + os.pathsep + os.environ.get("PATH", "")
    os.environ.setdefault("MAX_JOBS", str(max(1, min(4, os.cpu_count() or 1))))
    try:
        with _real_torch_paths(cpp_extension):
            return cpp_extension.load(
                name=NAME,
                sources=[str(p) for p in sources()],
                extra_cflags=CFLAGS,
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
