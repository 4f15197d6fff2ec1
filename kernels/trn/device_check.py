"""The aten ops whose CUDA kernels check that all their tensors are on one device.

torchgen generates a device check into every CUDA kernel wrapper (`check_and_update_common_device`
over the out and positional tensor arguments) unless the op says `device_check: NoCheck` in
native_functions.yaml; TensorIterator ops (add, mul, where, lerp, ...) say it, so a 0-dim cpu
tensor is a scalar operand for them on CUDA, and refused with "Expected all tensors to be on the
same device" for the rest (index_select, clamp.Tensor, searchsorted, the structured *_backward
ops, ...). trn takes the same list from the installed torch's own yaml (shipped in its wheel as
torchgen/packaged), so the two cannot drift. The derived names are cached per torch build.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import torch


def _yaml_path() -> Path:
    import torchgen

    return Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"


def _dispatch_keys(entry: dict) -> set[str]:
    return {k.strip() for keys in entry.get("dispatch", {}) for k in keys.split(",")}


def derive(entries: list[dict]) -> list[str]:
    """`name.overload` of every op with a dense CUDA kernel (its own, or through the out= op it
    is a structured delegate of) and no `device_check: NoCheck`."""
    by_name = {e["func"].split("(", 1)[0]: e for e in entries}
    checked = []
    for e in entries:
        name = e["func"].split("(", 1)[0]
        if e.get("device_check") == "NoCheck":
            continue
        cuda = "CUDA" in _dispatch_keys(e)
        delegate = e.get("structured_delegate")
        if not cuda and delegate:
            cuda = "CUDA" in _dispatch_keys(by_name.get(delegate, {}))
        if cuda:
            checked.append(name)
    return sorted(checked)


def _cache_file() -> Path:
    from .build import cache_root

    key = hashlib.sha256(f"{torch.__version__}\0{torch.version.git_version}".encode()).hexdigest()
    return cache_root() / f"cuda-device-checked-{key[:16]}.txt"


def checked_ops() -> list[str]:
    """The list for the installed torch: from the cache, else derived (~0.3 s) and cached."""
    cache = _cache_file()
    try:
        return cache.read_text().split()
    except OSError:
        pass
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(_yaml_path()) as fh:
        names = derive(yaml.load(fh, Loader=loader))
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text("\n".join(names) + "\n")
        os.replace(tmp, cache)
    except OSError:
        pass  # a read-only home: derive again next time
    return names


def install(core) -> int:
    """Hands the list to the boxed fallback; returns its length."""
    names = checked_ops()
    core.set_device_checked_ops(names)
    return len(names)
