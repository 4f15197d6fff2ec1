"""Make the registered `trn` device behave like Trainium (called once from register()).

Reads the environment (the policy modules in kernels/trainium/ document the variables), then:
sets the device count and each device's HBM capacity and properties, hands the dtype table to the
native core, makes bf16 the autocast default, and installs the opt-in numerics kernels and the
stream sanitizer. ``state()`` returns what was applied.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from kernels.trainium import topology as topo_mod
from kernels.trainium.dtype_policy import FALLBACK, DtypePolicy
from kernels.trainium.numerics import ENV_MATMUL_BF16, StochasticRounding, env_flag
from kernels.trainium.sanitizer import ENV_SANITIZER


@dataclass
class State:
    topology: topo_mod.Topology
    dtypes: DtypePolicy
    rounding: StochasticRounding
    matmul_bf16: bool
    sanitizer: object | None = None


_state: State | None = None


def state() -> State:
    if _state is None:
        raise RuntimeError("trn is not registered yet (import kernels.trn)")
    return _state


def reseed_stochastic_rounding(seed: int | None = None) -> None:
    """Restart the SR stream (at NEURON_RT_STOCHASTIC_ROUNDING_SEED, or ``seed``)."""
    state().rounding.reseed(seed)


def _env_for_topology() -> dict[str, str]:
    env = dict(os.environ)
    # The core's own device-count knob acts as NEURON_RT_NUM_CORES when no Neuron var is set.
    if env.get("HN_TRN_DEVICES") and not (
        env.get(topo_mod.ENV_VISIBLE) or env.get(topo_mod.ENV_NUM)
    ):
        env[topo_mod.ENV_NUM] = env["HN_TRN_DEVICES"]
    return env


def apply_topology(core, topo: topo_mod.Topology) -> None:
    from . import properties

    core.set_device_count(topo.device_count)
    for i in range(topo.device_count):
        p = topo.properties(i)
        properties.set_properties(
            i,
            name=p.name,
            total_memory=p.total_memory,
            core_version=p.core_version,
            neuron_core_id=p.neuron_core_id,
            physical_cores=p.physical_cores,
            logical_cores_per_chip=p.logical_cores_per_chip,
            sbuf_bytes=p.sbuf_bytes,
            psum_bytes=p.psum_bytes,
        )


def apply_dtype_policy(core, policy: DtypePolicy) -> None:
    dtypes = sorted(policy.unsupported, key=str)
    messages = [str(policy.error(d, "{op}")) for d in dtypes]
    core.set_dtype_policy(dtypes, [FALLBACK[d] for d in dtypes], messages, policy.mode == "strict")


def _print_without_float64(name: str) -> None:
    """Tensor printing measures floats in float64; like MPS/MAIA upstream, use float32 on trn."""
    import torch._tensor_str as tensor_str

    upstream = tensor_str.tensor_totype

    def tensor_totype(t):
        return t.to(dtype=torch.float) if t.device.type == name else upstream(t)

    tensor_str.tensor_totype = tensor_totype


def install(core, name: str) -> State | None:
    """Apply the Trainium behaviour to the freshly registered backend ``name``.

    ``HN_TRN_TRAINIUM=0`` skips it all (the plain emulator; tests/benchmarks/bench_device.py
    compares both)."""
    global _state
    if os.environ.get("HN_TRN_TRAINIUM", "").strip() == "0":
        return None  # plain emulator: no topology, dtype or numerics policy (benchmark baseline)
    topo = topo_mod.from_env(_env_for_topology())
    apply_topology(core, topo)
    policy = DtypePolicy.from_env(topo.preset.name)
    apply_dtype_policy(core, policy)
    if torch.float64 in policy.unsupported:
        from . import grad_scaler

        _print_without_float64(name)
        grad_scaler.install(name)  # unscale_ in float32, like upstream does for MPS
    torch.set_autocast_dtype(name, torch.bfloat16)
    rounding = StochasticRounding.from_env()
    matmul_bf16 = env_flag(os.environ, ENV_MATMUL_BF16)
    _state = State(topo, policy, rounding, matmul_bf16)
    if rounding.enabled or matmul_bf16:
        from kernels.trainium import numerics_ops

        numerics_ops.install(_state)
    from kernels.trainium import harness

    harness.install_import_hook(policy.unsupported)
    if env_flag(os.environ, ENV_SANITIZER):
        from kernels.trainium import sanitizer_mode

        _state.sanitizer = sanitizer_mode.enable(core)
    return _state
