"""Trainium behaviour fixed by the environment at registration: one subprocess per setting."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLEAN = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith(("NEURON_", "HN_TRN_")) or k == "HN_TRN_BUILD_DIR"
}


def run(code: str, **env) -> list:
    """Run ``code`` in a fresh interpreter with ``env``; it prints one JSON line last."""
    proc = subprocess.run(
        [sys.executable, "-c", "import kernels.trn, json, torch\n" + textwrap.dedent(code)],
        cwd=ROOT,
        env={**CLEAN, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_trn1_visible_cores_select_devices():
    out = run(
        """
        p = torch.trn.get_device_properties(1)
        print(json.dumps([torch.trn.device_count(), p.name, p.neuron_core_id, p.total_memory, torch.trn.capacity(1)]))
    """,
        HN_TRN_PRESET="trn1",
        NEURON_RT_VISIBLE_CORES="1,5",
    )
    assert out == [2, "Trainium NeuronCore-v2 (LNC=1)", 5, 16 << 30, 16 << 30]


def test_bad_topology_env_fails_registration_clearly():
    proc = subprocess.run(
        [sys.executable, "-c", "import kernels.trn"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**CLEAN, "HN_TRN_PRESET": "trn1", "NEURON_LOGICAL_NC_CONFIG": "2"},
        timeout=600,
    )
    assert proc.returncode != 0
    assert "TopologyError: NEURON_LOGICAL_NC_CONFIG=2 is not supported on trn1" in proc.stderr


def test_trn3_num_cores_lnc1_and_permissive_dtypes():
    out = run(
        """
        import warnings
        p = torch.trn.get_device_properties(2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = torch.ones(3, dtype=torch.float64).to("trn")
            b = torch.ones(3, dtype=torch.float64).to("trn")
            c = torch.zeros(2, dtype=torch.float64, device="trn")
        msgs = [str(x.message) for x in w if "downcasts" in str(x.message)]
        print(json.dumps([torch.trn.device_count(), p.physical_cores, p.total_memory,
                          str(a.dtype), str(b.dtype), str(c.dtype), a.cpu().tolist(), msgs]))
    """,
        HN_TRN_PRESET="trn3",
        NEURON_RT_NUM_CORES="3",
        NEURON_LOGICAL_NC_CONFIG="1",
        HN_TRN_DTYPE_POLICY="permissive",
    )
    assert out[:3] == [3, 1, 18 << 30]
    assert out[3:7] == ["torch.float32", "torch.float32", "torch.float32", [1.0, 1.0, 1.0]]
    assert len(out[7]) == 2  # once for Tensor.to, once for aten::empty; not for the repeat
    assert "aten::_to_copy (Tensor.to) downcasts Double to Float" in out[7][0]


def test_stochastic_rounding_is_unbiased_and_reproducible():
    out = run(
        """
        import hashlib
        from kernels.trn.trainium import reseed_stochastic_rounding

        def draw():
            y = torch.full((100_000,), 1.0 + 2.0 ** -9).to("trn").to(torch.bfloat16)  # 1/4 step above 1.0
            return y.float().mean().item(), hashlib.sha1(y.cpu().view(torch.int16).numpy().tobytes()).hexdigest()

        first = draw()
        reseed_stochastic_rounding()
        again = draw()
        reseed_stochastic_rounding(8)
        other = draw()
        a = torch.full((2000, 1), 1.0, dtype=torch.bfloat16, device="trn")
        b = torch.full((1, 1), 1.0 + 2.0 ** -7, dtype=torch.bfloat16, device="trn")
        m = torch.addmm(torch.full((2000, 1), 2.0 ** -9, dtype=torch.bfloat16, device="trn"), a, b)
        f = torch.randn(8, 16, generator=torch.Generator().manual_seed(0))
        g = torch.randn(16, 4, generator=torch.Generator().manual_seed(1))
        via = (f.to("trn") @ g.to("trn")).cpu()
        dst = torch.empty(100_000, dtype=torch.bfloat16, device="trn")
        dst.copy_(torch.full((100_000,), 1.0 + 2.0 ** -9, device="trn"))     # in-place downcast
        same = torch.ones(4, dtype=torch.bfloat16, device="trn").copy_(torch.arange(4.0, device="trn"))
        print(json.dumps([first, again, other, m.float().mean().item(), len(m.unique()),
                          torch.equal(via, f.bfloat16().float() @ g.bfloat16().float()), torch.equal(via, f @ g),
                          dst.float().mean().item(), same.cpu().tolist()]))
    """,
        NEURON_RT_STOCHASTIC_ROUNDING_EN="1",
        NEURON_RT_STOCHASTIC_ROUNDING_SEED="7",
        HN_TRN_MATMUL_BF16="1",
    )
    first, again, other, mean, distinct, via_bf16, plain, copied, exact = out
    assert abs(first[0] - (1.0 + 2.0**-9)) < 1e-4  # RNE would give exactly 1.0
    assert first[1] == again[1] and first[1] != other[1]  # same seed, same bits
    assert abs(mean - (1.0 + 2.0**-7 + 2.0**-9)) < 1e-3 and distinct == 2  # matmul output SR
    assert via_bf16 and not plain  # fp32 matmul went through bf16
    assert abs(copied - (1.0 + 2.0**-9)) < 1e-4 and exact == [0.0, 1.0, 2.0, 3.0]  # copy_ too
