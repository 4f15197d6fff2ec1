"""Serialization points of the PrivateUse1 contract that OpenReg's tests check beyond a plain
save/load (issue 12 part 3): backend metadata (kernels/csrc/backend_meta.cpp), the storage-less
and legacy numpy rebuild paths, numpy round trips, and fake tensors through torch.save."""

from __future__ import annotations

import _codecs
import io
import pickle
from unittest.mock import patch

import numpy as np
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.serialization import safe_globals, skip_data

import kernels.trn  # noqa: F401

DEV = "trn"
FLAGS = {"version_number": True, "format_number": False}


def _save(obj) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


def _load(buf: io.BytesIO, **kw):
    buf.seek(0)
    return torch.load(buf, **kw)


def test_backend_metadata_is_kept_and_survives_save_and_load():
    t = torch.arange(6.0, device=f"{DEV}:1").reshape(2, 3)
    assert torch._utils.get_tensor_metadata(t) == {}
    torch._utils.set_tensor_metadata(t, dict(FLAGS))
    assert torch._utils.get_tensor_metadata(t) == FLAGS
    # conj/neg stay torch's own bits, next to the backend's flags
    c = torch.tensor([1 + 2j], device=DEV).conj()
    torch._utils.set_tensor_metadata(c, {"version_number": True})
    assert torch._utils.get_tensor_metadata(c) == {"conj": True, "version_number": True}
    # a later set adds to (and overrides) what is there
    u = torch.zeros(2, device=DEV)
    torch._utils.set_tensor_metadata(u, {"a": True})
    torch._utils.set_tensor_metadata(u, {"a": False, "b": True})
    assert torch._utils.get_tensor_metadata(u) == {"a": False, "b": True}

    buf = _save(t)
    for kw in ({}, {"weights_only": True}):
        back = _load(buf, **kw)
        assert back.device == t.device and torch.equal(back.cpu(), t.cpu())
        assert torch._utils.get_tensor_metadata(back) == FLAGS
    assert torch._utils.get_tensor_metadata(_load(buf, map_location=f"{DEV}:0")) == FLAGS
    on_cpu = _load(buf, map_location="cpu")
    assert on_cpu.device.type == "cpu" and torch._utils.get_tensor_metadata(on_cpu) == {}
    # a CPU tensor loaded onto trn has none
    assert torch._utils.get_tensor_metadata(_load(_save(t.cpu()), map_location=DEV)) == {}


def test_backend_metadata_follows_shallow_copies_not_fresh_results():
    t = torch.ones(3, device=DEV)
    torch._utils.set_tensor_metadata(t, {"version_number": True})
    assert torch._utils.get_tensor_metadata(t.detach()) == {"version_number": True}
    assert torch._utils.get_tensor_metadata(t + 1) == {}
    assert torch._utils.get_tensor_metadata(torch.ones(3, device=DEV)) == {}


def test_storage_less_backend_path_and_skip_data_refusal():
    """A backend without storages is saved through its CPU copy
    (`_rebuild_device_tensor_from_cpu_tensor`) and refuses skip_data, as on OpenReg."""
    x = torch.randn(2, 3)
    with patch.object(torch._C, "_has_storage", return_value=False):
        xt = x.to(DEV)
        func = xt._reduce_ex_internal(torch.serialization.DEFAULT_PROTOCOL)[0]
        assert func is torch._utils._rebuild_device_tensor_from_cpu_tensor
        buf = _save({"x": xt})
        on_dev = _load(buf, weights_only=True)["x"]
        on_cpu = _load(buf, weights_only=True, map_location="cpu")["x"]
        with pytest.raises(RuntimeError, match="no storage under skip_data"):
            with skip_data():
                torch.save({"x": xt}, io.BytesIO())
    assert on_dev.device.type == DEV and torch.equal(on_dev.cpu(), x)
    assert on_cpu.device.type == "cpu" and torch.equal(on_cpu, x)


