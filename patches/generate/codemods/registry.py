"""The family registry: every rewrite shape, in dispatch order (the first that answers wins).

A new family is a module of ``families/`` with one ``Family`` subclass (``families/base.py``
documents the protocol), added to ``FAMILY_TYPES`` here; ``targets.family_of`` maps catalogue
rules to family names. Every site any family is offered has passed the intent gate
(``patches.generate.intent.Gate``) first.
"""

from __future__ import annotations

from patches.generate.codemods.families.attribute_rename import AttributeRename
from patches.generate.codemods.families.autocast_state import AutocastState
from patches.generate.codemods.families.backend_pick import BackendPick
from patches.generate.codemods.families.backend_probe import BackendProbe
from patches.generate.codemods.families.call_rename import CallRename
from patches.generate.codemods.families.capture_state import CaptureState
from patches.generate.codemods.families.codegen_device import CodegenDevice
from patches.generate.codemods.families.current_device import CurrentDevice
from patches.generate.codemods.families.default_type import DefaultType
from patches.generate.codemods.families.device_checks import DeviceChecks
from patches.generate.codemods.families.device_context import DeviceContext
from patches.generate.codemods.families.device_flag import DeviceFlag
from patches.generate.codemods.families.device_module import DeviceModule
from patches.generate.codemods.families.device_pool import DevicePool
from patches.generate.codemods.families.device_sleep import DeviceSleep
from patches.generate.codemods.families.dispatch_collapse import DispatchCollapse
from patches.generate.codemods.families.echo_device import EchoDevice
from patches.generate.codemods.families.expect_device import ExpectDevice
from patches.generate.codemods.families.fact_guard import GuardedFacts
from patches.generate.codemods.families.generated_device import GeneratedDevice
from patches.generate.codemods.families.guard import AvailabilityGuard
from patches.generate.codemods.families.guarded_cache import GuardedCache
from patches.generate.codemods.families.guarded_init import GuardedInit
from patches.generate.codemods.families.guarded_rng import GuardedRng
from patches.generate.codemods.families.idioms_backend import Backend
from patches.generate.codemods.families.idioms_capability import Capability
from patches.generate.codemods.families.idioms_device import DeviceDefaults
from patches.generate.codemods.families.idioms_memory import GuardedMemory
from patches.generate.codemods.families.idioms_precision import Precision
from patches.generate.codemods.families.idioms_predicates import DevicePredicates
from patches.generate.codemods.families.literals import DeviceLiteral
from patches.generate.codemods.families.module_device import ModuleDevice
from patches.generate.codemods.families.own_device import OwnDevice
from patches.generate.codemods.families.own_effect import OwnEffect
from patches.generate.codemods.families.param_defaults import ParamDefaults
from patches.generate.codemods.families.probe_collapse import ProbeCollapse
from patches.generate.codemods.families.profiler_devices import ProfilerDevices
from patches.generate.codemods.families.profiler_keys import ProfilerKeys
from patches.generate.codemods.families.remote_device import RemoteDevices
from patches.generate.codemods.families.rename import Rename
from patches.generate.codemods.families.script_amp import ScriptAmp
from patches.generate.codemods.families.script_ddp import ScriptDdp
from patches.generate.codemods.families.script_device import ScriptDevice
from patches.generate.codemods.families.script_flags import ScriptFlags
from patches.generate.codemods.families.script_index import ScriptIndex
from patches.generate.codemods.families.script_legacy_calls import LegacyCalls
from patches.generate.codemods.families.script_legacy_types import LegacyTypes
from patches.generate.codemods.families.script_seed import SeedAfterSeed
from patches.generate.codemods.families.sdpa_kernel import SdpaKernel
from patches.generate.codemods.families.sync_guard import GuardedSync
from patches.generate.codemods.families.timing import Timing

