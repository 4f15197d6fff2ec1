"""Per-rule before/after snapshots (expecttest: EXPECTTEST_ACCEPT=1 rewrites them) over the
fixture corpus, run exactly as generate runs them: scan, then the catalogue-driven codemod."""

import expecttest
import torch
from codemod_helpers import FIXTURES, diff, fix, rules, specs

from audits import python_scan
from patches.generate.codemods import rewrite, rewrite_steps


def _fixed(name: str, target: str = "torch") -> str:
    src = (FIXTURES / name).read_text()
    result, _ = fix(src, name, target)
    assert not result.error, result.error
    failed = "".join(f"# left {r}:{ln}: {why}\n" for r, ln, why in result.outcome.failed)
    return failed + diff(src, result.after)


class TestRuleFixtures(expecttest.TestCase):
    def test_every_fixable_rule_has_a_fixture(self):
        have = {p.name[:5].upper() for p in FIXTURES.glob("hn*.py")}
        self.assertEqual(sorted(set(specs()) - have), [])

    def test_hn507(self):
        self.assertExpectedInline(
            _fixed("hn507_legacy_cuda_tensor_type.py"),
            """\
@@ -3,3 +3,7 @@
-cuda = torch.cuda.is_available()
-Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
-scratch = torch.cuda.FloatTensor(4) if torch.cuda.is_available() else None
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+accel = torch.accelerator.is_available()
+
+
+def Tensor(*args):
+    return torch.FloatTensor(*args).to(device)
+scratch = torch.empty(4, dtype=torch.float32, device=device) if torch.accelerator.is_available() else None
@@ -9 +13 @@
-    print(torch.zeros(2, 3).type(Tensor) + ones)
+    print(torch.zeros(2, 3).to(device, torch.float32) + ones)
""",
        )

    def test_hn101(self):
        self.assertExpectedInline(
            _fixed("hn101_cuda_is_available.py"),
            """\
@@ -6 +6 @@
-    return "accelerated" if torch.cuda.is_available() else "cpu"
+    return "accelerated" if torch.accelerator.is_available() else "cpu"
""",
        )

    def test_hn102(self):
        self.assertExpectedInline(
            _fixed("hn102_cuda_device_count.py"),
            """\
@@ -1 +1 @@
-import torch.cuda as tc
+import torch
@@ -3 +3 @@
-WORLD = tc.device_count()  # one rank per device
+WORLD = torch.accelerator.device_count()  # one rank per device
""",
        )

    def test_hn103(self):
        self.assertExpectedInline(
            _fixed("hn103_cuda_current_device.py"),
            """\
@@ -1 +1 @@
-from torch import cuda
+import torch
@@ -6 +6 @@
-    return cuda.current_device()
+    return torch.accelerator.current_device_index()
""",
        )

    def test_hn104(self):
        self.assertExpectedInline(
            _fixed("hn104_cuda_set_device.py"),
            """\
@@ -5 +5 @@
-    torch.cuda.set_device(device=rank)
+    torch.accelerator.set_device_index(rank)
""",
        )

    def test_hn105(self):
        self.assertExpectedInline(
            _fixed("hn105_cuda_synchronize.py"),
            """\
@@ -2 +1,0 @@
-from torch.cuda import synchronize
@@ -6,3 +5,3 @@
-    synchronize()
-    torch.cuda.synchronize(device=dev)
-    torch.cuda.synchronize(
+    torch.accelerator.synchronize()
+    torch.accelerator.synchronize(dev)
+    torch.accelerator.synchronize(
@@ -14 +12,0 @@
-    from torch.cuda import synchronize as sync  # a function's own import
@@ -18 +16 @@
-        if isinstance(arg, torch.Tensor) and arg.is_cuda:
+        if isinstance(arg, torch.Tensor) and arg.device.type != "cpu":
@@ -22 +20 @@
-        sync()  # the check's unit: rewritten with it
+        torch.accelerator.synchronize()  # the check's unit: rewritten with it
""",
        )

    def test_hn107(self):
        self.assertExpectedInline(
            _fixed("hn107_cuda_get_device_properties.py"),
            """\
# left HN107:10: reads fields only CUDA's device properties have
@@ -5 +5 @@
-    props = torch.cuda.get_device_properties(i)
+    props = torch.get_device_module().get_device_properties(i)
""",
        )

    def test_hn108(self):
        self.assertExpectedInline(
            _fixed("hn108_cuda_get_device_name.py"),
            """\
@@ -1 +1 @@
-from torch.cuda import get_device_name
+import torch
@@ -5 +5 @@
-    return (op, get_device_name())
+    return (op, torch.get_device_module().get_device_name())
""",
        )

    def test_hn551(self):
        self.assertExpectedInline(
            _fixed("hn551_profiler_activity_cuda.py"),
            """\
@@ -6 +6 @@
-    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
+    with torch.profiler.profile(activities=[getattr(torch.profiler.ProfilerActivity, torch.accelerator.current_accelerator().type.upper())]) as p:
@@ -8 +8 @@
-    return sum(e.self_device_time_total for e in p.events() if e.device_type == DeviceType.CUDA)
+    return sum(e.self_device_time_total for e in p.events() if e.device_type != DeviceType.CPU)
""",
        )

    def test_hn553(self):
        self.assertExpectedInline(
            _fixed("hn553_profiler_cuda_sort_key.py"),
            """\
@@ -5,2 +5,2 @@
-    print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=10))
-    print(prof.key_averages().table(sort_by='cuda_memory_usage'))
+    print(prof.key_averages().table(sort_by="self_device_time_total", row_limit=10))
+    print(prof.key_averages().table(sort_by='device_memory_usage'))
""",
        )

    def test_hn510(self):
        # a private switch with its caller in the file (no tree given: the file is the tree);
        # the public one is left (callers outside may pass cuda=)
        self.assertExpectedInline(
            _fixed("hn510_cuda_flag.py"),
            """\
# left HN510:20: device-flag: public API `hn510_cuda_flag.library_paths`: callers outside the tree pass `cuda=`; a signature change is a maintainer's call
@@ -4 +4 @@
-def _include_paths(cuda: bool = False):
+def _include_paths(device_type: str = "cpu"):
@@ -6 +6 @@
-    if cuda:
+    if device_type == "cuda":
@@ -11,3 +11,3 @@
-def _build_command(source, cuda=False):
-    flags = [] if cuda else ["-DCPU_ONLY"]
-    return ["g++", source, *flags] + ["-I" + p for p in _include_paths(cuda)]
+def _build_command(source, device_type: str = "cpu"):
+    flags = [] if device_type == "cuda" else ["-DCPU_ONLY"]
+    return ["g++", source, *flags] + ["-I" + p for p in _include_paths(device_type)]
@@ -17 +17 @@
-    return _build_command(source, cuda=False)
+    return _build_command(source, device_type="cpu")
""",
        )

    def test_hn554(self):
        self.assertExpectedInline(
            _fixed("hn554_profiler_device_type_cuda.py"),
            """\
@@ -7 +7 @@
-        if evt.device_type in [DeviceType.CUDA, DeviceType.PrivateUse1]:
+        if evt.device_type != DeviceType.CPU:
""",
        )

    def test_hn201(self):
        self.assertExpectedInline(
            _fixed("hn201_cuda_stream_class.py"),
            """\
@@ -5 +5 @@
-    return torch.cuda.Stream(dev, -1)
+    return torch.Stream(dev, priority=-1)
""",
        )

    def test_hn106(self):
        self.assertExpectedInline(
            _fixed("hn106_cuda_device_context.py"),
            """\
# left HN106:10: the argument may be a torch.device: device_index takes an int
@@ -5 +5 @@
-    with torch.cuda.device(grad.get_device()):
+    with torch.accelerator.device_index(grad.get_device()):
""",
        )

    def test_hn203(self):
        self.assertExpectedInline(
            _fixed("hn203_cuda_stream_context.py"),
            """\
# left HN203:14: the stream may be None (torch.cuda.stream(None) is a no-op)
@@ -6 +6 @@
-        self.side = torch.cuda.Stream()
+        self.side = torch.Stream()
@@ -9 +9 @@
-        with torch.cuda.stream(self.side):
+        with self.side:
""",
        )

    def test_hn504(self):
        self.assertExpectedInline(
            _fixed("hn504_tensor_is_cuda.py"),
            """\
@@ -5,2 +5,2 @@
-    if t.is_cuda:
-        torch.cuda.synchronize()
+    if t.device.type != "cpu" and torch.accelerator.is_available():
+        torch.accelerator.synchronize()
""",
        )

    def test_hn202(self):
        self.assertExpectedInline(
            _fixed("hn202_cuda_event_class.py"),
            """\
@@ -3,2 +3,2 @@
-start = torch.cuda.Event(True)
-end = torch.cuda.Event(enable_timing=True, blocking=False)
+start = torch.Event(enable_timing=True)
+end = torch.Event(enable_timing=True, blocking=False)
""",
        )

    def test_hn204(self):
        self.assertExpectedInline(
            _fixed("hn204_cuda_current_stream.py"),
            """\
@@ -5 +5 @@
-    return torch.cuda.current_stream(device=dev)
+    return torch.accelerator.current_stream(dev)
""",
        )

    def test_hn206(self):
        self.assertExpectedInline(
            _fixed("hn206_cuda_stream_handle.py"),
            """\
@@ -2 +2 @@
-    return stream.cuda_stream
+    return stream.native_handle
""",
        )

    def test_hn207(self):
        self.assertExpectedInline(
            _fixed("hn207_cuda_set_stream.py"),
            """\
@@ -5 +5 @@
-    torch.cuda.set_stream(stream=s)
+    torch.accelerator.set_stream(stream=s)
""",
        )

    def test_hn301(self):
        self.assertExpectedInline(
            _fixed("hn301_cuda_memory_stats.py"),
            """\
@@ -5,2 +5,3 @@
-    torch.cuda.reset_peak_memory_stats(device=dev)
-    return torch.cuda.max_memory_allocated(dev), torch.cuda.memory_reserved()
+    if torch.accelerator.is_available():
+        torch.accelerator.reset_peak_memory_stats(dev)
+    return (torch.accelerator.max_memory_allocated(dev) if torch.accelerator.is_available() else 0), (torch.accelerator.memory_reserved() if torch.accelerator.is_available() else 0)
@@ -11 +12 @@
-    return torch.cuda.memory_stats(dev)["allocated_bytes.all.peak"]
+    return torch.accelerator.max_memory_allocated(dev) if torch.accelerator.is_available() else 0
""",
        )

    def test_hn302(self):
        self.assertExpectedInline(
            _fixed("hn302_cuda_empty_cache.py"),
            """\
@@ -8 +8,2 @@
-    torch.cuda.empty_cache()
+    if torch.accelerator.is_available():
+        torch.accelerator.empty_cache()
""",
        )

    def test_hn420(self):
        self.assertExpectedInline(
            _fixed("hn420_cuda_sdp_kernel.py"),
            """\
@@ -5 +5 @@
-with torch.backends.cuda.sdp_kernel(enable_math=True, enable_flash=False, enable_mem_efficient=False):
+with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.MATH, torch.nn.attention.SDPBackend.CUDNN_ATTENTION]):
""",
        )

    def test_hn511(self):
        self.assertExpectedInline(
            _fixed("hn511_cuda_default_tensor_type.py"),
            """\
# left HN511:23: not a statement of its own
@@ -9 +9 @@
-if torch.cuda.is_available():
+if torch.accelerator.is_available():
@@ -11 +11,2 @@
-        torch.set_default_tensor_type("torch.cuda.FloatTensor")  # SSD's train.py shape
+        torch.set_default_device(torch.accelerator.current_accelerator())  # SSD's train.py shape
+        torch.set_default_dtype(torch.float32)
@@ -19 +20,2 @@
-    torch.set_default_tensor_type('torch.cuda.HalfTensor')  # the dtype of the type
+    torch.set_default_device(torch.accelerator.current_accelerator())  # the dtype of the type
+    torch.set_default_dtype(torch.float16)
""",
        )

    def test_hn303(self):
        self.assertExpectedInline(
            _fixed("hn303_cuda_mem_get_info.py"),
            """\
# left HN303:3: no is_available() check around it
""",
        )

    def test_hn310(self):
        self.assertExpectedInline(
            _fixed("hn310_cuda_manual_seed.py"),
            """\
@@ -5 +5 @@
-    torch.cuda.manual_seed_all(seed)
+    torch.manual_seed(seed)
""",
        )

    def test_hn313(self):
        self.assertExpectedInline(
            _fixed("hn313_cuda_rng_state.py"),
            """\
@@ -6,2 +6,2 @@
-    if torch.cuda.is_available():
-        return host, torch.cuda.get_rng_state()
+    if torch.accelerator.is_available():
+        return host, torch.get_device_module().get_rng_state()
""",
        )

    def test_hn113(self):
        self.assertExpectedInline(
            _fixed("hn113_cuda_init.py"),
            """\
# left HN113:10: no accelerator is_available() check around it
@@ -5,2 +5,2 @@
-    if torch.cuda.is_available() and devices:
-        torch.cuda.init()
+    if torch.accelerator.is_available() and devices:
+        torch.get_device_module(torch.accelerator.current_accelerator()).init()
""",
        )

    def test_hn114(self):
        self.assertExpectedInline(
            _fixed("hn114_cuda_sleep.py"),
            """\
# left HN114:10: no device in scope known not to be the CPU (torch.cpu has no _sleep)
@@ -6 +6 @@
-        torch.cuda._sleep(cycles)
+        torch.get_device_module(device)._sleep(cycles)
""",
        )

    def test_hn115(self):
        self.assertExpectedInline(
            _fixed("hn115_cuda_mem_pool.py"),
            """\
# left HN115:11: no `device` bound before the call in scope: whose pool?
# left HN115:11: no `device` bound before the call in scope: whose pool?
@@ -5,2 +5,2 @@
-    pool = torch.cuda.MemPool()
-    with torch.cuda.use_mem_pool(pool):
+    pool = torch.get_device_module(device).MemPool()
+    with torch.get_device_module(device).use_mem_pool(pool):
""",
        )

    def test_hn216(self):
        self.assertExpectedInline(
            _fixed("hn216_stream_capturing.py"),
            """\
@@ -5 +5 @@
-    if torch.cuda.is_current_stream_capturing():
+    if torch.accelerator.is_available() and torch.accelerator.current_stream().is_capturing():
""",
        )

    def test_hn311(self):
        self.assertExpectedInline(
            _fixed("hn311_cuda_seed.py"),
            """\
@@ -3 +3 @@
-torch.cuda.seed()
+torch.seed()
""",
        )

    def test_hn401(self):
        self.assertExpectedInline(
            _fixed("hn401_cuda_amp_autocast.py"),
            """\
# left HN401:10: torch.amp.autocast needs device_type: no device_type or device in scope to pass
# left HN401:16: torch.amp.autocast needs device_type: no device_type or device in scope to pass
@@ -5 +5 @@
-    with torch.cuda.amp.autocast(dtype=torch.bfloat16):
+    with torch.amp.autocast(device_type, dtype=torch.bfloat16):
""",
        )

    def test_hn402(self):
        self.assertExpectedInline(
            _fixed("hn402_cuda_amp_grad_scaler.py"),
            """\
@@ -5 +5 @@
-    return torch.cuda.amp.GradScaler(init_scale=2.0**12)
+    return torch.amp.GradScaler(torch.device(device).type, init_scale=2.0**12)
""",
        )

    def test_hn403(self):
        self.assertExpectedInline(
            _fixed("hn403_cuda_amp_custom_fwd_bwd.py"),
            """\
@@ -5 +5 @@
-    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
+    @torch.amp.custom_fwd(cast_inputs=torch.float32, device_type=device_type)
""",
        )

    def test_hn501(self):
        self.assertExpectedInline(
            _fixed("hn501_tensor_cuda_method.py"),
            """\
# left HN502:13: a parameter's default: the API's own choice, kept
# left HN502:17: a parameter's default: the API's own choice, kept
# left HN501:32: a project class with its own `cuda()` method
# left HN501:40: `cuda()` argument `device_id`
# left HN501:41: `cuda()` argument `device`
# left HN501:23: cuda-function: inside cuda
@@ -0,0 +1 @@
+import torch
@@ -2,2 +3,2 @@
-    x = make().cuda()
-    y = make().cuda(non_blocking=True)
+    x = make().to(device)
+    y = make().to(device, non_blocking=True)
@@ -8 +9 @@
-    z = make().cuda(1)
+    z = make().to(torch.device(1))
@@ -14 +15 @@
-        self.model = load().half().cuda()
+        self.model = load().half().to(torch.accelerator.current_accelerator())
@@ -18 +19 @@
-    return load().cuda()
+    return load().to(device)
@@ -36 +37 @@
-        return self.net.cuda()
+        return self.net.to(torch.accelerator.current_accelerator())
""",
        )

    def test_hn502(self):
        self.assertExpectedInline(
            _fixed("hn502_cuda_device_literal.py"),
            """\
# left HN502:17: no `device` variable bound before it in scope
# left HN502:17: no `device` variable bound before it in scope
# left HN502:25: a parameter's default: the API's own choice, kept
@@ -5,5 +5,5 @@
-    x = torch.zeros(3, device="cuda")
-    y = x.to("cuda", non_blocking=True)
-    state = torch.load("ckpt.pt", map_location="cuda")
-    z = x.to("cuda:1")                       # an index: left for a human
-    g = torch.Generator("cuda")              # a generator's device, positional
+    x = torch.zeros(3, device=device)
+    y = x.to(device, non_blocking=True)
+    state = torch.load("ckpt.pt", map_location=device)
+    z = x.to(f"{torch.accelerator.current_accelerator().type}:1")                       # an index: left for a human
+    g = torch.Generator(device)              # a generator's device, positional
@@ -11 +11 @@
-    if x.device.type == "cuda":              # a comparison: CUDA-specific on purpose
+    if x.device.type != "cpu":              # a comparison: CUDA-specific on purpose
@@ -21,2 +21,2 @@
-    device = "cuda"                          # where the device is picked: stays
-    return x.to("cuda")
+    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"                          # where the device is picked: stays
+    return x.to(device)
""",
        )

    def test_hn503(self):
        self.assertExpectedInline(
            _fixed("hn503_torch_device_cuda.py"),
            """\
# left HN503:7: compared with: asks whether it is CUDA, kept
# left HN503:19: no `device` variable bound before it in scope
# left HN503:24: no `device` variable bound before it in scope
# left HN503:9: cuda-required: 'not on cuda:1'; cuda-statement: 'not on cuda:1' (line 9)
@@ -5,2 +5,2 @@
-    batch = batch.to(torch.device("cuda"))
-    out = torch.empty(4, device=torch.device("cuda"))
+    batch = batch.to(device)
+    out = torch.empty(4, device=device)
@@ -14,2 +14,2 @@
-    device = torch.device("cuda")                # where the device is picked: stays
-    return model.to(torch.device("cuda")), device
+    device = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")                # where the device is picked: stays
+    return model.to(device), device
""",
        )

    def test_device_literals_need_unsafe_fixes(self):
        for name in ("hn502_cuda_device_literal.py", "hn503_torch_device_cuda.py"):
            src = (FIXTURES / name).read_text()
            result, found = fix(src, name, unsafe=False)
            self.assertTrue({"HN502", "HN503"} & {f.rule for f in found})
            self.assertFalse(result.changed, name)

    def test_hn701(self):
        self.assertExpectedInline(
            _fixed("hn701_only_cuda_decorator.py"),
            """\
@@ -1 +1 @@
-from torch.testing._internal.common_device_type import dtypes, onlyCUDA
+from torch.testing._internal.common_device_type import dtypes, onlyAccelerator
@@ -5 +5 @@
-    @onlyCUDA
+    @onlyAccelerator
""",
        )

    def test_hn704(self):
        self.assertExpectedInline(
            _fixed("hn704_test_cuda_flag.py"),
            """\
# left HN704:12: cuda-required: the skip's reason 'cuDNN stays CUDA-only'
@@ -4 +4 @@
-from torch.testing._internal.common_utils import TEST_CUDA, TEST_CUDNN
+from torch.testing._internal.common_utils import TEST_ACCELERATOR, TEST_CUDNN
@@ -7 +7 @@
-@unittest.skipIf(not TEST_CUDA, "CUDA not available")
+@unittest.skipIf(not TEST_ACCELERATOR, "CUDA not available")
""",
        )

    def test_hn705(self):
        self.assertExpectedInline(
            _fixed("hn705_test_multigpu_flag.py"),
            """\
@@ -3 +3 @@
-from torch.testing._internal.common_utils import TEST_MULTIGPU
+from torch.testing._internal.common_utils import TEST_MULTIACCELERATOR
@@ -6 +6 @@
-@unittest.skipIf(not TEST_MULTIGPU, "needs 2 GPUs")
+@unittest.skipIf(not TEST_MULTIACCELERATOR, "needs 2 GPUs")
""",
        )

    def test_accelerator_api_target(self):
        self.assertExpectedInline(
            _fixed("hn105_cuda_synchronize.py", "accelerator_api"),
            """\
@@ -0,0 +1 @@
+import accelerator_api
@@ -2 +2,0 @@
-from torch.cuda import synchronize
@@ -6,3 +6,3 @@
-    synchronize()
-    torch.cuda.synchronize(device=dev)
-    torch.cuda.synchronize(
+    accelerator_api.synchronize()
+    accelerator_api.synchronize(dev)
+    accelerator_api.synchronize(
@@ -14 +13,0 @@
-    from torch.cuda import synchronize as sync  # a function's own import
@@ -18 +17 @@
-        if isinstance(arg, torch.Tensor) and arg.is_cuda:
+        if isinstance(arg, torch.Tensor) and arg.device.type != "cpu":
@@ -22 +21 @@
-        sync()  # the check's unit: rewritten with it
+        accelerator_api.synchronize()  # the check's unit: rewritten with it
""",
        )
        self.assertExpectedInline(
            _fixed("hn401_cuda_amp_autocast.py", "accelerator_api"),
            """\
@@ -0,0 +1 @@
+import accelerator_api
@@ -5 +6 @@
-    with torch.cuda.amp.autocast(dtype=torch.bfloat16):
+    with accelerator_api.autocast(dtype=torch.bfloat16):
@@ -10 +11 @@
-    with torch.cuda.amp.autocast():
+    with accelerator_api.autocast():
@@ -16 +17 @@
-    with torch.cuda.amp.autocast(enabled=False):
+    with accelerator_api.autocast(enabled=False):
""",
        )

    def test_safe_only_by_default_leaves_review_rules(self):
        src = (FIXTURES / "hn302_cuda_empty_cache.py").read_text()
        result, found = fix(src, unsafe=False)
        self.assertEqual([f.rule for f in found], ["HN302"])
        self.assertEqual(result.after, src)


