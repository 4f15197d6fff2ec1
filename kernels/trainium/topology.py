"""Trainium topology: presets, Neuron runtime env vars, device count and device properties.

Pure Python over the environment; no device needed. One `trn` device is one *logical*
NeuronCore, as the Neuron runtime and torch-neuronx expose them: physical cores are grouped by
the logical-core size (LNC) and the chip's HBM is split evenly between its logical cores.

Env vars (read by :func:`from_env`):
  HN_TRN_PRESET            trn1 | trn2 | trn3 (default trn2)
  HN_TRN_CHIPS             chips in the emulated instance (default: 8 logical cores' worth)
  NEURON_LOGICAL_NC_CONFIG  physical cores per logical core: 1 or 2 (trn1 allows only 1)
  NEURON_RT_VISIBLE_CORES   logical core ids this process reserves: "0-3", "1,5", "0-1,6"
  NEURON_RT_NUM_CORES       how many logical cores to reserve (0 = all)
  HN_TRN_HBM_BYTES         per-device HBM capacity override (tests); accepts 4096, 64MiB, 2GiB
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Mapping

GiB = 1 << 30
MiB = 1 << 20

ENV_PRESET = "HN_TRN_PRESET"
ENV_CHIPS = "HN_TRN_CHIPS"
ENV_HBM = "HN_TRN_HBM_BYTES"
ENV_LNC = "NEURON_LOGICAL_NC_CONFIG"
ENV_VISIBLE = "NEURON_RT_VISIBLE_CORES"
ENV_NUM = "NEURON_RT_NUM_CORES"
DEFAULT_PRESET = "trn2"
# Chips emulated by default: enough for 8 devices at the default LNC (the core's historic count,
# which multi-device tests expect); a real trn1.32xlarge/trn2.48xlarge has 16 chips.
DEFAULT_CHIPS = {"trn1": 4, "trn2": 2, "trn3": 2}

# The native core addresses at most this many devices (kMaxDevices in kernels/csrc/trn.h).
MAX_DEVICES = 64


class TopologyError(ValueError):
    """A preset or Neuron env var that real hardware would refuse, with the reason."""


@dataclass(frozen=True)
class Preset:
    """One Trainium generation (facts and sources: docs/device.md)."""

    name: str
    chip: str
    core_version: str
    physical_cores_per_chip: int
    hbm_bytes_per_chip: int
    default_lnc: int
    allowed_lnc: tuple[int, ...]
    sbuf_bytes_per_core: int
    psum_bytes_per_core: int


PRESETS: dict[str, Preset] = {
    "trn1": Preset("trn1", "Trainium", "NeuronCore-v2", 2, 32 * GiB, 1, (1,), 24 * MiB, 2 * MiB),
    "trn2": Preset("trn2", "Trainium2", "NeuronCore-v3", 8, 96 * GiB, 2, (1, 2), 28 * MiB, 2 * MiB),
    "trn3": Preset(
        "trn3", "Trainium3", "NeuronCore-v4", 8, 144 * GiB, 2, (1, 2), 32 * MiB, 2 * MiB
    ),
}


@dataclass(frozen=True)
class DeviceProperties:
    """What ``torch.trn.get_device_properties(i)`` reports for one logical NeuronCore."""

    index: int  # torch device index (position in the visible list)
    name: str
    core_version: str
    neuron_core_id: int  # logical core id on the instance (NEURON_RT_VISIBLE_CORES space)
    chip_index: int
    physical_cores: int  # physical NeuronCores behind this logical core (= LNC)
    logical_cores_per_chip: int
    physical_cores_per_chip: int
    total_memory: int  # bytes of HBM this device may allocate
    sbuf_bytes: int
    psum_bytes: int

    def __repr__(self) -> str:
        return (
            f"_TrnDeviceProperties(name='{self.name}', total_memory={self.total_memory // MiB}MB, "
            f"core_version='{self.core_version}', physical_cores={self.physical_cores}, "
            f"neuron_core_id={self.neuron_core_id})"
        )


@dataclass(frozen=True)
class Topology:
    """A resolved instance: which logical cores this process sees and how much HBM each has."""

    preset: Preset
    chips: int
    lnc: int
    visible: tuple[int, ...]  # logical core ids, in torch device-index order
    hbm_override: int | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def logical_cores_per_chip(self) -> int:
        return self.preset.physical_cores_per_chip // self.lnc

    @property
    def total_logical_cores(self) -> int:
        return self.chips * self.logical_cores_per_chip

    @property
    def device_count(self) -> int:
        return len(self.visible)

    def hbm_capacity(self, index: int) -> int:
        """Bytes of HBM device ``index`` may hold: its share of the chip, or the override."""
        self._check_index(index)
        if self.hbm_override is not None:
            return self.hbm_override
        return self.preset.hbm_bytes_per_chip // self.logical_cores_per_chip

    def properties(self, index: int) -> DeviceProperties:
        self._check_index(index)
        p = self.preset
        core = self.visible[index]
        return DeviceProperties(
            index=index,
            name=f"{p.chip} {p.core_version} (LNC={self.lnc})",
            core_version=p.core_version,
            neuron_core_id=core,
            chip_index=core // self.logical_cores_per_chip,
            physical_cores=self.lnc,
            logical_cores_per_chip=self.logical_cores_per_chip,
            physical_cores_per_chip=p.physical_cores_per_chip,
            total_memory=self.hbm_capacity(index),
            sbuf_bytes=p.sbuf_bytes_per_core * self.lnc,
            psum_bytes=p.psum_bytes_per_core * self.lnc,
        )

    def _check_index(self, index: int) -> None:
        if not 0 <= index < self.device_count:
            raise IndexError(
                f"trn device index {index} out of range: {self.device_count} visible "
                f"device(s) ({ENV_VISIBLE}={','.join(map(str, self.visible))})"
            )


def parse_core_list(text: str, limit: int) -> tuple[int, ...]:
    """Parse NEURON_RT_VISIBLE_CORES ("3", "0-3", "1,5", "0-1,6") into sorted unique core ids."""
    cores: set[int] = set()
    for part in text.replace(" ", "").split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise TopologyError(
                f"{ENV_VISIBLE}={text!r}: {part!r} is not a core id or range "
                "(expected e.g. '0-3' or '1,5')"
            )
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise TopologyError(f"{ENV_VISIBLE}={text!r}: range {part!r} is empty (end < start)")
        if hi >= limit:
            raise TopologyError(
                f"{ENV_VISIBLE}={text!r}: core {hi} does not exist; this instance "
                f"has logical cores 0-{limit - 1}"
            )
        cores.update(range(lo, hi + 1))
    return tuple(sorted(cores))


def parse_bytes(text: str) -> int:
    """Parse a byte size: 4096, 64MiB, 2GiB, 1.5GB (binary units)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if not m:
        raise TopologyError(f"{ENV_HBM}={text!r}: not a byte size (e.g. 4096, 64MiB, 2GiB)")
    scale = {"": 1, "K": 1 << 10, "M": MiB, "G": GiB, "T": 1 << 40}[m.group(2).upper()]
    return int(float(m.group(1)) * scale)


