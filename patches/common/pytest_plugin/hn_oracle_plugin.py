"""pytest plugin: record what the functions a series changes return or raise, per test.

Loaded with ``-p hn_oracle_plugin --hn-oracle SPEC.json`` (its folder is on PYTHONPATH, as for
``hn_validate_plugin``). SPEC: ``{"targets": [{"path": "torch/utils/dlpack.py", "qualname":
"from_dlpack"}], "out": DIR, "devices": ["cpu"], "max_calls": 20}``. In a run whose device
(``HN_TEST_DEVICE``) is listed, each target function (module level, or a method of a
module-level class) is wrapped once its module is imported: every name bound to it in a loaded
module is rebound to the wrapper (``torch.from_dlpack`` is ``torch.utils.dlpack.from_dlpack``).
Each call made during a test appends one JSON line to ``DIR/oracle-<rootdir name>-<pid>.jsonl``:
the test id, the target, the call's index in that test, a short view of the arguments, and the
outcome: the returned value described (tensors: dtype, shape, strides, device, layout, a digest of
the values, which tensor arguments share its storage) or the exception raised (type, message).

Only the stdlib is imported here; torch is read from ``sys.modules`` when a value is a tensor.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import re
import sys
import types
from pathlib import Path

import pytest
from hn_validate_plugin import junit_id

_STATE: dict = {"spec": None, "fh": None, "test": None, "pending": [], "counts": {}, "depth": 0}
_ADDR = re.compile(r" at 0x[0-9a-fA-F]+|0x[0-9a-fA-F]{6,}")
MAX_VALUES = 1 << 22  # elements digested per tensor


def pytest_addoption(parser) -> None:
    parser.addoption("--hn-oracle", default=None, help="behaviour oracle spec (JSON file)")


def pytest_configure(config) -> None:
    path = config.getoption("--hn-oracle")
    if not path:
        return
    spec = json.loads(Path(path).read_text(encoding="utf-8"))
    if os.environ.get("HN_TEST_DEVICE", "cpu") not in spec.get("devices", ["cpu"]):
        return
    distributing = not os.environ.get("PYTEST_XDIST_WORKER") and getattr(
        config.option, "numprocesses", None
    )
    if distributing:
        return  # the controller runs no test
    out = Path(spec["out"])
    out.mkdir(parents=True, exist_ok=True)
    name = Path(str(config.rootpath)).name
    _STATE["fh"] = open(out / f"oracle-{name}-{os.getpid()}.jsonl", "a", encoding="utf-8")
    _STATE["spec"] = spec
    _STATE["pending"] = [(t["path"], t["qualname"]) for t in spec.get("targets", [])]


def _clean(text: str, limit: int = 200) -> str:
    return _ADDR.sub(" at 0x?", " ".join(str(text).split()))[:limit]


def _storage(t) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except Exception:  # meta, fake, sparse, quantized: no comparable storage
        return 0


def _digest(t) -> str:
    import torch

    if t.layout != torch.strided or t.device.type == "meta" or t.is_quantized:
        return "n/a"
    if t.numel() > MAX_VALUES:
        return "large"
    try:
        flat = t.detach().resolve_conj().resolve_neg().cpu().contiguous().reshape(-1)
        raw = flat.view(torch.uint8) if flat.numel() else flat
        return hashlib.sha1(raw.numpy().tobytes()).hexdigest()[:16]
    except Exception as e:  # an unusual tensor subclass: say so rather than fail the test
        return f"unreadable ({type(e).__name__})"


def describe(value, ptrs: dict[int, str], depth: int = 0) -> dict:
    """A JSON view of ``value``; ``ptrs``: storage address -> argument name, for sharing."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        d = {
            "type": type(value).__name__,
            "dtype": str(value.dtype),
            "shape": list(value.shape),
            "device": str(value.device),
            "layout": str(value.layout),
            "requires_grad": bool(value.requires_grad),
            "values": _digest(value),
        }
        if value.layout == torch.strided:
            d["stride"] = list(value.stride())
        ptr = _storage(value)
        d["shares_storage_with"] = sorted({ptrs[ptr]} if ptr and ptr in ptrs else [])
        return d
    if isinstance(value, (tuple, list)) and depth < 3:
        items = [describe(v, ptrs, depth + 1) for v in value[:16]]
        return {"type": type(value).__name__, "len": len(value), "items": items}
    if isinstance(value, dict) and depth < 3:
        keys = sorted(value, key=repr)[:16]
        return {
            "type": "dict",
            "len": len(value),
            "items": {_clean(repr(k), 60): describe(value[k], ptrs, depth + 1) for k in keys},
        }
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return {"type": type(value).__name__, "repr": _clean(repr(value))}
    if torch is not None and isinstance(value, (torch.dtype, torch.device, torch.Size)):
        return {"type": type(value).__name__, "repr": repr(value)}
    return {"type": f"{type(value).__module__}.{type(value).__qualname__}"}


def _arguments(args: tuple, kwargs: dict) -> tuple[str, dict[int, str]]:
    """A short view of the arguments and {storage address: argument name} of their tensors."""
    torch = sys.modules.get("torch")
    shown, ptrs = [], {}
    named = [(f"arg {i}", a) for i, a in enumerate(args)] + list(kwargs.items())
    for name, a in named:
        if torch is not None and isinstance(a, torch.Tensor):
            ptr = _storage(a)
            if ptr:
                ptrs.setdefault(ptr, name)
            shown.append(
                f"{name}=Tensor({str(a.dtype).replace('torch.', '')}, {list(a.shape)}, {a.device})"
            )
        else:
            shown.append(f"{name}={_clean(repr(a), 60) if _plain(a) else type(a).__name__}")
    return ", ".join(shown)[:300], ptrs