def test_region_rewrite_equals_the_whole_file_rewrite():
    """Regions (statements, headers, decorators, elif, `a; b`, a block's only import) give the
    same file as one libcst pass over the whole file."""
    pad = "".join(
        f'\n\ndef pad{i}(x):\n    """keep me"""\n    return x + {i}  # {i}\n' for i in range(5)
    )
    src = (
        (FIXTURES / "hn105_cuda_synchronize.py").read_text()
        + pad
        + (
            "\n\nTEST_CUDA_LOCAL = 1\n\n\ndef late(dev):\n    torch.cuda.synchronize(device=dev)\n"
            "    if dev:\n        pass\n    elif torch.cuda.synchronize(dev):  # c\n        pass\n"
            "    x = 1; torch.cuda.synchronize()\n"
            "    try:\n        pass\n    except torch.cuda.synchronize():\n        pass\n\n\n"
            "@deco(torch.cuda.synchronize())\nclass K(\n        Base):\n    pass\n"
        )
    )
    lines = [i for i, ln in enumerate(src.splitlines(), 1) if "synchronize(" in ln]
    gated = [(specs()["HN105"], frozenset(lines))]
    regional = rewrite(src, "big.py", gated)
    whole = rewrite(src, "big.py", gated, whole_file=True)
    assert not regional.error and regional.after == whole.after != src
    assert regional.after.count("torch.accelerator.synchronize(") == len(lines)
    compile(regional.after, "big.py", "exec")


