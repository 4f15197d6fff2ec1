"""The port target (the current accelerator, or CPU) and how CUDA device values map onto it."""

from __future__ import annotations

import torch

from .. import runtime


class Target:
    """Filled in by `install()`: `type` is "xpu", "mps", a PrivateUse1 name, or "cpu"."""

    type: str = "cpu"
    is_cpu: bool = True

    @classmethod
    def set(cls, device_type: str) -> None:
        cls.type, cls.is_cpu = device_type, device_type == "cpu"

    @classmethod
    def device(cls, index: int | None = None) -> torch.device:
        """`.cuda()`'s destination: the current device of the target, or device `index`."""
        if cls.is_cpu:
            return torch.device("cpu")
        return torch.device(cls.type, runtime.current_device_index() if index is None else index)


def needs_port(d, ints: bool = False) -> bool:
    """True for "cuda", "cuda:N" and torch.device("cuda"[, N]); ints (device indices) with `ints`
    only when the target is CPU, since torch already resolves ints to the current accelerator."""
    t = type(d)
    if t is str:
        return d == "cuda" or d.startswith("cuda:")
    if t is torch.device:
        return d.type == "cuda"
    return ints and t is int and Target.is_cpu


def port(d):
    """The target equivalent of a value for which `needs_port` is true; str stays str."""
    if Target.is_cpu:
        return "cpu" if type(d) in (str, int) else torch.device("cpu")
    if type(d) is str:
        return Target.type + d[4:]
    if type(d) is int:
        return torch.device(Target.type, d)
    return torch.device(Target.type, d.index) if d.index is not None else torch.device(Target.type)


def port_index(d) -> int | None:
    """A CUDA device argument (None, int, "cuda:N", device) as an index on the target."""
    if d is None or Target.is_cpu:
        return None
    if type(d) is int:
        return d
    return torch.device(port(d) if needs_port(d) else d).index


def show(d) -> str:
    return repr(d) if type(d) is str else str(d) if type(d) is int else f"torch.device({str(d)!r})"