def _plain(a) -> bool:
    return a is None or isinstance(a, (bool, int, float, str))


def _state(obj) -> dict:
    """A method's ``self`` after the call: its plain attributes (flags, names, dtypes, devices),
    where an ``__init__`` or a setter keeps what it decided."""
    torch = sys.modules.get("torch")
    kinds = (torch.dtype, torch.device) if torch is not None else ()
    out = {}
    for k, v in sorted(getattr(obj, "__dict__", {}).items())[:60]:
        if _plain(v) or (kinds and isinstance(v, kinds)):
            out[k] = _clean(repr(v), 80)
    return out


def _record(key: str, args: tuple, kwargs: dict, result=None, raised=None) -> None:
    test, fh = _STATE["test"], _STATE["fh"]
    if test is None or fh is None:
        return
    counts = _STATE["counts"]
    index = counts[(test, key)] = counts.get((test, key), 0) + 1
    if index > _STATE["spec"].get("max_calls", 20):
        return
    shown, ptrs = _arguments(args, kwargs)
    if raised is not None:
        outcome = {"raised": type(raised).__name__, "message": _clean(raised)}
    else:
        outcome = {"returned": describe(result, ptrs)}
    if "." in key.rpartition("::")[2] and args and not isinstance(args[0], type):
        outcome["self_after"] = _state(args[0])
    fh.write(
        json.dumps({"test": test, "target": key, "call": index, "args": shown, **outcome}) + "\n"
    )


def _wrap(func, key: str):
    @functools.wraps(func)
    def oracle_wrapper(*args, **kwargs):
        if _STATE["depth"]:  # a call made while describing another: not the test's
            return func(*args, **kwargs)
        try:
            result = func(*args, **kwargs)
        except BaseException as e:
            _STATE["depth"] += 1
            try:
                _record(key, args, kwargs, raised=e)
            finally:
                _STATE["depth"] -= 1
            raise
        _STATE["depth"] += 1
        try:
            _record(key, args, kwargs, result=result)
        finally:
            _STATE["depth"] -= 1
        return result

    oracle_wrapper.__hn_oracle__ = True
    return oracle_wrapper


_TRAMPOLINE = "def {name}(*args, **kwargs):\n    return {glob}(*args, **kwargs)\n"


def _swap_code(func, key: str) -> bool:
    """Route every call of ``func`` through the recorder, whoever holds it (a module, a registry,
    an OpInfo's ``sample_inputs_func``): its code becomes a trampoline to a wrapper of a copy of
    it. False when it has free variables (a closure, ``super()``): the caller rebinds names."""
    if not isinstance(func, types.FunctionType) or func.__code__.co_freevars:
        return False
    orig = types.FunctionType(
        func.__code__, func.__globals__, func.__name__, func.__defaults__, func.__closure__
    )
    orig.__kwdefaults__ = func.__kwdefaults__
    glob = f"__hn_oracle_{abs(hash(key))}"
    func.__globals__[glob] = _wrap(orig, key)
    ns: dict = {}
    exec(compile(_TRAMPOLINE.format(name="trampoline", glob=glob), "<hn-oracle>", "exec"), ns)
    try:
        func.__signature__ = inspect.signature(orig)
    except (TypeError, ValueError):
        pass
    func.__code__ = ns["trampoline"].__code__
    # inspect.getsource / signature (TorchScript reads the source) still find the original;
    # the trampoline's own file name keeps it out of coverage's per-line records
    func.__wrapped__ = orig
    func.__hn_oracle__ = True
    return True


def _module_for(path: str):
    suffix = os.sep + path.replace("/", os.sep)
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if isinstance(f, str) and f.endswith(suffix):
            return mod
    return None


def _install(path: str, qualname: str) -> bool:
    """Wrap one target if its module is loaded; True when done (or impossible)."""
    mod = _module_for(path)
    if mod is None:
        return False
    key = f"{path}::{qualname}"
    owner, *rest = qualname.split(".")
    if "<locals>" in qualname or len(rest) > 1:
        return True  # nested: observed through its enclosing function only
    if rest:
        cls = mod.__dict__.get(owner)
        raw = getattr(cls, "__dict__", {}).get(rest[0])
        inner = getattr(raw, "__func__", raw)
        if not callable(inner) or getattr(inner, "__hn_oracle__", False):
            return True
        if _swap_code(inner, key):
            return True
        wrapped = _wrap(inner, key)
        setattr(cls, rest[0], type(raw)(wrapped) if inner is not raw else wrapped)
        return True
    func = mod.__dict__.get(owner)
    if not callable(func) or getattr(func, "__hn_oracle__", False):
        return True
    if _swap_code(func, key):
        return True
    wrapped = _wrap(func, key)
    for m in list(sys.modules.values()):  # every module that imported the name
        d = getattr(m, "__dict__", None)
        if isinstance(d, dict):
            for name in [n for n, v in list(d.items()) if v is func]:
                d[name] = wrapped
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _STATE["fh"] is not None:
        _STATE["pending"] = [t for t in _STATE["pending"] if not _install(*t)]
        _STATE["test"] = junit_id(item.nodeid)
    yield
    _STATE["test"] = None
    if _STATE["fh"] is not None:
        _STATE["fh"].flush()


def pytest_unconfigure(config) -> None:
    fh = _STATE.pop("fh", None)
    if fh is not None:
        fh.close()
