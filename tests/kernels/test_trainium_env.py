"""Trainium behaviour that depends on the environment at registration, one subprocess each."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("NEURON_", "HN_TRN_"))
         or k == "HN_TRN_BUILD_DIR"}


def run(code: str, **env) -> dict:
    """Run ``code`` in a fresh interpreter with ``env``; it prints one JSON line last."""
    proc = subprocess.run([sys.executable, "-c", "import kernels.trn, json, torch\n" + textwrap.dedent(code)],
                          cwd=ROOT, env={**CLEAN, **env}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_trn1_visible_cores_select_devices():
    out = run("""
        p = torch.trn.get_device_properties(1)
        print(json.dumps([torch.trn.device_count(), p.name, p.neuron_core_id, p.total_memory, torch.trn.capacity(1)]))
    """, HN_TRN_PRESET="trn1", NEURON_RT_VISIBLE_CORES="1,5")
    assert out == [2, "Trainium NeuronCore-v2 (LNC=1)", 5, 16 << 30, 16 << 30]


def test_trn3_num_cores_and_lnc1():
    out = run("""
        p = torch.trn.get_device_properties(2)
        print(json.dumps([torch.trn.device_count(), p.physical_cores, p.total_memory]))
    """, HN_TRN_PRESET="trn3", NEURON_RT_NUM_CORES="3", NEURON_LOGICAL_NC_CONFIG="1")
    assert out == [3, 1, 18 << 30]


def test_bad_topology_env_fails_registration_clearly():
    proc = subprocess.run([sys.executable, "-c", "import kernels.trn"], cwd=ROOT, capture_output=True, text=True,
                          env={**CLEAN, "HN_TRN_PRESET": "trn1", "NEURON_LOGICAL_NC_CONFIG": "2"}, timeout=600)
    assert proc.returncode != 0
    assert "TopologyError: NEURON_LOGICAL_NC_CONFIG=2 is not supported on trn1" in proc.stderr


def test_permissive_mode_downcasts_with_one_warning():
    out = run("""
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = torch.ones(3, dtype=torch.float64).to("trn")
            b = torch.ones(3, dtype=torch.float64).to("trn")
            c = torch.zeros(2, dtype=torch.float64, device="trn")
        msgs = [str(x.message) for x in w if "downcasts" in str(x.message)]
        print(json.dumps([str(a.dtype), str(b.dtype), str(c.dtype), a.cpu().tolist(), msgs]))
    """, HN_TRN_DTYPE_POLICY="permissive")
    assert out[:4] == ["torch.float32", "torch.float32", "torch.float32", [1.0, 1.0, 1.0]]
    assert len(out[4]) == 2        # once for Tensor.to, once for aten::empty; not for the repeat
    assert "aten::_to_copy (Tensor.to) downcasts Double to Float" in out[4][0]


SR_CODE = """
    import hashlib
    x = torch.full((100_000,), 1.0 + 2.0 ** -9)          # a quarter bf16 step above 1.0
    y = x.to("trn").to(torch.bfloat16)
    a = torch.full((2000, 1), 1.0, dtype=torch.bfloat16, device="trn")
    b = torch.full((1, 1), 1.0 + 2.0 ** -7, dtype=torch.bfloat16, device="trn")
    bias = torch.full((2000, 1), 2.0 ** -9, dtype=torch.bfloat16, device="trn")
    m = torch.addmm(bias, a, b)
    f = torch.randn(8, 16, generator=torch.Generator().manual_seed(0))
    g = torch.randn(16, 4, generator=torch.Generator().manual_seed(1))
    via = (f.to("trn") @ g.to("trn")).cpu()
    ref = f.bfloat16().float() @ g.bfloat16().float()
    print(json.dumps([y.float().mean().item(), hashlib.sha1(y.cpu().view(torch.int16).numpy().tobytes()).hexdigest(),
                      m.float().mean().item(), len(m.unique()), bool(torch.equal(via, ref)), bool(torch.equal(via, f @ g))]))
"""


def test_stochastic_rounding_is_unbiased_and_reproducible():
    env = dict(NEURON_RT_STOCHASTIC_ROUNDING_EN="1", NEURON_RT_STOCHASTIC_ROUNDING_SEED="7", HN_TRN_MATMUL_BF16="1")
    first, again = run(SR_CODE, **env), run(SR_CODE, **env)
    other = run(SR_CODE, **{**env, "NEURON_RT_STOCHASTIC_ROUNDING_SEED": "8"})
    assert abs(first[0] - (1.0 + 2.0 ** -9)) < 1e-4             # RNE would give exactly 1.0
    assert first[1] == again[1] and first[1] != other[1]          # same seed, same bits
    assert abs(first[2] - (1.0 + 2.0 ** -7 + 2.0 ** -9)) < 1e-3 and first[3] == 2   # matmul output SR
    assert first[4] and not first[5]                              # fp32 matmul went through bf16
    rne = run(SR_CODE)
    assert rne[0] == 1.0 and rne[3] == 1 and rne[5] and not rne[4]  # all off by default


def test_sanitizer_reports_races_and_accepts_each_sync():
    out = run("""
        from kernels.trn.sanitizer import SynchronizationError
        a, b = torch.Stream(device="trn"), torch.Stream(device="trn")

        def race(sync):
            x = torch.zeros(8, device="trn")
            with torch.trn.stream(a):
                x.add_(1)
            sync(x)
            with torch.trn.stream(b):
                try:
                    (x * 2).sum()
                except SynchronizationError as e:
                    return str(e)
            return ""

        ev = torch.Event(device="trn")
        def by_event(x):
            ev.record(a); b.wait_event(ev)
        results = {
            "none": race(lambda x: None),
            "wait_stream": race(lambda x: b.wait_stream(a)),
            "wait_event": race(by_event),
            "record_stream": race(lambda x: x.record_stream(b)),
            "synchronize": race(lambda x: torch.accelerator.synchronize()),
        }
        print(json.dumps(results))
    """, HN_TRN_SANITIZER="1")
    msg = out.pop("none")
    assert "data race on storage" in msg and "read by aten::mul.Tensor on stream (0, " in msg
    assert "write by aten::add_.Tensor" in msg
    assert "Current access" in msg and "Previous access" in msg and msg.count('File "<string>"') >= 2
    assert out == {"wait_stream": "", "wait_event": "", "record_stream": "", "synchronize": ""}