FAMILY_TYPES = (
    ExpectDevice,  # reads each placement it pairs with an expectation: first, answers for no other
    # unit rewrites (upstream's shapes, issue 24): before the families whose sites they take whole
    BackendPick,
    DispatchCollapse,  # a per-device dispatch making one call on each backend -> torch.accelerator
    ProbeCollapse,  # one probe per backend (`if TEST_X and torch.x.device_count() >= n`) -> one
    Timing,
    CodegenDevice,  # a device check with the generated source it guards (before DeviceChecks)
    EchoDevice,  # a device-type test whose branch says the tested device back
    GeneratedDevice,  # torch.device("cuda...") in code a function writes -> its device
    AutocastState,  # "cuda" as the device type of torch's autocast state calls
    CurrentDevice,  # torch.device("cuda", torch.cuda.current_device()) -> the accelerator's
    BackendProbe,  # pg._get_backend(torch.device("cuda")) in a try that swallows its failure
    DeviceFlag,  # a CUDA switch (`cuda: bool`) -> a device type, with every caller of the tree
    DeviceChecks,
    OwnDevice,
    ModuleDevice,  # a test module's own DEVICE_TYPE for its plain .cuda() calls
    ParamDefaults,
    DeviceContext,
    GuardedFacts,  # a device fact a script reports, with its readers, under one check
    DeviceModule,  # device queries of torch.cuda -> the current accelerator's module
    DeviceSleep,  # torch.cuda._sleep -> the module of a device the code holds, not the CPU
    DevicePool,  # torch.cuda.MemPool / use_mem_pool -> the module of the `device` in scope
    GuardedRng,  # device RNG state behind an availability check -> the accelerator's module
    DefaultType,  # the deprecated default tensor type of CUDA -> default device and dtype
    SdpaKernel,  # the deprecated sdp_kernel(enable_*=...) -> sdpa_kernel([backends]), exact
    GuardedInit,  # torch.cuda.init() behind an availability check -> the accelerator's module
    CaptureState,  # is_current_stream_capturing() -> the accelerator stream's is_capturing()
    GuardedCache,  # empty_cache(): a bare statement gets the availability check it needs
    OwnEffect,  # a script's CUDA-only profiling/allocator call: kept, under a CUDA check
    ProfilerKeys,  # the profiler's CUDA-named sort keys -> its device columns
    ProfilerDevices,  # a profiler event's device type checked against CUDA -> against the host
    AvailabilityGuard,
    ScriptAmp,  # CallRename, with the device type written in where a script names none
    SeedAfterSeed,  # CallRename; a CUDA seed right after torch.manual_seed(s) is deleted
    ScriptIndex,  # torch.cuda.current_device() handed on as a device in a script: else "cpu"
    CallRename,
    Rename,
    AttributeRename,
    ScriptDevice,  # MethodToDevice, and a script's own device where it has none
    ScriptFlags,  # a script's CUDA-named flag or local whose uses all become neutral
    LegacyTypes,  # a script's `Tensor = torch.cuda.FloatTensor if cuda else ...` alias
    LegacyCalls,  # torch.cuda.FloatTensor(n) / x.type(torch.cuda.T) at a script's device places
    # idioms_*.py (issue 14): whole training-script idioms, before the plain device literal
    DevicePredicates,
    RemoteDevices,  # "rank:0/cuda:0" -> f"rank:0/{device_type}:0" on the module's device type
    DeviceDefaults,
    Capability,
    Precision,
    Backend,
    ScriptDdp,  # DDP's device ids in a script with a CPU path: None there (HN601's step)
    GuardedMemory,
    GuardedSync,
    DeviceLiteral,
)
FAMILY_NAMES = tuple(t.name for t in FAMILY_TYPES)


def new_families() -> dict:
    """Fresh instances for one file (families may keep per-file state)."""
    return {t.name: t() for t in FAMILY_TYPES}


def claimed_by(names) -> str | None:
    """The family that claims all of a rule's matched ``names``, if any."""
    for t in FAMILY_TYPES:
        if t.claims and names and set(names) <= set(t.claims):
            return t.name
    return None
