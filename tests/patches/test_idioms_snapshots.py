"""Before/after snapshots of the idiom rules' fixtures (issue 14), run as generate runs them:
scan, intent gate, catalogue-driven codemod (expecttest: EXPECTTEST_ACCEPT=1 rewrites them)."""

import expecttest
from codemod_helpers import FIXTURES, snapshot


def _fixed(name: str, target: str = "torch") -> str:
    return snapshot(FIXTURES / name, target)


class TestIdiomFixtures(expecttest.TestCase):
    def test_hn109(self):
        self.assertExpectedInline(
            _fixed("hn109_capability_picks_bf16.py"),
            """\
# left HN109:5: an SM-version check other than >= (8, 0): about CUDA
# left HN109:6: (major, minor) used as such: about CUDA
@@ -3,2 +3,2 @@
-use_bf16 = torch.cuda.get_device_capability() >= (8, 0)
-dtype = torch.bfloat16 if torch.cuda.get_device_capability() >= (8, 0) else torch.float16
+use_bf16 = (torch.accelerator.is_available() and torch.get_device_module().is_bf16_supported(including_emulation=False))
+dtype = torch.bfloat16 if (torch.accelerator.is_available() and torch.get_device_module().is_bf16_supported(including_emulation=False)) else torch.float16
""",
        )

    def test_hn109_script(self):
        self.assertExpectedInline(
            _fixed("hn109_capability_script.py"),
            """\
# left HN109:11: under a CUDA check already
# left HN109:12: under a CUDA check already
# left HN101:10: cuda-guarded: HN109 torch.cuda.get_device_capability (line 11)
# left HN101:12: cuda-chain: HN109 torch.cuda.get_device_capability (line 12); cuda-flow: fast, set from HN109 torch.cuda.get_device_capability at line 12 (line 15)
@@ -5 +5,2 @@
-major, minor = torch.cuda.get_device_capability()  # CUDA's where CUDA is, else (0, 0)
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+major, minor = torch.cuda.get_device_capability() if torch.cuda.is_available() else (0, 0)  # CUDA's where CUDA is, else (0, 0)
@@ -7,3 +8,3 @@
-has_fp8 = torch.cuda.get_device_capability(0) >= (8, 9)  # an SM check: CUDA's, else (0, 0)
-sm = torch.cuda.get_device_capability()[0] * 10  # an element: parenthesized
-use_bf16 = torch.cuda.get_device_capability() >= (8, 0)  # picks bf16: the device's own query
+has_fp8 = (torch.cuda.get_device_capability(0) if torch.cuda.is_available() else (0, 0)) >= (8, 9)  # an SM check: CUDA's, else (0, 0)
+sm = (torch.cuda.get_device_capability() if torch.cuda.is_available() else (0, 0))[0] * 10  # an element: parenthesized
+use_bf16 = (torch.accelerator.is_available() and torch.get_device_module().is_bf16_supported(including_emulation=False))  # picks bf16: the device's own query
@@ -13 +14 @@
-model = torch.nn.Linear(8, 8).cuda()
+model = torch.nn.Linear(8, 8).to(device)
@@ -16 +17 @@
-print(model(torch.randn(2, 8).cuda()).shape)
+print(model(torch.randn(2, 8).to(device)).shape)
""",
        )

    def test_hn112(self):
        self.assertExpectedInline(
            _fixed("hn112_is_bf16_supported.py"),
            """\
# left HN101:3: cuda-chain: HN112 torch.cuda.is_bf16_supported (line 3)
# left HN112:3: module-lacks: torch.mps has no is_bf16_supported; CUDA's fell back without CUDA
# left HN112:4: module-lacks: torch.mps has no is_bf16_supported; CUDA's fell back without CUDA
""",
        )

    def test_hn411(self):
        self.assertExpectedInline(
            _fixed("hn411_tf32_flags.py"),
            """\
# left HN411:6: cuDNN convolutions only: torch.backends.fp32_precision would switch matmuls too
# left HN411:7: not a literal True/False
@@ -4,2 +4,2 @@
-torch.backends.cuda.matmul.allow_tf32 = True  # allow tf32 on matmul
-torch.backends.cuda.matmul.allow_tf32 = False
+torch.set_float32_matmul_precision("high")  # allow tf32 on matmul
+torch.set_float32_matmul_precision("highest")
""",
        )

    def test_hn505(self):
        self.assertExpectedInline(
            _fixed("hn505_device_type_compare.py"),
            """\
# left HN505:10: cuda-guarded: HN412 torch.backends.cudnn.benchmark (line 11)
@@ -5,2 +5,2 @@
-    use_fused = device_type == "cuda"
-    if x.device.type != "cuda":
+    use_fused = device_type != "cpu"
+    if x.device.type == "cpu":
@@ -8 +8 @@
-    if "cuda" == x.device.type:
+    if "cpu" != x.device.type:
@@ -17 +17 @@
-    return all(d.type == "cpu" or (d.type == "cuda" and 0 <= d.index < count) for d in devices)
+    return all(d.type == "cpu" or (torch.device(d.type) == torch.accelerator.current_accelerator() and 0 <= d.index < count) for d in devices)
""",
        )

    def test_hn506(self):
        self.assertExpectedInline(
            _fixed("hn506_cuda_in_device_string.py"),
            """\
# left HN502:4: compared with: asks whether it is CUDA, kept
@@ -3,4 +3,4 @@
-device = "cuda:0"
-device_type = "cuda" if "cuda" in device else "cpu"
-pin = "cuda" in str(device)
-cpu_only = "cuda" not in device
+device = f"{torch.accelerator.current_accelerator().type}:0" if torch.accelerator.is_available() else "cpu"
+device_type = torch.device(device).type
+pin = torch.device(device).type != "cpu"
+cpu_only = torch.device(device).type == "cpu"
""",
        )

    def test_hn601(self):
        self.assertExpectedInline(
            _fixed("hn601_nccl_backend.py"),
            """\
@@ -6 +6 @@
-backend = "nccl"  # 'nccl', 'gloo', etc.
+backend = torch.distributed.Backend.default_device_backend_map.get(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")  # 'nccl', 'gloo', etc.
@@ -8 +8 @@
-parser.add_argument("--dist-backend", default="nccl", type=str)
+parser.add_argument("--dist-backend", default=torch.distributed.Backend.default_device_backend_map.get(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"), type=str)
@@ -12,2 +12,2 @@
-    dist.init_process_group(backend="nccl")
-    dist.init_process_group("nccl", init_method="env://")
+    dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(device))
+    dist.init_process_group(torch.distributed.get_default_backend_for_device(device), init_method="env://")
@@ -17 +17 @@
-    dist.init_process_group(backend="nccl")
+    dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(torch.accelerator.current_accelerator()))
""",
        )

    def test_hn601_accelerator_api(self):
        self.assertExpectedInline(
            _fixed("hn601_nccl_backend.py", "accelerator_api"),
            """\
@@ -6 +6 @@
-backend = "nccl"  # 'nccl', 'gloo', etc.
+backend = torch.distributed.Backend.default_device_backend_map.get(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")  # 'nccl', 'gloo', etc.
@@ -8 +8 @@
-parser.add_argument("--dist-backend", default="nccl", type=str)
+parser.add_argument("--dist-backend", default=torch.distributed.Backend.default_device_backend_map.get(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"), type=str)
@@ -12,2 +12,2 @@
-    dist.init_process_group(backend="nccl")
-    dist.init_process_group("nccl", init_method="env://")
+    dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(device))
+    dist.init_process_group(torch.distributed.get_default_backend_for_device(device), init_method="env://")
@@ -17 +17 @@
-    dist.init_process_group(backend="nccl")
+    dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(torch.accelerator.current_accelerator()))
""",
        )

    def test_hn509(self):
        self.assertExpectedInline(
            _fixed("hn509_cuda_device_string.py"),
            """\
# left HN509:5: unguarded: an indexed device built as a value, with no accelerator check: the accelerator's type raises without one (current_accelerator() is None) where the CUDA name did not
# left HN509:9: not a default or a built string: decide by hand
""",
        )

    def test_help_names_the_rewritten_default(self):
        self.assertExpectedInline(
            _fixed("script_idioms/help_default.py"),
            """\
@@ -9 +9 @@
-    parser.add_argument("--device", default="cuda", type=str, help="device (Use cuda or cpu Default: cuda)")
+    parser.add_argument("--device", default=torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu", type=str, help="device (Use cuda or cpu Default: the accelerator, else cpu)")
@@ -13 +13 @@
-    parser.add_argument("--eval-device", default="cuda", help="device for evaluation")
+    parser.add_argument("--eval-device", default=torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu", help="device for evaluation")
""",
        )