def _int_env(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise TopologyError(f"{name}={raw!r}: expected an integer") from None


def from_env(env: Mapping[str, str] | None = None) -> Topology:
    """Resolve the topology from ``env`` (default ``os.environ``); raise TopologyError on bad input."""
    env = os.environ if env is None else env
    name = env.get(ENV_PRESET, "").strip().lower() or DEFAULT_PRESET
    if name not in PRESETS:
        raise TopologyError(
            f"{ENV_PRESET}={name!r}: unknown preset; choose one of {', '.join(PRESETS)}"
        )
    preset = PRESETS[name]

    chips = _int_env(env, ENV_CHIPS) or DEFAULT_CHIPS[name]
    if chips < 1:
        raise TopologyError(f"{ENV_CHIPS}={chips}: need at least one chip")

    lnc = _int_env(env, ENV_LNC) or preset.default_lnc
    if lnc not in preset.allowed_lnc:
        raise TopologyError(
            f"{ENV_LNC}={lnc} is not supported on {name} ({preset.core_version}); "
            f"allowed: {', '.join(map(str, preset.allowed_lnc))}"
        )

    total = chips * (preset.physical_cores_per_chip // lnc)
    notes: list[str] = []
    visible_raw = env.get(ENV_VISIBLE, "").strip()
    num = _int_env(env, ENV_NUM)
    if visible_raw:
        visible = parse_core_list(visible_raw, total)
        if num:
            # Assumption (docs/device.md): the explicit core list wins over a bare count.
            notes.append(f"{ENV_NUM}={num} ignored because {ENV_VISIBLE} is set")
            warnings.warn(f"trn: {notes[-1]}", RuntimeWarning, stacklevel=2)
    elif num:
        if num < 0 or num > total:
            raise TopologyError(
                f"{ENV_NUM}={num}: this instance has {total} logical cores "
                f"({chips} x {name} chip, LNC={lnc})"
            )
        visible = tuple(range(num))
    else:
        visible = tuple(range(total))

    if len(visible) > MAX_DEVICES:
        raise TopologyError(
            f"{len(visible)} visible cores, but the emulator holds at most "
            f"{MAX_DEVICES} devices; narrow it with {ENV_VISIBLE} or {ENV_NUM}"
        )

    hbm_raw = env.get(ENV_HBM, "").strip()
    hbm = parse_bytes(hbm_raw) if hbm_raw else None
    return Topology(preset, chips, lnc, visible, hbm, tuple(notes))