class _LegacyNumpy:
    """Pickles as files written by older torch for storage-less backends did:
    `_rebuild_device_tensor_from_numpy(ndarray, dtype, "trn:0", requires_grad)`."""

    def __init__(self, t: torch.Tensor):
        self.t = t

    def __reduce__(self):
        t = self.t
        return (
            torch._utils._rebuild_device_tensor_from_numpy,
            (t.detach().cpu().numpy(), t.dtype, str(t.device), t.requires_grad),
        )


def test_legacy_numpy_rebuild_path_loads_on_trn_and_honours_map_location():
    expected = torch.tensor([[1.0, 2, 3], [4, 5, 6]], device=f"{DEV}:0")
    buf = io.BytesIO()
    torch.save({"x": _LegacyNumpy(expected)}, buf, pickle_protocol=2)
    assert b"_rebuild_device_tensor_from_numpy" in buf.getvalue()
    allowed = [
        np._core.multiarray._reconstruct,
        np.ndarray,
        np.dtype,
        _codecs.encode,
        type(np.dtype(np.float32)),
    ]
    with safe_globals(allowed):
        on_dev = _load(buf, weights_only=True)["x"]
        on_cpu = _load(buf, weights_only=True, map_location="cpu")["x"]
    assert on_dev.device == expected.device and torch.equal(on_dev.cpu(), expected.cpu())
    assert on_cpu.is_cpu and torch.equal(on_cpu, expected.cpu())


def test_numpy_round_trips():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = torch.from_numpy(a).to(DEV)
    assert t.device.type == DEV and np.array_equal(t.cpu().numpy(), a)
    # like CUDA: device memory is not handed to numpy without an explicit copy
    with pytest.raises(TypeError, match=f"can't convert {DEV}:0 device type tensor to numpy"):
        t.numpy()
    # a checkpoint mixing numpy arrays and trn tensors
    back = _load(_save({"arr": a, "t": t, "bf16": t.bfloat16()}), weights_only=False)
    assert np.array_equal(back["arr"], a)
    assert back["t"].device == t.device and np.array_equal(back["t"].cpu().numpy(), a)
    assert back["bf16"].dtype == torch.bfloat16 and back["bf16"].device.type == DEV
    # numpy scalars from trn results
    assert float(t.sum().cpu().numpy()) == float(a.sum())


def test_fake_trn_tensors_through_torch_save():
    mode = FakeTensorMode()
    with mode:
        f = torch.empty_strided((3, 4), (1, 3), device=f"{DEV}:1")[1:]
    torch._utils.set_tensor_metadata(f, {"version_number": True})
    # upstream's supported path: skip_data(materialize_fake_tensors=True), no bytes written
    buf = io.BytesIO()
    with skip_data(materialize_fake_tensors=True):
        torch.save({"f": f}, buf)
    with FakeTensorMode():
        g = _load(buf)["f"]
    assert isinstance(g, FakeTensor)
    assert (g.device, g.shape, g.stride(), g.storage_offset(), g.dtype) == (
        f.device,
        f.shape,
        f.stride(),
        f.storage_offset(),
        f.dtype,
    )
    # (torch's _rebuild_tensor_v2/v3 set the metadata while a fake-loaded tensor is still on
    # "meta" and restore the fake device after, so flags are dropped there on every backend)
    # loaded for real it is a trn tensor of the same layout (contents unspecified)
    r = _load(buf)["f"]
    assert type(r) is torch.Tensor and r.device == f.device and r.stride() == f.stride()
    assert torch._utils.get_tensor_metadata(r) == {"version_number": True}


def test_saving_a_fake_tensor_without_skip_data_fails_as_on_cpu():
    """A FakeTensor's mode holds weak references that do not pickle; CPU and trn refuse alike."""
    errors = []
    for dev in ("cpu", DEV):
        with FakeTensorMode():
            f = torch.empty(2, device=dev)
        with pytest.raises(Exception) as e:
            torch.save(f, io.BytesIO())
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]
    assert errors[0][0] in (AttributeError, pickle.PicklingError, TypeError)