def test_steps_apply_in_order_from_one_analysis():
    src = (
        FIXTURES / "hn105_cuda_synchronize.py"
    ).read_text() + "\n\ndef more():\n    torch.cuda.empty_cache()\n"
    found, _ = python_scan.scan_source(src.encode(), "x.py", rules())
    by = {}
    for f in found:
        by.setdefault(f.rule, set()).add(f.line)
    sp = specs()
    groups = [[(sp[r], frozenset(by[r]))] for r in ("HN105", "HN302")]
    one, two = rewrite_steps(src, "x.py", groups)
    assert one.before == src and two.before == one.after
    assert "torch.cuda.empty_cache()" in one.after and "synchronize(" not in one.after.replace(
        "accelerator.synchronize(", ""
    )
    assert two.after == rewrite(src, "x.py", [g[0] for g in groups]).after
    assert [r for r, _ in two.outcome.applied] == ["HN302"]


def test_long_statements_are_narrowed_to_their_elements(monkeypatch):
    """A statement over BIG lines (op_db is 20k) is rewritten element by element; same result."""
    import importlib

    regions = importlib.import_module(
        "patches.generate.codemods.regions"
    )  # the module, not the function
    src = (
        "import torch\n\ndef f(dev):\n    table = [\n        make(1,\n             2),\n"
        "        torch.cuda.synchronize(\n            dev), torch.cuda.current_device(),\n"
        '        {"k": torch.cuda.synchronize(device=dev)},  # c\n'
        "        g(torch.cuda.synchronize(),\n          3),\n    ]\n    return table\n"
    )
    whole, _ = fix(src)
    monkeypatch.setattr(regions, "BIG", 1)
    narrowed, _ = fix(src)
    assert not narrowed.error and narrowed.after == whole.after
    assert narrowed.after.count("torch.accelerator.") == 4


