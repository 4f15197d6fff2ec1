"""Ask the accelerator_api layer everything once and print the answers as JSON (last line).

    layer_probe.py [--import MOD] [--python-backend NAME] [--hide torch.accelerator.memory_allocated ...]

--import registers a device plugin first; --python-backend registers torch's pure-Python
PrivateUse1 stand-in under NAME; --hide deletes attributes to simulate an older torch.
"""
import argparse
import importlib
import json
import time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--import", dest="imports", action="append", default=[])
ap.add_argument("--python-backend")
ap.add_argument("--hide", action="append", default=[])
ap.add_argument("--cuda-queries", action="store_true", help="also ask torch.cuda (run under autoport)")
ns = ap.parse_args()
for mod in ns.imports:
    importlib.import_module(mod)
if ns.python_backend:
    from torch.utils.backend_registration import _setup_privateuseone_for_python_backend
    _setup_privateuseone_for_python_backend(ns.python_backend)
for dotted in ns.hide:
    owner, _, attr = dotted.rpartition(".")
    obj = importlib.import_module(owner) if owner == "torch" else eval(owner, {"torch": torch})
    delattr(obj, attr)

import accelerator_api as A  # noqa: E402

out = {}


def ask(name, fn):
    try:
        v = fn()
        out[name] = v if isinstance(v, (bool, int, float, str, type(None), list)) else str(v)
    except Exception as err:
        out[name] = f"ERR:{type(err).__name__}:{str(err)[:300]}"


ask("device_type", A.device_type)
ask("device", A.device)
ask("is_available", A.is_available)
ask("device_count", A.device_count)
ask("synchronize", A.synchronize)
ask("memory_before", A.memory_allocated)


def allocate():
    global keep
    keep = torch.ones(1 << 16, device=A.device())
    A.synchronize()
    return A.memory_allocated()


ask("memory_after", allocate)
ask("max_memory", A.max_memory_allocated)
ask("memory_info_total", lambda: A.get_memory_info()[1])


def timed():
    e1, e2 = A.Event(enable_timing=True), A.Event(enable_timing=True)
    e1.record()
    time.sleep(0.02)
    e2.record()
    e2.synchronize()
    return e1.elapsed_time(e2)


ask("event_ms", timed)


def rng_roundtrip():
    A.manual_seed_all(7)
    s = A.get_rng_state()
    a = torch.rand(4, device=A.device()).cpu()
    A.set_rng_state(s)
    return bool(torch.equal(a, torch.rand(4, device=A.device()).cpu()))


ask("rng_roundtrip", rng_roundtrip)
ask("preferred_dtype", lambda: str(A.preferred_dtype()))


def autocast_mm():
    x = torch.randn(4, 4, device=A.device())
    with A.autocast():
        return str((x @ x).dtype)


ask("autocast_mm", autocast_mm)
ask("grad_scaler", lambda: A.GradScaler()._device)
ask("bf16", A.is_bf16_supported)
ask("fp64", lambda: A.supports_dtype(torch.float64))
ask("fp32", lambda: A.supports_dtype(torch.float32))
ask("props_name", lambda: A.device_properties().name)
ask("dist_backend", A.distributed_backend)


def graph_eager():
    calls = []
    step = A.capture(lambda: calls.append(1) or len(calls))
    step()
    return [step.captured, len(calls) >= 1]


ask("capture", graph_eager)
ask("stream", lambda: str(A.Stream().device))
if ns.cuda_queries:
    s = torch.cuda.Stream()
    out["cuda"] = [torch.cuda.device_count(), torch.cuda.current_device(), torch.cuda.get_device_name(0),
                   str(s.device), isinstance(s, torch.cuda.Stream)]
print(json.dumps(out))
