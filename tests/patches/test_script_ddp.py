"""DDP scripts given a CPU path (round 19, ``script_ddp`` and ``device_places.or_cpu``):
``DistributedDataParallel(device_ids=[rank], output_device=rank)`` gets ``None`` without an
accelerator (DDP refuses ids for a CPU module), and the device of a local rank
(``torch.device(f"cuda:{args.local_rank}")``, nanoGPT's ``device = f"cuda:{ddp_local_rank}"``)
is the CPU there. Snapshots of fixtures/script_ddp (generate's scan, gate and codemod;
``EXPECTTEST_ACCEPT=1``) with the look-alikes left, and nanoGPT's whole DDP branch run as torchrun
runs one process: on the CPU (gloo), where the original stops, and on trn, where it prints what
its original prints under autoport. The two fixture scripts also run in ``test_cpu_ports.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import expecttest
import pytest
from codemod_helpers import FIXTURES, fix, snapshot
from test_cpu_ports import free_port

DIR = FIXTURES / "script_ddp"
NANOGPT = FIXTURES / "corpus" / "nanogpt_train.py"
ROOT = Path(__file__).resolve().parents[2]


def _fixed(name: str, target: str = "torch") -> str:
    return snapshot(DIR / name, target)


class TestScriptDdp(expecttest.TestCase):
    def test_device_ids_of_a_cpu_module(self):
        self.assertExpectedInline(
            _fixed("ddp_script.py"),
            """\
@@ -8,0 +9 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -14,2 +15,3 @@
-dist.init_process_group("nccl")
-torch.cuda.set_device(local_rank)
+dist.init_process_group(torch.distributed.get_default_backend_for_device(torch.accelerator.current_accelerator() or "cpu"))
+if torch.accelerator.is_available():
+    torch.accelerator.set_device_index(local_rank)
@@ -17,2 +19,2 @@
-model = torch.nn.Linear(4, 2).cuda(local_rank)
-ddp = DDP(model, device_ids=[local_rank], output_device=local_rank)
+model = torch.nn.Linear(4, 2).to(torch.device(device, local_rank))
+ddp = DDP(model, device_ids=[local_rank] if torch.accelerator.is_available() else None, output_device=local_rank if torch.accelerator.is_available() else None)
@@ -21 +23 @@
-    out = ddp(torch.ones(3, 4).cuda(local_rank))
+    out = ddp(torch.ones(3, 4).to(torch.device(device, local_rank)))
""",
        )

    def test_device_of_a_local_rank_positional_ids(self):
        self.assertExpectedInline(
            _fixed("rank_device.py"),
            """\
@@ -20,2 +20,2 @@
-device = torch.device(f"cuda:{args.local_rank}")
-dist.init_process_group(backend="nccl")
+device = torch.device(f"{torch.accelerator.current_accelerator().type}:{args.local_rank}" if torch.accelerator.is_available() else "cpu")
+dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(device))
@@ -28 +28 @@
-model = nn.parallel.DistributedDataParallel(model, [args.local_rank], args.local_rank)
+model = nn.parallel.DistributedDataParallel(model, [args.local_rank] if torch.accelerator.is_available() else None, args.local_rank if torch.accelerator.is_available() else None)
""",
        )

    def test_accelerator_api_target(self):
        self.assertExpectedInline(
            _fixed("rank_device.py", "accelerator_api"),
            """\
@@ -7,0 +8 @@
+import accelerator_api
@@ -20,2 +21,2 @@
-device = torch.device(f"cuda:{args.local_rank}")
-dist.init_process_group(backend="nccl")
+device = torch.device(f"{accelerator_api.device_type()}:{args.local_rank}" if torch.accelerator.is_available() else "cpu")
+dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(device))
@@ -28 +29 @@
-model = nn.parallel.DistributedDataParallel(model, [args.local_rank], args.local_rank)
+model = nn.parallel.DistributedDataParallel(model, [args.local_rank] if torch.accelerator.is_available() else None, args.local_rank if torch.accelerator.is_available() else None)
""",
        )

    def test_lookalikes_left(self):
        """Several ids, a pick, None, under the script's test, after its assert: left; the one
        the CPU reaches: rewritten."""
        self.assertExpectedInline(
            _fixed("lookalikes.py"),
            """\
