"""A shadow of installed packages: patch the installed torch without touching it.

``build_shadow(site, dest, paths)`` makes ``dest`` a tree that mirrors ``site`` (a site-packages
folder) with symbolic links, except along the way to each path in ``paths``: those folders are
real, and the files themselves are real copies, ready to be patched. Put ``dest`` first on
``PYTHONPATH`` and ``import torch`` loads the shadow: unpatched modules and the native libraries
through the links, patched modules from the copies. Only the top-level entries that ``paths``
reach are mirrored, so an untouched package still comes from ``site``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath
from typing import Iterable


class ShadowError(ValueError):
    pass


def installed_site(package: str = "torch") -> Path:
    """The folder the installed ``package`` lives in (its site-packages)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ShadowError(f"{package} is not installed as a package")
    return Path(list(spec.submodule_search_locations)[0]).resolve().parent


def _check(rel: str) -> PurePosixPath:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise ShadowError(f"refusing path outside the shadow: {rel!r}")
    return p


def build_shadow(site: Path, dest: Path, paths: Iterable[str]) -> list[str]:
    """Mirror ``site`` into ``dest`` as links, with real folders/files along ``paths``.

    Returns the paths that exist in ``site`` (copied as real files); paths that do not exist
    there (new files a patch will create) get real parent folders where those exist.
    """
    site, dest = Path(site).resolve(), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    copied = []
    for rel in paths:
        p = _check(rel)
        if not (site / p.parts[0]).exists():
            continue  # not an installed package: nothing to shadow for this path
        # make every ancestor a real folder whose other entries are links
        for depth in range(1, len(p.parts)):
            src_dir, dst_dir = site.joinpath(*p.parts[:depth]), dest.joinpath(*p.parts[:depth])
            if dst_dir.is_symlink():
                dst_dir.unlink()  # a link made while mirroring the parent: make it real
            elif dst_dir.is_dir():
                continue
            if not src_dir.is_dir():
                dst_dir.mkdir(parents=True, exist_ok=True)  # a new package the patch creates
                continue
            dst_dir.mkdir()
            for entry in os.scandir(src_dir):
                if entry.name == "__pycache__":
                    continue  # compiled files must follow the (possibly patched) sources
                os.symlink(entry.path, dst_dir / entry.name)
        src, dst = site.joinpath(*p.parts), dest.joinpath(*p.parts)
        if dst.is_symlink():
            dst.unlink()
        if src.is_file():
            shutil.copy2(src, dst)
            copied.append(rel)
    return copied
