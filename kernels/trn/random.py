"""RNG API of torch.trn, over the native per-device generators (c10 GeneratorImpl)."""

from __future__ import annotations

import torch

from . import _core
from .runtime import _index, device_count


def default_generator(device=None) -> torch.Generator:
    return _core.native().default_generator(_index(device))


def manual_seed(seed: int, device=None) -> None:
    default_generator(device).manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for i in range(device_count()):
        default_generator(i).manual_seed(int(seed))


def seed() -> int:
    return default_generator().seed()


def seed_all() -> None:
    s = default_generator(0).seed()
    for i in range(1, device_count()):
        default_generator(i).manual_seed(s)


def initial_seed() -> int:
    return default_generator().initial_seed()


def get_offset(device=None) -> int:
    """Raises: the trn generator is a Mersenne Twister engine, which has no Philox offset."""
    return default_generator(device).get_offset()


def set_offset(offset: int, device=None) -> None:
    """Raises, as get_offset."""
    default_generator(device).set_offset(int(offset))


def get_rng_state(device=None) -> torch.Tensor:
    return default_generator(device).get_state()


def set_rng_state(state: torch.Tensor, device=None) -> None:
    default_generator(device).set_state(state)


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(states) -> None:
    for i, s in enumerate(states):
        set_rng_state(s, i)