class TestTestGates(expecttest.TestCase):
    def test_skipif_not_cuda_available_in_a_test_file(self):
        """Upstream's form; the import joins the existing common_utils import; `skipIf(cuda)`
        (CPU-only tests) is not a gate and gets the plain rename."""
        src = (FIXTURES / "hn101_skipif_test_gate.py").read_text()
        result, _ = fix(src, "test/test_ops.py")
        assert not result.error, result.error
        self.assertExpectedInline(
            diff(src, result.after),
            """\
@@ -4 +4 @@
-from torch.testing._internal.common_utils import TestCase, run_tests
+from torch.testing._internal.common_utils import TestCase, run_tests, TEST_ACCELERATOR
@@ -8 +8 @@
-    @unittest.skipIf(not torch.cuda.is_available(), "CUDA not available")
+    @unittest.skipIf(not TEST_ACCELERATOR, "CUDA not available")
@@ -12 +12 @@
-    @unittest.skipUnless(torch.cuda.is_available(), "needs CUDA")  # gate
+    @unittest.skipUnless(TEST_ACCELERATOR, "needs CUDA")  # gate
@@ -16 +16 @@
-    @unittest.skipIf(torch.cuda.is_available(), "CPU-only behaviour")
+    @unittest.skipIf(torch.accelerator.is_available(), "CPU-only behaviour")
""",
        )

    def test_outside_test_files_the_plain_rename_applies(self):
        src = (FIXTURES / "hn101_skipif_test_gate.py").read_text()
        result, _ = fix(src, "pkg/ops.py")
        assert "TEST_ACCELERATOR" not in result.after
        assert result.after.count("torch.accelerator.is_available()") == 3