# left HN101:22: cuda-guarded: HN501 net.cuda(rank) (line 23)
# left HN501:23: cuda-function: inside cuda_only
@@ -9 +9 @@
-device = "cuda" if torch.cuda.is_available() else "cpu"
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -11 +11 @@
-dist.init_process_group("nccl")
+dist.init_process_group(torch.distributed.get_default_backend_for_device(device))
@@ -15 +15 @@
-picked = DistributedDataParallel(model, device_ids=[rank] if torch.cuda.is_available() else None)
+picked = DistributedDataParallel(model, device_ids=[rank] if torch.accelerator.is_available() else None)
@@ -17 +17 @@
-if torch.cuda.is_available():
+if torch.accelerator.is_available():
@@ -26,2 +26,2 @@
-here = DistributedDataParallel(model, device_ids=[rank])  # rewritten: the CPU reaches it
-kept_out = DistributedDataParallel(model, device_ids=[rank], output_device=None)  # ids only
+here = DistributedDataParallel(model, device_ids=[rank] if torch.accelerator.is_available() else None)  # rewritten: the CPU reaches it
+kept_out = DistributedDataParallel(model, device_ids=[rank] if torch.accelerator.is_available() else None, output_device=None)  # ids only
""",
        )

    def test_cuda_only_branch_left(self):
        """The DDP branch asserts CUDA before its process group: its wrap and rank device stay."""
        self.assertExpectedInline(
            _fixed("cuda_only.py"),
            """\
@@ -12,2 +12,2 @@
-    assert torch.cuda.is_available(), "for now i think we need CUDA for DDP"
-    init_process_group(backend="nccl")
+    assert torch.accelerator.is_available(), "for now i think we need CUDA for DDP"
+    init_process_group(backend=torch.distributed.get_default_backend_for_device(torch.accelerator.current_accelerator()))
@@ -15,2 +15,2 @@
-    device = f"cuda:{ddp_local_rank}"
-    torch.cuda.set_device(device)
+    device = f"{torch.accelerator.current_accelerator().type}:{ddp_local_rank}"
+    torch.accelerator.set_device_index(device)
@@ -19,2 +19,2 @@
-    if torch.cuda.is_available():
-        device = "cuda"
+    if torch.accelerator.is_available():
+        device = torch.accelerator.current_accelerator().type
""",
        )

    def test_library_left(self):
        self.assertExpectedInline(
            _fixed("library.py"),
            """\
@@ -2,0 +3 @@
+import torch
@@ -8,2 +9,2 @@
-    dist.init_process_group("nccl")
-    device = f"cuda:{rank}"
+    dist.init_process_group(torch.distributed.get_default_backend_for_device(torch.accelerator.current_accelerator()))
+    device = f"{torch.accelerator.current_accelerator().type}:{rank}"
""",
        )

    def test_no_cpu_path_left(self):
        self.assertExpectedInline(
            _fixed("no_cpu_path.py"),
            """\
@@ -11,2 +11,2 @@
-dist.init_process_group("nccl")
-device = torch.device("cuda", local_rank)
+dist.init_process_group(torch.distributed.get_default_backend_for_device(torch.accelerator.current_accelerator()))
+device = torch.device(torch.accelerator.current_accelerator().type, local_rank)
""",
        )


def _env(trn: bool, ddp: bool = True) -> dict:
    env = {"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT)}
    if ddp:
        env |= {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1"}
        env["MASTER_PORT"] = free_port()
    return env | ({"HN_TRN": "1"} if trn else {})


def _run(args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def nanogpt(tmp_path_factory) -> Path:
    result, _ = fix(NANOGPT.read_text(), NANOGPT.name)
    assert not result.error, result.error
    out = tmp_path_factory.mktemp("nanogpt") / NANOGPT.name
    out.write_text(result.after)
    return out


def test_nanogpt_ddp_branch_runs_on_the_cpu(nanogpt, tmp_path):
    """torchrun's environment for one process: gloo, the rank's device the CPU, DDP with no
    ids; the losses of the port's single-process run. The original stops (nccl)."""
    assert _run([str(NANOGPT)], tmp_path, _env(False)).returncode != 0
    ddp = _run([str(nanogpt)], tmp_path, _env(False))
    assert ddp.returncode == 0, ddp.stderr[-3000:]
    single = _run([str(nanogpt)], tmp_path, _env(False, ddp=False))
    assert single.returncode == 0, single.stderr[-3000:]
    assert "param device: cpu" in ddp.stdout
    assert ddp.stdout == single.stdout


def test_nanogpt_ddp_branch_on_trn_prints_what_its_original_prints(nanogpt, tmp_path):
    # the bf16 pick stays CUDA's (``module-lacks``: torch.mps has no is_bf16_supported), so the
    # dtype is chosen on the command line, as nanoGPT's configurator lets a run do
    dtype = "--dtype=bfloat16"
    orig = _run(
        ["-m", "accelerator_api.autoport", "--quiet", str(NANOGPT), dtype], tmp_path, _env(True)
    )
    port = _run([str(nanogpt), dtype], tmp_path, _env(True))
    assert orig.returncode == port.returncode == 0, orig.stderr[-2000:] + port.stderr[-2000:]
    assert "param device: trn" in port.stdout
    assert orig.stdout == port.stdout
