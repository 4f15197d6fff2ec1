"""A shadow of installed packages: patch the installed torch without touching it.

``build_shadow(site, dest, paths)`` makes ``dest`` a tree that mirrors ``site`` (a site-packages
folder) with symbolic links, except along the way to each path in ``paths``: those folders are
real, and the files themselves are real copies, ready to be patched. Put ``dest`` first on
``PYTHONPATH`` and ``import torch`` loads the shadow: unpatched modules and the native libraries
through the links, patched modules from the copies. Only the top-level entries that ``paths``
reach are mirrored, so an untouched package still comes from ``site``.

In each real folder, ``__pycache__`` is a real folder too, holding links to ``site``'s compiled
files of the modules that are still links there (Python checks them against the linked source's
mtime and size, as in ``site``); a copied, patchable module gets none, so it is compiled from its
source. Without them every run compiled torch's top-level modules again (~0.5 s CPU per run).
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
    for dst_dir in sorted(real_dirs(dest)):
        link_compiled(site / dst_dir.relative_to(dest), dst_dir)
    return copied


def real_dirs(dest: Path):
    """The real (not linked) folders of a shadow, ``dest`` itself excluded."""
    for root, dirs, _files in os.walk(dest):  # os.walk does not follow the links
        for d in dirs:
            path = Path(root) / d
            if d != "__pycache__" and not path.is_symlink():
                yield path


def link_compiled(src_dir: Path, dst_dir: Path) -> None:
    """Links in ``dst_dir/__pycache__`` to ``src_dir``'s compiled files of the modules that are
    links in ``dst_dir`` (never of a copied module, which a patch may change within the same
    second and size as the original: a compiled file must follow its source)."""
    cache = src_dir / "__pycache__"
    if not cache.is_dir():
        return
    out = dst_dir / "__pycache__"
    for entry in os.scandir(cache):
        module = entry.name.split(".", 1)[0]  # NAME.cpython-311[.opt-1].pyc
        if not entry.name.endswith(".pyc") or not (dst_dir / f"{module}.py").is_symlink():
            continue
        out.mkdir(exist_ok=True)
        if not (out / entry.name).exists():
            os.symlink(entry.path, out / entry.name)