def test_a_local_import_of_torch_is_enough():
    """A module that imports torch lazily inside the function keeps doing so."""
    src = "import os\n\n\ndef f():\n    import torch\n\n    torch.cuda.synchronize()\n"
    result, _ = fix(src, "tool.py")
    assert result.after == src.replace("torch.cuda.synchronize", "torch.accelerator.synchronize")


class TestIndexedCuda(expecttest.TestCase):
    def test_cuda_index_with_a_device_type_in_scope(self):
        self.assertExpectedInline(
            _fixed("hn501_cuda_index_device_type.py"),
            """\
# left HN501:8: device index argument
@@ -0,0 +1 @@
+import torch
@@ -2,2 +3,2 @@
-    a = x.cuda(rank)
-    b = x.cuda(rank, non_blocking=True)
+    a = x.to(torch.device(device_type, rank))
+    b = x.to(torch.device(device_type, rank), non_blocking=True)
""",
        )


class TestIsAvailableGuards(expecttest.TestCase):
    """HN101: the neutral predicate only where what it guards is neutral too."""

    def test_device_pick_idiom_takes_the_current_accelerator(self):
        self.assertExpectedInline(
            _fixed("hn101_device_pick.py"),
            """\
@@ -5 +5 @@
-    return "cuda" if torch.cuda.is_available() else "cpu"
+    return torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -9 +9 @@
-    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
+    return torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
@@ -13,2 +13,2 @@
-    first = "cuda:0" if torch.cuda.is_available() else "cpu"
-    return torch.device("cuda", 1) if torch.cuda.is_available() else first
+    first = f"{torch.accelerator.current_accelerator().type}:0" if torch.accelerator.is_available() else "cpu"
+    return torch.device(torch.accelerator.current_accelerator().type, 1) if torch.accelerator.is_available() else first
@@ -18,4 +18 @@
-    if torch.cuda.is_available():
-        device = "cuda"
-    else:
-        device = "cpu"
+    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
""",
        )

    def test_gate_stays_where_the_guarded_code_stays_cuda(self):
        self.assertExpectedInline(
            _fixed("hn101_guarded_cuda.py"),
            """\
# left HN101:7: cuda-guarded: HN304 torch.cuda.memory_snapshot (line 8)
# left HN101:20: cuda-guarded: HN412 torch.backends.cudnn.benchmark (line 22)
# left HN101:21: cuda-guarded: HN412 torch.backends.cudnn.benchmark (line 22)
@@ -14,3 +14,3 @@
-    if torch.cuda.is_available() and x.is_cuda:
-        torch.cuda.synchronize()
-    return x.cuda() if torch.cuda.is_available() else x
+    if torch.accelerator.is_available() and x.device.type != "cpu":
+        torch.accelerator.synchronize()
+    return x.to(device) if torch.accelerator.is_available() else x
@@ -26 +26 @@
-    @unittest.skipIf(not torch.cuda.is_available(), "needs CUDA")
+    @unittest.skipIf(not torch.accelerator.is_available(), "needs CUDA")
@@ -28 +28 @@
-        x = torch.ones(3).cuda()
+        x = torch.ones(3).to(torch.accelerator.current_accelerator())
""",
        )

    def test_rewritten_pick_runs_and_names_no_cuda(self):
        """The regression validate found: the predicate changed, the "cuda" literal stayed."""
        src = 'import torch\n\nDEV = "cuda" if torch.cuda.is_available() else "cpu"\n'
        result, _ = fix(src, "pkg/ops.py")
        assert '"cuda"' not in result.after and "torch.cuda" not in result.after, result.after
        ns: dict = {}
        exec(compile(result.after, "ops.py", "exec"), ns)
        assert ns["DEV"] == (
            torch.accelerator.current_accelerator().type
            if torch.accelerator.is_available()
            else "cpu"
        )


class TestOwnEffect(expecttest.TestCase):
    def test_hn116(self):
        self.assertExpectedInline(
            _fixed("hn116_cuda_own_effect.py"),
            """\
# left HN116:13: its value is used: kept
# left HN116:23: its value is used: kept
# left HN101:14: cuda-guarded: HN116 torch.cuda.nvtx.mark (line 15)
# left HN101:20: cuda-guarded: HN116 torch.cuda.nvtx.range (line 21)
# left HN116:15: cuda-branch: HN101 torch.cuda.is_available (line 14)
# left HN116:21: cuda-branch: HN101 torch.cuda.is_available (line 20)
@@ -1,0 +2,2 @@
+
+import contextlib
@@ -5,8 +7,15 @@
-torch.cuda.set_per_process_memory_fraction(0.5)
-torch.cuda.memory._record_memory_history(max_entries=1000)
-model = torch.nn.Linear(8, 8).cuda()
-torch.cuda.nvtx.range_push("forward")
-y = model(torch.randn(4, 8).cuda())
-torch.cuda.nvtx.range_pop()
-torch.cuda.profiler.stop()
-print(torch.cuda.memory_summary(abbreviated=True))
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+if torch.cuda.is_available():
+    torch.cuda.set_per_process_memory_fraction(0.5)
+if torch.cuda.is_available():
+    torch.cuda.memory._record_memory_history(max_entries=1000)
+model = torch.nn.Linear(8, 8).to(device)
+if torch.cuda.is_available():
+    torch.cuda.nvtx.range_push("forward")
+y = model(torch.randn(4, 8).to(device))
+if torch.cuda.is_available():
+    torch.cuda.nvtx.range_pop()
+if torch.cuda.is_available():
+    torch.cuda.profiler.stop()
+if torch.cuda.is_available():
+    print(torch.cuda.memory_summary(abbreviated=True))
@@ -16 +25 @@
-with torch.cuda.nvtx.range("backward"):  # a range as a context: CUDA's, else a null context
+with torch.cuda.nvtx.range("backward") if torch.cuda.is_available() else contextlib.nullcontext():  # a range as a context: CUDA's, else a null context
@@ -18,2 +27,2 @@
-with torch.cuda.profiler.profile(), torch.autograd.profiler.emit_nvtx(record_shapes=True):
-    model(torch.randn(4, 8).cuda())
+with torch.cuda.profiler.profile() if torch.cuda.is_available() else contextlib.nullcontext(), torch.autograd.profiler.emit_nvtx(record_shapes=True) if torch.cuda.is_available() else contextlib.nullcontext():
+    model(torch.randn(4, 8).to(device))
@@ -24 +33 @@
-with torch.autograd.profiler.emit_nvtx():  # no CUDA word on its lines: found by "nvtx"
+with torch.autograd.profiler.emit_nvtx() if torch.cuda.is_available() else contextlib.nullcontext():  # no CUDA word on its lines: found by "nvtx"
@@ -26,2 +35,4 @@
-torch.cuda.memory._dump_snapshot("snapshot.pickle")
-torch.cuda.ipc_collect()
+if torch.cuda.is_available():
+    torch.cuda.memory._dump_snapshot("snapshot.pickle")
+if torch.cuda.is_available():
+    torch.cuda.ipc_collect()
""",
        )

    def test_hn116_library(self):
        self.assertExpectedInline(
            _fixed("hn116_cuda_own_library.py"),
            """\
# left HN116:7: CUDA's own call in library code: kept
# left HN116:12: CUDA's own call in library code: kept
""",
        )
