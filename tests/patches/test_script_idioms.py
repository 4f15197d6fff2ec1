"""Before/after snapshots of the training-script units (fixtures/script_idioms): the device-pick
block, a derived device type tested with startswith, a bare synchronize in a script that runs on
the CPU, the per-backend sync helper, ``.cuda()`` in a script with no device, ``.cuda(i)`` in a
script, a memory counter already under a check; each with its look-alike negatives (left, with
the reason). Run as generate runs them (scan, intent gate, codemod; EXPECTTEST_ACCEPT=1)."""

import expecttest
from codemod_helpers import FIXTURES, fix, snapshot

DIR = FIXTURES / "script_idioms"


def _fixed(name: str, target: str = "torch") -> str:
    return snapshot(DIR / name, target)


class TestScriptIdioms(expecttest.TestCase):
    def test_pick_block(self):
        self.assertExpectedInline(
            _fixed("pick_block.py"),
            """\
# left HN101:23: cuda-guarded: torch.backends.mps.is_available (line 25)
# left HN101:36: cuda-guarded: torch.backends.mps.is_available (line 38)
# left HN502:24: cuda-branch: HN101 torch.cuda.is_available (line 23)
# left HN502:37: cuda-branch: HN101 torch.cuda.is_available (line 36)
@@ -4,6 +4 @@
-if torch.cuda.is_available():
-    device = "cuda"
-elif torch.backends.mps.is_available():
-    device = "mps"
-else:
-    device = "cpu"
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -14,4 +9,2 @@
-    if torch.cuda.is_available():
-        dev = torch.device("cuda")
-    elif hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
-        dev = torch.device("mps")
+    if torch.accelerator.is_available():
+        dev = torch.accelerator.current_accelerator()
@@ -45 +38 @@
-    if torch.cuda.is_available():
+    if torch.accelerator.is_available():
@@ -47 +40 @@
-            device = torch.device("cuda:{}".format(args.gpu))
+            device = torch.device(torch.accelerator.current_accelerator().type, args.gpu)
@@ -49,3 +42 @@
-            device = torch.device("cuda")
-    elif torch.backends.mps.is_available():
-        device = torch.device("mps")
+            device = torch.accelerator.current_accelerator()
@@ -59 +50 @@
-    if torch.cuda.is_available():
+    if torch.accelerator.is_available():
@@ -61,2 +52,2 @@
-            device = torch.device("cuda:{}".format(args.gpu))
-            torch.cuda.set_device(args.gpu)
+            device = torch.device("{}:{}".format(torch.accelerator.current_accelerator().type, args.gpu))
+            torch.accelerator.set_device_index(args.gpu)
@@ -64 +55 @@
-            device = torch.device("cuda")
+            device = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
""",
        )

    def test_pick_block_accelerator_api(self):
        self.assertExpectedInline(
            _fixed("pick_block.py", "accelerator_api"),
            """\
# left HN101:23: cuda-guarded: torch.backends.mps.is_available (line 25)
# left HN101:36: cuda-guarded: torch.backends.mps.is_available (line 38)
# left HN502:24: cuda-branch: HN101 torch.cuda.is_available (line 23)
# left HN502:37: cuda-branch: HN101 torch.cuda.is_available (line 36)
@@ -0,0 +1 @@
+import accelerator_api
@@ -4,6 +5 @@
-if torch.cuda.is_available():
-    device = "cuda"
-elif torch.backends.mps.is_available():
-    device = "mps"
-else:
-    device = "cpu"
+device = accelerator_api.device_type()
@@ -14,4 +10 @@
-    if torch.cuda.is_available():
-        dev = torch.device("cuda")
-    elif hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
-        dev = torch.device("mps")
+    dev = torch.device(accelerator_api.device_type())
@@ -45 +38 @@
-    if torch.cuda.is_available():
+    if torch.accelerator.is_available():
@@ -47 +40 @@
-            device = torch.device("cuda:{}".format(args.gpu))
+            device = torch.device(torch.accelerator.current_accelerator().type, args.gpu)
@@ -49,3 +42 @@
-            device = torch.device("cuda")
-    elif torch.backends.mps.is_available():
-        device = torch.device("mps")
+            device = torch.accelerator.current_accelerator()
@@ -59 +50 @@
-    if torch.cuda.is_available():
+    if accelerator_api.is_available():
@@ -61,2 +52,2 @@
-            device = torch.device("cuda:{}".format(args.gpu))
-            torch.cuda.set_device(args.gpu)
+            device = torch.device("{}:{}".format(accelerator_api.device_type(), args.gpu))
+            accelerator_api.set_device_index(args.gpu)
@@ -64 +55 @@
-            device = torch.device("cuda")
+            device = torch.device(accelerator_api.device_type())
""",
        )

    def test_pick_expression(self):
        self.assertExpectedInline(
            _fixed("pick_expression.py"),
            """\
# left HN101:16: cuda-statement: 'mps' (line 16)
# left HN509:16: cuda-statement: 'mps' (line 16)
@@ -5,5 +5 @@
-    "cuda"
-    if torch.cuda.is_available()
-    else "mps"
-    if torch.backends.mps.is_available()
-    else "cpu"
+    torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -11 +7 @@
-dev = torch.device("cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu")
+dev = torch.device(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")
""",
        )

    def test_pick_over_several_backends(self):
        """The Quickstart's pick in its spellings (MPS first, torch.mps, XPU, devices): one
        neutral expression of the pick's own type; the script's own CUDA tests stay (the name
        may be "mps"); look-alikes left."""
        self.assertExpectedInline(
            _fixed("pick_arms.py"),
            """\
# left HN505:6: its subject may be another backend's device (a pick over MPS too), kept
# left HN505:22: its subject may be another backend's device (a pick over MPS too), kept
# left HN101:31: cuda-statement: 'mps' (line 31)
# left HN101:33: cuda-statement: 'mps' (line 33)
# left HN101:35: cuda-statement: 'mps' (line 35)
# left HN101:37: cuda-statement: 'xpu' (line 37)
# left HN108:7: cuda-branch: 'cuda' (line 6)
# left HN509:31: cuda-statement: 'mps' (line 31)
# left HN509:33: cuda-statement: 'mps' (line 33)
# left HN509:35: cuda-statement: 'mps' (line 35)
# left HN509:37: cuda-statement: 'xpu' (line 37)
@@ -4 +4 @@
-device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -10 +10 @@
-dev = "mps" if torch.mps.is_available() else "cuda" if torch.cuda.is_available() else "cpu"
+dev = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -14,7 +14 @@
-    torch.device("cuda")
-    if torch.cuda.is_available()
-    else torch.device("xpu")
-    if torch.xpu.is_available()
-    else torch.device("mps")
-    if torch.backends.mps.is_available()
-    else torch.device("cpu")
+    torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
@@ -26 +20 @@
-where = torch.device("cuda" if torch.cuda.is_available() else "xpu" if torch.xpu.is_available() else "cpu")
+where = torch.device(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")
""",
        )

    def test_pick_over_several_backends_accelerator_api(self):
        self.assertExpectedInline(
            _fixed("pick_arms.py", "accelerator_api"),
            """\
# left HN505:6: its subject may be another backend's device (a pick over MPS too), kept
# left HN505:22: its subject may be another backend's device (a pick over MPS too), kept
# left HN101:31: cuda-statement: 'mps' (line 31)
# left HN101:33: cuda-statement: 'mps' (line 33)
# left HN101:35: cuda-statement: 'mps' (line 35)
# left HN101:37: cuda-statement: 'xpu' (line 37)
# left HN108:7: cuda-branch: 'cuda' (line 6)
# left HN509:31: cuda-statement: 'mps' (line 31)
# left HN509:33: cuda-statement: 'mps' (line 33)
# left HN509:35: cuda-statement: 'mps' (line 35)
# left HN509:37: cuda-statement: 'xpu' (line 37)
@@ -0,0 +1 @@
+import accelerator_api
@@ -4 +5 @@
-device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
+device = accelerator_api.device_type()
@@ -10 +11 @@
-dev = "mps" if torch.mps.is_available() else "cuda" if torch.cuda.is_available() else "cpu"
+dev = accelerator_api.device_type()
@@ -14,7 +15 @@
-    torch.device("cuda")
-    if torch.cuda.is_available()
-    else torch.device("xpu")
-    if torch.xpu.is_available()
-    else torch.device("mps")
-    if torch.backends.mps.is_available()
-    else torch.device("cpu")
+    torch.device(accelerator_api.device_type())
@@ -26 +21 @@
-where = torch.device("cuda" if torch.cuda.is_available() else "xpu" if torch.xpu.is_available() else "cpu")
+where = torch.device(accelerator_api.device_type())
""",
        )

    def test_pick_function(self):
        """A function that is only the pick by returns: one return; look-alikes left."""
        self.assertExpectedInline(
            _fixed("pick_arms_fn.py"),
            """\
# left HN101:34: cuda-guarded: torch.backends.mps.is_available (line 36)
# left HN101:44: cuda-guarded: torch.backends.mps.is_available (line 46)
# left HN101:54: cuda-guarded: torch.backends.mps.is_available (line 56)
# left HN509:35: cuda-branch: HN101 torch.cuda.is_available (line 34)
# left HN509:45: cuda-branch: HN101 torch.cuda.is_available (line 44)
# left HN509:55: cuda-branch: HN101 torch.cuda.is_available (line 54)
@@ -5,5 +5 @@
-    if torch.cuda.is_available():
-        return "cuda"
-    if torch.backends.mps.is_available():
-        return "mps"
-    return "cpu"
+    return torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -14,8 +10 @@
-    if torch.backends.mps.is_available():
-        return torch.device("mps")
-    elif torch.cuda.is_available():
-        return torch.device("cuda")
-    elif torch.xpu.is_available():
-        return torch.device("xpu")
-    else:
-        return torch.device("cpu")
+    return torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
@@ -25,5 +14 @@
-    if torch.cuda.is_available():
-        return torch.device("cuda")
-    elif torch.backends.mps.is_available():
-        return torch.device("mps")
-    return torch.device("cpu")
+    return torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
""",
        )

    def test_derived_type_startswith(self):
        self.assertExpectedInline(
            _fixed("derived_type.py"),
            """\
# left HN509:11: cuda-statement: 'mps' (line 11)
@@ -5 +5 @@
-    device_type = "cuda" if device.startswith("cuda") else "cpu"
+    device_type = torch.device(device).type
""",
        )

    def test_cuda_in_a_device_type(self):
        # "cuda" in device.type: the type string tested as it is; other operands wrapped
        self.assertExpectedInline(
            _fixed("device_type_in.py"),
            """\
@@ -6 +6 @@
-    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
+    return torch.device(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")
@@ -11,2 +11,2 @@
-    if "cuda" in device.type:  # a device's type is a type string: tested as it is
-        config["cuda device name"] = torch.cuda.get_device_name(local_rank)
+    if device.type != "cpu":  # a device's type is a type string: tested as it is
+        config["cuda device name"] = torch.get_device_module().get_device_name(local_rank)
@@ -18 +18 @@
-    return "cuda" in str(x.device.type)
+    return x.device.type != "cpu"
@@ -23 +23 @@
-    return "cuda" in opt.type
+    return torch.device(opt.type).type != "cpu"
@@ -28 +28 @@
-    return "cuda" in device
+    return torch.device(device).type != "cpu"
""",
        )

    def test_autocast_follows_the_device_the_function_holds(self):
        # autocast("cuda") where the function hands one plain device expression as device=:
        # torch.device(<it>).type; several, a call, a CUDA-named one or none: left, saying why
        self.assertExpectedInline(
            _fixed("autocast_held.py"),
            """\
# left HN502:24: no device in scope for autocast's device type
# left HN502:32: no device in scope for autocast's device type
# left HN502:38: no device in scope for autocast's device type
# left HN502:44: no device in scope for autocast's device type
# left HN502:59: no device in scope for autocast's device type
@@ -8 +8 @@
-        with autocast("cuda", enabled=with_amp):
+        with autocast(torch.device(config.device).type, enabled=with_amp):
@@ -18 +18 @@
-        with torch.autocast("cuda"):
+        with torch.autocast(torch.device(self.device).type):
@@ -51 +51 @@
-    with torch.autocast("cuda", **engine.amp_kwargs):
+    with torch.autocast(torch.device(engine.state.device).type, **engine.amp_kwargs):
""",
        )

    def test_a_parameter_that_defaults_to_none_is_no_device(self):
        # `device=None` assigned nowhere before the site may hold no value (MONAI resolves it
        # into `device_`), a CPU default or a `device = "cpu"` holds the CPU, a local bound on
        # one path may be unbound: none is the device a `.cuda()`, `.to("cuda")` or autocast
        # follows
        self.assertExpectedInline(
            _fixed("device_param_none.py"),
            """\
# left HN502:8: no `device` variable bound before it in scope
# left HN502:9: no device in scope for autocast's device type
@@ -6 +6 @@
-    device_ = device or ("cuda:0" if torch.cuda.is_available() else "cpu")
+    device_ = device or (f"{torch.accelerator.current_accelerator().type}:0" if torch.accelerator.is_available() else "cpu")
@@ -10 +10 @@
-        return net(x.cuda())
+        return net(x.to(torch.accelerator.current_accelerator()))
@@ -17 +17 @@
-    return net(x.cuda())
+    return net(x.to(torch.accelerator.current_accelerator()))
@@ -22 +22 @@
-    return net(x.cuda())
+    return net(x.to(torch.accelerator.current_accelerator()))
@@ -29 +29 @@
-    return net(x.cuda())
+    return net(x.to(torch.accelerator.current_accelerator()))
""",
        )

    def test_sync_in_a_script_with_a_cpu_path(self):
        self.assertExpectedInline(
            _fixed("sync_script.py"),
            """\
@@ -5 +5 @@
-device = "cuda" if torch.cuda.is_available() else "cpu"
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -7 +7,2 @@
-torch.cuda.synchronize()  # wait for the GPU
+if torch.accelerator.is_available():
+    torch.accelerator.synchronize()  # wait for the GPU
@@ -9,2 +10,3 @@
-    torch.cuda.synchronize()  # under a device test: plain
-torch.cuda.synchronize(device)  # names its device: skipped where that is the CPU
+    torch.accelerator.synchronize()  # under a device test: plain
+if torch.device(device).type != "cpu":
+    torch.accelerator.synchronize(device)  # names its device: skipped where that is the CPU
@@ -17 +19,2 @@
-        torch.cuda.synchronize()  # nested: the guard's body one step in, not two
+        if torch.accelerator.is_available():
+            torch.accelerator.synchronize()  # nested: the guard's body one step in, not two
""",
        )

    def test_set_device_in_a_script_with_a_cpu_path(self):
        self.assertExpectedInline(
            _fixed("set_device_script.py"),
            """\
@@ -4,0 +5 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -6,4 +7,5 @@
-torch.cuda.set_device(local_rank)  # a bare pick: checked, no device to pick on the CPU
-if torch.cuda.is_available():
-    torch.cuda.set_device(local_rank)  # already checked: plain
-model = torch.nn.Linear(2, 2).cuda()
+if torch.accelerator.is_available():
+    torch.accelerator.set_device_index(local_rank)  # a bare pick: checked, no device to pick on the CPU
+if torch.accelerator.is_available():
+    torch.accelerator.set_device_index(local_rank)  # already checked: plain
+model = torch.nn.Linear(2, 2).to(device)
""",
        )

    def test_backend_in_a_script_with_a_cpu_path(self):
        self.assertExpectedInline(
            _fixed("backend_script.py"),
            """\
@@ -5,0 +6 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -8 +9 @@
-    dist.init_process_group("nccl")  # a script that runs on the CPU: gloo there
+    dist.init_process_group(torch.distributed.get_default_backend_for_device(torch.accelerator.current_accelerator() or "cpu"))  # a script that runs on the CPU: gloo there
@@ -10 +11,2 @@
-    torch.cuda.set_device(local_rank)
+    if torch.accelerator.is_available():
+        torch.accelerator.set_device_index(local_rank)
@@ -14,3 +16,3 @@
-    assert torch.cuda.is_available(), "DDP needs a GPU"
-    dist.init_process_group(backend="nccl")  # after the author's assert: the accelerator's
-    torch.cuda.set_device(0)  # after the assert: plain
+    assert torch.accelerator.is_available(), "DDP needs a GPU"
+    dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(torch.accelerator.current_accelerator()))  # after the author's assert: the accelerator's
+    torch.accelerator.set_device_index(0)  # after the assert: plain
@@ -19 +21 @@
-model = torch.nn.Linear(2, 2).cuda()
+model = torch.nn.Linear(2, 2).to(device)
@@ -25 +27,2 @@
-    torch.cuda.set_device(0)
+    if torch.accelerator.is_available():
+        torch.accelerator.set_device_index(0)
""",
        )

    def test_indexed_places_use_the_device_line(self):
        self.assertExpectedInline(
            _fixed("indexed_places.py"),
            """\
@@ -2,0 +3,2 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+
@@ -4,5 +6,5 @@
-model = torch.nn.Linear(2, 2).cuda()
-a = torch.zeros(2, device=torch.device("cuda", 0))
-b = torch.ones(2).cuda(0, non_blocking=True)
-c = torch.ones(2, device=torch.device("cuda:0"))
-d = torch.ones(2, device="cuda:0")  # a string keeps its own value, in place
+model = torch.nn.Linear(2, 2).to(device)
+a = torch.zeros(2, device=torch.device(device, 0))
+b = torch.ones(2).to(torch.device(device, 0), non_blocking=True)
+c = torch.ones(2, device=torch.device(device, 0))
+d = torch.ones(2, device=f"{torch.accelerator.current_accelerator().type}:0" if torch.accelerator.is_available() else "cpu")  # a string keeps its own value, in place
""",
        )

    def test_device_context_in_a_script_with_a_cpu_path(self):
        self.assertExpectedInline(
            _fixed("device_context_script.py"),
            """\
@@ -2,0 +3 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -4,3 +5,3 @@
-model = torch.nn.Linear(2, 2).cuda()
-with torch.cuda.device(gpu):  # a script that runs on the CPU: no switch there
-    x = torch.ones(1, 2).cuda()
+model = torch.nn.Linear(2, 2).to(device)
+with torch.accelerator.device_index(gpu if torch.accelerator.is_available() else None):  # a script that runs on the CPU: no switch there
+    x = torch.ones(1, 2).to(device)
""",
        )

    def test_a_storage_takes_its_device_by_keyword(self):
        self.assertExpectedInline(
            _fixed("map_location_script.py"),
            """\
@@ -5,0 +6 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -9,3 +10,3 @@
-state = torch.load(path, map_location=lambda storage, loc: storage.cuda())
-fast = torch.load(path, map_location=lambda s, loc: s.cuda(non_blocking=True))
-model = torch.nn.Linear(2, 2).cuda()
+state = torch.load(path, map_location=lambda storage, loc: storage.to(device=device))
+fast = torch.load(path, map_location=lambda s, loc: s.to(device=device, non_blocking=True))
+model = torch.nn.Linear(2, 2).to(device)
@@ -18 +19 @@
-    return lambda storage, loc: storage.cuda(index)
+    return lambda storage, loc: storage.to(device=torch.device(device, index))
""",
        )

    def test_a_table_entry_is_not_its_siblings(self):
        self.assertExpectedInline(
            _fixed("rng_checkpoint_script.py"),
            """\
# left HN313:7: cuda-name: flows into 'cuda_rng'; cuda-flow: 'cuda_rng' (line 9)
# left HN313:9: cuda-statement: 'cuda_rng' (line 9)
@@ -3 +3,2 @@
-model = torch.nn.Linear(2, 2).cuda()  # its own table entry: the script's device
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+model = torch.nn.Linear(2, 2).to(device)  # its own table entry: the script's device
""",
        )

    def test_current_index_as_a_device_accelerator_api(self):
        self.assertExpectedInline(
            _fixed("current_index_script.py", "accelerator_api"),
            """\
@@ -0,0 +1 @@
+import accelerator_api
@@ -3,0 +5,3 @@
+device = accelerator_api.device_type()
+
+
@@ -5,2 +9,2 @@
-    print("device", torch.cuda.current_device())  # only shown: else "cpu"
-    print(f"on {torch.cuda.current_device()}")  # so in an f-string ('cpu': its own quotes)
+    print("device", accelerator_api.current_device_index())  # only shown: else "cpu"
+    print(f"on {accelerator_api.current_device_index()}")  # so in an f-string ('cpu': its own quotes)
@@ -10,2 +14,2 @@
-    print(f"rank {torch.cuda.current_device():d}")  # read as a number: the plain rename
-    return torch.cuda.current_device() + 1  # so is arithmetic
+    print(f"rank {accelerator_api.current_device_index():d}")  # read as a number: the plain rename
+    return accelerator_api.current_device_index() + 1  # so is arithmetic
@@ -14,5 +18,5 @@
-model = torch.nn.Linear(2, 2).cuda()
-x = torch.randn(3, 2, device=torch.cuda.current_device())  # handed on as a device: else "cpu"
-y = torch.randn(3, 2).to(torch.cuda.current_device())
-if torch.cuda.is_available():
-    z = torch.zeros(2, device=torch.cuda.current_device())  # under a check: plain
+model = torch.nn.Linear(2, 2).to(device)
+x = torch.randn(3, 2, device=accelerator_api.device())  # handed on as a device: else "cpu"
+y = torch.randn(3, 2).to(accelerator_api.device())
+if accelerator_api.is_available():
+    z = torch.zeros(2, device=accelerator_api.current_device_index())  # under a check: plain
""",
        )

    def test_current_index_as_a_device_in_a_script(self):
        self.assertExpectedInline(
            _fixed("current_index_script.py"),
            """\
@@ -3,0 +4,3 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+
+
@@ -5,2 +8,2 @@
-    print("device", torch.cuda.current_device())  # only shown: else "cpu"
-    print(f"on {torch.cuda.current_device()}")  # so in an f-string ('cpu': its own quotes)
+    print("device", torch.accelerator.current_device_index() if torch.accelerator.is_available() else "cpu")  # only shown: else "cpu"
+    print(f"on {torch.accelerator.current_device_index() if torch.accelerator.is_available() else 'cpu'}")  # so in an f-string ('cpu': its own quotes)
@@ -10,2 +13,2 @@
-    print(f"rank {torch.cuda.current_device():d}")  # read as a number: the plain rename
-    return torch.cuda.current_device() + 1  # so is arithmetic
+    print(f"rank {torch.accelerator.current_device_index():d}")  # read as a number: the plain rename
+    return torch.accelerator.current_device_index() + 1  # so is arithmetic
@@ -14,5 +17,5 @@
-model = torch.nn.Linear(2, 2).cuda()
-x = torch.randn(3, 2, device=torch.cuda.current_device())  # handed on as a device: else "cpu"
-y = torch.randn(3, 2).to(torch.cuda.current_device())
-if torch.cuda.is_available():
-    z = torch.zeros(2, device=torch.cuda.current_device())  # under a check: plain
+model = torch.nn.Linear(2, 2).to(device)
+x = torch.randn(3, 2, device=torch.accelerator.current_device_index() if torch.accelerator.is_available() else "cpu")  # handed on as a device: else "cpu"
+y = torch.randn(3, 2).to(torch.accelerator.current_device_index() if torch.accelerator.is_available() else "cpu")
+if torch.accelerator.is_available():
+    z = torch.zeros(2, device=torch.accelerator.current_device_index())  # under a check: plain
""",
        )

    def test_set_device_in_a_library(self):
        self.assertExpectedInline(
            _fixed("set_device_library.py"),
            """\
@@ -5,2 +5,2 @@
-    torch.cuda.set_device(rank)  # a library's: plain (upstream's rename)
-    return torch.nn.Linear(2, 2).cuda(rank)
+    torch.accelerator.set_device_index(rank)  # a library's: plain (upstream's rename)
+    return torch.nn.Linear(2, 2).to(torch.device(rank))
""",
        )

    def test_sync_without_a_cpu_path(self):
        self.assertExpectedInline(
            _fixed("sync_no_cpu.py"),
            """\
@@ -4 +4 @@
-device = torch.device("cuda", 1)
+device = torch.device(torch.accelerator.current_accelerator().type, 1)
@@ -6 +6 @@
-torch.cuda.synchronize()
+torch.accelerator.synchronize()
""",
        )

    def test_sync_in_a_library(self):
        self.assertExpectedInline(
            _fixed("sync_library.py"),
            """\
@@ -6 +6 @@
-    torch.cuda.synchronize()
+    torch.accelerator.synchronize()
""",
        )

    def test_device_sync_helper(self):
        self.assertExpectedInline(
            _fixed("device_sync.py"),
            """\
# left HN105:16: cuda-branch: 'cuda' (line 15)
# left HN506:15: cuda-check: device is also compared with 'mps' (line 17); cuda-guarded: 'mps' (line 17)
@@ -5,6 +5,2 @@
-    if "cuda" in device:
-        torch.cuda.synchronize(device)
-    elif ("cpu" in device) or ("mps" in device):
-        pass
-    else:
-        print(f"device={device} is not yet suppported")
+    if torch.device(device).type != "cpu":
+        torch.accelerator.synchronize(device)
@@ -24,2 +20,2 @@
-        if device == "cuda":  # inside a loop: the dispatch keeps the loop's indentation
-            torch.cuda.synchronize(device)
+        if torch.device(device).type != "cpu":  # inside a loop: the dispatch keeps the loop's indentation
+            torch.accelerator.synchronize(device)
@@ -30,2 +26,2 @@
-    if device.type == "cuda":  # a torch.device's type: tested as it is
-        torch.cuda.synchronize()
+    if device.type != "cpu":  # a torch.device's type: tested as it is
+        torch.accelerator.synchronize()
@@ -38,2 +34,2 @@
-    if opt.type == "cuda":
-        torch.cuda.synchronize()
+    if torch.device(opt.type).type != "cpu":
+        torch.accelerator.synchronize()
""",
        )

    def test_cuda_in_a_script_without_device(self):
        self.assertExpectedInline(
            _fixed("tutorial_script.py"),
            """\
@@ -3,0 +4 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -6 +7 @@
-net.cuda()
+net.to(device)
@@ -8 +9 @@
-    x = torch.randn(3, 4).cuda(non_blocking=True)
+    x = torch.randn(3, 4).to(device, non_blocking=True)
""",
        )

    def test_cuda_in_a_users_library_goes_to_the_current_accelerator(self):
        self.assertExpectedInline(
            _fixed("library_cuda.py"),
            """\
@@ -8 +8 @@
-    return module.cuda()
+    return module.to(torch.accelerator.current_accelerator())
@@ -12 +12 @@
-    return t.cuda(non_blocking=True)
+    return t.to(torch.accelerator.current_accelerator(), non_blocking=True)
""",
        )

    def test_cuda_in_pytorchs_library_is_left(self):
        src = (DIR / "library_cuda.py").read_text()
        result, _ = fix(src, "torch/utils/_to_gpu.py")
        self.assertEqual(result.after, src)
        self.assertEqual(
            sorted((r, why) for r, _, why in result.outcome.failed),
            [("HN501", "no `device` in scope")] * 2,
        )

    def test_cuda_index_in_a_script(self):
        self.assertExpectedInline(
            _fixed("indexed_script.py"),
            """\
@@ -4,0 +5 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -10,3 +11,3 @@
-    torch.cuda.set_device(args.gpu)
-    model = model.cuda(args.gpu)
-    x = torch.ones(2).cuda(args.gpu, non_blocking=True)
+    torch.accelerator.set_device_index(args.gpu)
+    model = model.to(torch.device(device, args.gpu))
+    x = torch.ones(2).to(torch.device(device, args.gpu), non_blocking=True)
""",
        )

    def test_memory_stats_counter_key(self):
        # memory_stats()[<a counter's key>] -> the counter (0 without an accelerator, not a
        # KeyError on {}); other keys, a computed key and .get() read the dict as before
        self.assertExpectedInline(
            _fixed("memory_stats_key.py"),
            """\
@@ -8,2 +8,2 @@
-    peak = torch.cuda.memory_stats(rank)["allocated_bytes.all.peak"]
-    logging.debug("Peak allocated bytes: {:1d}".format(torch.cuda.memory_stats(rank)["allocated_bytes.all.peak"]))
+    peak = torch.accelerator.max_memory_allocated(rank) if torch.accelerator.is_available() else 0
+    logging.debug("Peak allocated bytes: {:1d}".format(torch.accelerator.max_memory_allocated(rank) if torch.accelerator.is_available() else 0))
@@ -14,5 +14,6 @@
-    stats = torch.cuda.memory_stats(device=device)  # the whole dict: {} without one
-    now = torch.cuda.memory_stats()["allocated_bytes.all.current"] / 2**20
-    reserved = torch.cuda.memory.memory_stats()["reserved_bytes.all.current"]
-    top = max(torch.cuda.memory_stats()["reserved_bytes.all.peak"], 1)
-    print(f"peak {torch.cuda.memory_stats()['allocated_bytes.all.peak'] / 2**20:.1f} MiB")
+    stats = torch.accelerator.memory_stats(device) if torch.accelerator.is_available() else {}  # the whole dict: {} without one
+    now = (torch.accelerator.memory_allocated() if torch.accelerator.is_available() else 0) / 2**20
+    reserved = torch.accelerator.memory_reserved() if torch.accelerator.is_available() else 0
+    top = max(torch.accelerator.max_memory_reserved() if torch.accelerator.is_available() else 0, 1)
+    max_memory_allocated = torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() else 0
+    print(f"peak {max_memory_allocated / 2**20:.1f} MiB")
@@ -20,2 +21,2 @@
-    ooms = torch.cuda.memory_stats()["num_ooms"]
-    freed = torch.cuda.memory_stats()["allocated_bytes.all.freed"]
+    ooms = (torch.accelerator.memory_stats() if torch.accelerator.is_available() else {})["num_ooms"]
+    freed = (torch.accelerator.memory_stats() if torch.accelerator.is_available() else {})["allocated_bytes.all.freed"]
@@ -23,2 +24,2 @@
-    chosen = torch.cuda.memory_stats()[key]  # not a constant key
-    got = torch.cuda.memory_stats().get("allocated_bytes.all.peak", 0)
+    chosen = (torch.accelerator.memory_stats() if torch.accelerator.is_available() else {})[key]  # not a constant key
+    got = (torch.accelerator.memory_stats() if torch.accelerator.is_available() else {}).get("allocated_bytes.all.peak", 0)
""",
        )

    def test_memory_stats_counter_key_api(self):
        self.assertExpectedInline(
            _fixed("memory_stats_key.py", "accelerator_api"),
            """\
@@ -3 +3 @@
-import torch
+import accelerator_api
@@ -8,2 +8,2 @@
-    peak = torch.cuda.memory_stats(rank)["allocated_bytes.all.peak"]
-    logging.debug("Peak allocated bytes: {:1d}".format(torch.cuda.memory_stats(rank)["allocated_bytes.all.peak"]))
+    peak = accelerator_api.max_memory_allocated(rank)
+    logging.debug("Peak allocated bytes: {:1d}".format(accelerator_api.max_memory_allocated(rank)))
@@ -14,5 +14,5 @@
-    stats = torch.cuda.memory_stats(device=device)  # the whole dict: {} without one
-    now = torch.cuda.memory_stats()["allocated_bytes.all.current"] / 2**20
-    reserved = torch.cuda.memory.memory_stats()["reserved_bytes.all.current"]
-    top = max(torch.cuda.memory_stats()["reserved_bytes.all.peak"], 1)
-    print(f"peak {torch.cuda.memory_stats()['allocated_bytes.all.peak'] / 2**20:.1f} MiB")
+    stats = accelerator_api.memory_stats(device)  # the whole dict: {} without one
+    now = accelerator_api.memory_allocated() / 2**20
+    reserved = accelerator_api.memory_reserved()
+    top = max(accelerator_api.max_memory_reserved(), 1)
+    print(f"peak {accelerator_api.max_memory_allocated() / 2**20:.1f} MiB")
@@ -20,2 +20,2 @@
-    ooms = torch.cuda.memory_stats()["num_ooms"]
-    freed = torch.cuda.memory_stats()["allocated_bytes.all.freed"]
+    ooms = accelerator_api.memory_stats()["num_ooms"]
+    freed = accelerator_api.memory_stats()["allocated_bytes.all.freed"]
@@ -23,2 +23,2 @@
-    chosen = torch.cuda.memory_stats()[key]  # not a constant key
-    got = torch.cuda.memory_stats().get("allocated_bytes.all.peak", 0)
+    chosen = accelerator_api.memory_stats()[key]  # not a constant key
+    got = accelerator_api.memory_stats().get("allocated_bytes.all.peak", 0)
""",
        )

    def test_memory_counter_already_checked(self):
        self.assertExpectedInline(
            _fixed("memory_guarded.py"),
            """\
@@ -3,2 +3,2 @@
-if torch.cuda.is_available():
-    print(f"peak {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")  # already guarded
+if torch.accelerator.is_available():
+    print(f"peak {torch.accelerator.max_memory_allocated() / 2**20:.1f} MiB")  # already guarded
@@ -6,4 +6,7 @@
-print(f"peak {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB")  # guarded here
-print(f"{torch.cuda.memory_allocated() / 1e6:.0f} of {torch.cuda.memory_reserved() / 1e6:.0f} MB")
-print([f"{torch.cuda.memory_allocated(i)}" for i in range(2)])  # once per device: in place
-with open(f"mem_{torch.cuda.memory_stats()}.txt", "w") as f:  # a header: in place
+max_memory_allocated = torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() else 0
+print(f"peak {max_memory_allocated / 2**20:.1f} MiB")  # guarded here
+memory_allocated = torch.accelerator.memory_allocated() if torch.accelerator.is_available() else 0
+memory_reserved = torch.accelerator.memory_reserved() if torch.accelerator.is_available() else 0
+print(f"{memory_allocated / 1e6:.0f} of {memory_reserved / 1e6:.0f} MB")
+print([f"{(torch.accelerator.memory_allocated(i) if torch.accelerator.is_available() else 0)}" for i in range(2)])  # once per device: in place
+with open(f"mem_{(torch.accelerator.memory_stats() if torch.accelerator.is_available() else {})}.txt", "w") as f:  # a header: in place
@@ -14 +17 @@
-    return f"{torch.cuda.memory_stats()}"
+    return f"{(torch.accelerator.memory_stats() if torch.accelerator.is_available() else {})}"
@@ -17 +20 @@
-print(f"{torch.cuda.max_memory_allocated()} on {torch.cuda.get_device_name(0)}")  # another's call
+print(f"{(torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() else 0)} on {torch.get_device_module().get_device_name(0)}")  # another's call
""",
        )

    def test_amp_script(self):
        self.assertExpectedInline(
            _fixed("amp_script.py"),
            """\
@@ -7 +7 @@
-    with torch.cuda.amp.autocast(enabled=fp16):
+    with torch.amp.autocast(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu", enabled=fp16):
@@ -13 +13 @@
-    with torch.cuda.amp.autocast():
+    with torch.amp.autocast(torch.device(device).type):
@@ -22 +22 @@
-    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)
+    scaler = torch.amp.GradScaler(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu", enabled=args.fp16)
""",
        )

    def test_amp_script_accelerator_api(self):
        self.assertExpectedInline(
            _fixed("amp_script.py", "accelerator_api"),
            """\
@@ -2,0 +3 @@
+import accelerator_api
@@ -7 +8 @@
-    with torch.cuda.amp.autocast(enabled=fp16):
+    with accelerator_api.autocast(enabled=fp16):
@@ -13 +14 @@
-    with torch.cuda.amp.autocast():
+    with accelerator_api.autocast():
@@ -22 +23 @@
-    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)
+    scaler = accelerator_api.GradScaler(enabled=args.fp16)
""",
        )

    def test_amp_library(self):
        self.assertExpectedInline(
            _fixed("amp_library.py"),
            """\
# left HN401:5: torch.amp.autocast needs device_type: no device_type or device in scope to pass
# left HN402:11: torch.amp.GradScaler needs device: no device_type or device in scope to pass
""",
        )

    def test_device_string_from_a_two_way_pick(self):
        self.assertExpectedInline(
            _fixed("picked_string.py"),
            """\
# left HN505:15: a device string compared with 'cuda' exactly, kept
# left HN505:23: a device string compared with 'cuda' exactly, kept
# left HN101:21: cuda-flow: 'cuda' (line 23)
# left HN301:16: cuda-branch: 'cuda' (line 15)
# left HN301:24: cuda-branch: 'cuda' (line 23)
# left HN502:21: cuda-branch: HN101 torch.cuda.is_available (line 21)
@@ -5 +5 @@
-device = "cuda" if torch.cuda.is_available() else "cpu"
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -9,2 +9,2 @@
-    if device == "cuda":  # only ever "cuda" or "cpu": a device type
-        torch.cuda.reset_peak_memory_stats()
+    if device != "cpu":  # only ever "cuda" or "cpu": a device type
+        torch.accelerator.reset_peak_memory_stats()
""",
        )

    def test_cuda_named_flag_and_local(self):
        self.assertExpectedInline(
            _fixed("flag_script.py"),
            """\
@@ -6 +6 @@
-parser.add_argument("--no-cuda", action="store_true", default=False, help="disables CUDA training")
+parser.add_argument("--no-cuda", action="store_true", default=False, dest="no_accel", help="disables accelerator training")
@@ -11,3 +11,3 @@
-    use_cuda = not args.no_cuda and torch.cuda.is_available()
-    device = torch.device("cuda" if use_cuda else "cpu")
-    kwargs = {"pin_memory": True} if use_cuda else {}
+    use_accel = not args.no_accel and torch.accelerator.is_available()
+    device = torch.device(torch.accelerator.current_accelerator().type if use_accel else "cpu")
+    kwargs = {"pin_memory": True} if use_accel else {}
""",
        )

    def test_cuda_named_flag_kept(self):
        self.assertExpectedInline(
            _fixed("flag_kept.py"),
            """\
# left HN101:12: cuda-flow: HN412 torch.backends.cudnn.benchmark (line 14)
# left HN503:15: cuda-branch: has_cuda (line 15)
""",
        )

    def test_a_flag_rename_is_one_step_with_every_read(self):
        # coqui-tts' tune_wavegrad (round 29): the `.cuda()` step held one read of
        # `args.use_cuda`; renamed there alone (no `dest=`, the other reads kept), it read an
        # attribute the namespace does not have, on every machine
        self.assertExpectedInline(
            _fixed("flag_step.py"),
            """\
@@ -5,0 +6 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -12 +13 @@
-    model.cuda()
+    model.to(device)
@@ -14 +15 @@
-    y_hat = model.inference(mel.cuda() if args.use_cuda else mel)
+    y_hat = model.inference(mel.to(device) if args.use_cuda else mel)
""",
        )

    def test_a_rule_rewrites_its_own_site_on_a_shared_line(self):
        # stanza's --profile_sort (round 29): the choice's HN509 rewrote the default beside it,
        # which the gate had left (a profiler sort key, not a device)
        self.assertExpectedInline(
            _fixed("choices_line.py"),
            """\
# left HN509:8: not a default or a built string: decide by hand
# left HN502:8: cuda-statement: 'cuda' (line 8)
@@ -9 +9 @@
-    parser.add_argument("--device", default="cuda", help="Where to run")
+    parser.add_argument("--device", default=torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu", help="Where to run")
""",
        )

    def test_an_autocast_to_float16_on_a_device_that_may_be_the_cpu(self):
        # coqui-tts' Tortoise (round 29): `device_type=torch.device(self.device).type` turned CPU
        # autocast on in float16 for a model on the CPU, where "cuda" left it off (float32);
        # bfloat16, the CPU's own autocast dtype, follows the device as before
        self.assertExpectedInline(
            _fixed("autocast_half.py"),
            """\
# left HN502:9: an autocast to float16 on a device that may be the CPU: CUDA's was off there, and CPU autocast in float16 is another program (emulated on most CPUs)
# left HN502:19: compared with: asks whether it is CUDA, kept
@@ -14 +14 @@
-        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=half):
+        with torch.autocast(device_type=torch.device(self.device).type, dtype=torch.bfloat16, enabled=half):
@@ -19 +19 @@
-        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=device.type == "cuda"):
+        with torch.autocast(device_type=torch.device(device).type, dtype=torch.float16, enabled=device.type != "cpu"):
""",
        )

    def test_seed_repeated_after_torch_seed(self):
        self.assertExpectedInline(
            _fixed("seed_repeat.py"),
            """\
# left HN310:19: the rename would repeat the line before (torch.manual_seed already seeds every device): delete it by hand
# left HN310:24: the rename would repeat the line before (torch.manual_seed already seeds every device): delete it by hand
@@ -6,2 +5,0 @@
-    torch.cuda.manual_seed(seed)
-    torch.cuda.manual_seed_all(seed)  # for Multi-GPU: the run goes too
@@ -12 +10 @@
-    torch.cuda.manual_seed_all(seed + 1)  # not the shape: another seed
+    torch.manual_seed(seed + 1)  # not the shape: another seed
@@ -30,2 +27,0 @@
-    torch.cuda.manual_seed_all(seed)
-
""",
        )

    def test_map_location_in_a_script(self):
        self.assertExpectedInline(
            _fixed("load_script.py"),
            """\
@@ -3,0 +4 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -6,4 +7,5 @@
-model.load_state_dict(torch.load("model.pth", map_location="cuda:0"))
-model = model.cuda()  # the script gets a device: a CPU path, so the sync below is guarded
-torch.cuda.synchronize()
-print(model(torch.randn(1, 2).cuda()))
+model.load_state_dict(torch.load("model.pth", map_location=f"{torch.accelerator.current_accelerator().type}:0" if torch.accelerator.is_available() else "cpu"))
+model = model.to(device)  # the script gets a device: a CPU path, so the sync below is guarded
+if torch.accelerator.is_available():
+    torch.accelerator.synchronize()
+print(model(torch.randn(1, 2).to(device)))
""",
        )

    def test_map_location_in_a_library(self):
        self.assertExpectedInline(
            _fixed("load_library.py"),
            """\
@@ -6 +6 @@
-    return torch.load(path, map_location="cuda:0")
+    return torch.load(path, map_location=f"{torch.accelerator.current_accelerator().type}:0")
""",
        )

    def test_flag_pick_block(self):
        self.assertExpectedInline(
            _fixed("flag_pick.py"),
            """\
# left HN101:40: cuda-flow: want_mps (line 44)
# left HN502:29: cuda-flow: has_mps (line 34)
# left HN503:43: cuda-branch: want_cuda (line 42)
@@ -12,6 +12,3 @@
-    use_cuda = not args.no_cuda and torch.cuda.is_available()
-    use_mps = not args.no_mps and torch.backends.mps.is_available()
-    if use_cuda:
-        device = torch.device("cuda")
-    elif use_mps:
-        device = torch.device("mps")
+    use_accel = not args.no_cuda and torch.accelerator.is_available()
+    if use_accel:
+        device = torch.accelerator.current_accelerator()
@@ -26 +23 @@
-    has_cuda = args.no_cuda and torch.cuda.is_available()
+    has_cuda = args.no_cuda and torch.accelerator.is_available()
@@ -29,3 +26 @@
-        dev = "cuda"
-    elif has_mps:
-        dev = "mps"
+        dev = torch.accelerator.current_accelerator().type
""",
        )

    def test_flag_read_beside_hasattr(self):
        self.assertExpectedInline(
            _fixed("flag_warning.py"),
            """\
@@ -11 +11 @@
-parser.add_argument("--cuda", action="store_true", default=False, help="use CUDA")
+parser.add_argument("--cuda", action="store_true", default=False, dest="accel", help="use accelerator")
@@ -16,2 +16,2 @@
-if torch.cuda.is_available():
-    if not args.cuda:
+if torch.accelerator.is_available():
+    if not args.accel:
@@ -24,2 +24,2 @@
-if args.cuda:
-    device = torch.device("cuda")
+if args.accel:
+    device = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")
""",
        )

    def test_seed_repeated_in_a_library(self):
        self.assertExpectedInline(
            _fixed("seed_library.py"),
            """\
# left HN310:7: redundant: line 6 already calls torch.manual_seed() with the same arguments: delete this one
""",
        )

    def test_flag_with_a_number(self):
        self.assertExpectedInline(
            _fixed("flag_int.py"),
            """\
@@ -10 +10 @@
-        "--cuda", type=int, required=True, help="set it to 1 for running on GPU, 0 for CPU"
+        "--cuda", type=int, required=True, dest="accel", help="set it to 1 for running on GPU, 0 for CPU"
@@ -14 +14 @@
-    if args.cuda and not torch.cuda.is_available():
+    if args.accel and not torch.accelerator.is_available():
@@ -17 +17 @@
-    device = torch.device("cuda" if args.cuda else "cpu")
+    device = torch.device(torch.accelerator.current_accelerator().type if args.accel else "cpu")
""",
        )

    def test_pick_return(self):
        """A project's get_device() helper: the pick returns its value."""
        self.assertExpectedInline(
            _fixed("pick_return.py"),
            """\
# left HN503:42: not a device argument
# left HN503:49: not a device argument
# left HN503:56: not a device argument
# left HN101:41: cuda-guarded: 'cuda' (line 42)
# left HN101:47: cuda-guarded: 'cuda' (line 49)
# left HN101:55: cuda-guarded: 'cuda' (line 56)
# left HN104:48: cuda-state: 'cuda' (line 49); cuda-flow: the same function asks CUDA about devices: 'cuda' (line 49)
@@ -7 +7 @@
-    if torch.cuda.is_available():
+    if torch.accelerator.is_available():
@@ -9,2 +9,2 @@
-            return torch.device(f"cuda:{gpu}")
-        return torch.device("cuda")
+            return torch.device(torch.accelerator.current_accelerator().type, gpu)
+        return torch.accelerator.current_accelerator()
@@ -15,6 +15 @@
-    if torch.cuda.is_available():
-        return "cuda"
-    elif torch.backends.mps.is_available():
-        return "mps"
-    else:
-        return "cpu"
+    return torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -24,2 +19,2 @@
-    if torch.cuda.is_available():
-        return torch.device("cuda")
+    if torch.accelerator.is_available():
+        return torch.accelerator.current_accelerator()
@@ -30 +25 @@
-    if torch.cuda.is_available():
+    if torch.accelerator.is_available():
@@ -32 +27 @@
-            return torch.device("cuda", rank)
+            return torch.device(torch.accelerator.current_accelerator().type, rank)
@@ -34 +29 @@
-            return torch.device("cuda")
+            return torch.accelerator.current_accelerator()
""",
        )

    def test_pick_return_accelerator_api(self):
        self.assertExpectedInline(
            _fixed("pick_return.py", "accelerator_api"),
            """\
# left HN503:42: not a device argument
# left HN503:49: not a device argument
# left HN503:56: not a device argument
# left HN101:41: cuda-guarded: 'cuda' (line 42)
# left HN101:47: cuda-guarded: 'cuda' (line 49)
# left HN101:55: cuda-guarded: 'cuda' (line 56)
# left HN104:48: cuda-state: 'cuda' (line 49); cuda-flow: the same function asks CUDA about devices: 'cuda' (line 49)
@@ -0,0 +1 @@
+import accelerator_api
@@ -7 +8 @@
-    if torch.cuda.is_available():
+    if torch.accelerator.is_available():
@@ -9,2 +10,2 @@
-            return torch.device(f"cuda:{gpu}")
-        return torch.device("cuda")
+            return torch.device(torch.accelerator.current_accelerator().type, gpu)
+        return torch.accelerator.current_accelerator()
@@ -15,6 +16 @@
-    if torch.cuda.is_available():
-        return "cuda"
-    elif torch.backends.mps.is_available():
-        return "mps"
-    else:
-        return "cpu"
+    return accelerator_api.device_type()
@@ -24,2 +20,2 @@
-    if torch.cuda.is_available():
-        return torch.device("cuda")
+    if accelerator_api.is_available():
+        return torch.device(accelerator_api.device_type())
@@ -30 +26 @@
-    if torch.cuda.is_available():
+    if torch.accelerator.is_available():
@@ -32 +28 @@
-            return torch.device("cuda", rank)
+            return torch.device(torch.accelerator.current_accelerator().type, rank)
@@ -34 +30 @@
-            return torch.device("cuda")
+            return torch.accelerator.current_accelerator()
""",
        )

    def test_memory_reset(self):
        self.assertExpectedInline(
            _fixed("memory_reset.py"),
            """\
@@ -9,2 +9,4 @@
-    torch.cuda.empty_cache()
-    torch.cuda.reset_peak_memory_stats()
+    if torch.accelerator.is_available():
+        torch.accelerator.empty_cache()
+    if torch.accelerator.is_available():
+        torch.accelerator.reset_peak_memory_stats()
@@ -15,3 +17,3 @@
-    if torch.cuda.is_available():
-        torch.cuda.reset_peak_memory_stats()
-        torch.cuda.reset_accumulated_memory_stats()
+    if torch.accelerator.is_available():
+        torch.accelerator.reset_peak_memory_stats()
+        torch.accelerator.reset_accumulated_memory_stats()
@@ -22 +24 @@
-    return torch.cuda.max_memory_allocated() / 2**30
+    return (torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() else 0) / 2**30
@@ -26,2 +28,3 @@
-    torch.cuda.reset_peak_memory_stats(0)
-    return torch.cuda.memory_stats(0)
+    if torch.accelerator.is_available():
+        torch.accelerator.reset_peak_memory_stats(0)
+    return torch.accelerator.memory_stats(0) if torch.accelerator.is_available() else {}
@@ -32,2 +35,2 @@
-    if device.type == "cuda":
-        torch.cuda.reset_peak_memory_stats(device)
+    if device.type != "cpu":
+        torch.accelerator.reset_peak_memory_stats(device)
""",
        )

    def test_to_cuda_in_a_script(self):
        """``.to("cuda")`` in a script with no device: the accelerator's or the CPU, in place."""
        self.assertExpectedInline(
            _fixed("to_cuda_script.py"),
            """\
# left HN505:16: a device string compared with 'cuda' exactly, kept
@@ -5 +5,2 @@
-model = torch.nn.Linear(4, 4).to("cuda" if torch.cuda.is_available() else "cpu")
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+model = torch.nn.Linear(4, 4).to(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")
@@ -9,3 +10,3 @@
-    x = torch.tensor(ids, dtype=torch.float32).to("cuda")
-    y = torch.zeros(4).to("cuda:1")
-    return model(x) + y.to("cuda", non_blocking=True)
+    x = torch.tensor(ids, dtype=torch.float32).to(device)
+    y = torch.zeros(4).to(f"{torch.accelerator.current_accelerator().type}:1" if torch.accelerator.is_available() else "cpu")
+    return model(x) + y.to(device, non_blocking=True)
""",
        )

    def test_to_cuda_beside_a_plain_cuda(self):
        """``.to("cuda")`` and ``net.cuda()`` in one script: one device line, both use it."""
        self.assertExpectedInline(
            _fixed("to_cuda_mixed.py"),
            """\
@@ -6,0 +7,3 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+
+
@@ -8 +11 @@
-    return x.to("cuda")
+    return x.to(device)
@@ -13 +16 @@
-    net.cuda()
+    net.to(device)
""",
        )

    def test_factory_device_in_a_script(self):
        """``device="cuda"`` in a script with no device: the accelerator's or the CPU, in place,
        as ``.to("cuda")``; the file then runs on the CPU, so its bare sync gets the check."""
        self.assertExpectedInline(
            _fixed("factory_script.py"),
            """\
@@ -8,0 +9,3 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+
+
@@ -10,2 +13,2 @@
-    q = torch.randn(n, 8, device="cuda")
-    mask = torch.ones(n, n, dtype=torch.bool, device="cuda:0")
+    q = torch.randn(n, 8, device=device)
+    mask = torch.ones(n, n, dtype=torch.bool, device=f"{torch.accelerator.current_accelerator().type}:0" if torch.accelerator.is_available() else "cpu")
@@ -19 +22,2 @@
-    torch.cuda.synchronize()
+    if torch.accelerator.is_available():
+        torch.accelerator.synchronize()
""",
        )

    def test_factory_device_beside_a_plain_cuda(self):
        self.assertExpectedInline(
            _fixed("factory_mixed.py"),
            """\
@@ -6,0 +7,3 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+
+
@@ -8 +11 @@
-    return torch.zeros(n, 2, device="cuda")
+    return torch.zeros(n, 2, device=device)
@@ -13 +16 @@
-    net.cuda()
+    net.to(device)
""",
        )

    def test_every_place_of_a_script_uses_its_device_line(self):
        """Factories, ``.to``, ``torch.device("cuda")``, ``map_location``, autocast and
        GradScaler given "cuda", CUDA's AMP entry points and the model-card defaults: one
        ``device`` line; indexed devices keep their index in place."""
        self.assertExpectedInline(
            _fixed("places_all.py"),
            """\
@@ -8,0 +9,3 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+
+
@@ -10,4 +13,4 @@
-    with torch.autocast("cuda", dtype=torch.bfloat16):
-        loss = model(x.to(torch.device("cuda"))).sum()
-    with torch.cuda.amp.autocast():
-        loss = loss + model(x.to("cuda", non_blocking=True)).sum()
+    with torch.autocast(device, dtype=torch.bfloat16):
+        loss = model(x.to(device)).sum()
+    with torch.amp.autocast(device):
+        loss = loss + model(x.to(device, non_blocking=True)).sum()
@@ -19,2 +22,2 @@
-    torch.set_default_device("cuda")
-    model = torch.nn.Linear(4, 4).cuda()
+    torch.set_default_device(device)
+    model = torch.nn.Linear(4, 4).to(device)
@@ -22,7 +25,7 @@
-    model.load_state_dict(torch.load("places_all.pth", map_location="cuda"))
-    first = torch.load("places_all.pth", map_location="cuda:0")
-    scaler = torch.amp.GradScaler("cuda")
-    legacy = torch.cuda.amp.GradScaler()
-    x = torch.randn(2, 4, device="cuda")
-    with torch.device("cuda"):
-        extra = torch.zeros(2, device="cuda:0")
+    model.load_state_dict(torch.load("places_all.pth", map_location=device))
+    first = torch.load("places_all.pth", map_location=f"{torch.accelerator.current_accelerator().type}:0" if torch.accelerator.is_available() else "cpu")
+    scaler = torch.amp.GradScaler(device)
+    legacy = torch.amp.GradScaler(device)
+    x = torch.randn(2, 4, device=device)
+    with torch.device(device):
+        extra = torch.zeros(2, device=f"{torch.accelerator.current_accelerator().type}:0" if torch.accelerator.is_available() else "cpu")
""",
        )

    def test_places_use_the_device_line_on_the_accelerator_api_target(self):
        self.assertExpectedInline(
            _fixed("places_all.py", "accelerator_api"),
            """\
@@ -5,0 +6 @@
+import accelerator_api
@@ -8,0 +10,3 @@
+device = accelerator_api.device_type()
+
+
@@ -10,4 +14,4 @@
-    with torch.autocast("cuda", dtype=torch.bfloat16):
-        loss = model(x.to(torch.device("cuda"))).sum()
-    with torch.cuda.amp.autocast():
-        loss = loss + model(x.to("cuda", non_blocking=True)).sum()
+    with torch.autocast(device, dtype=torch.bfloat16):
+        loss = model(x.to(device)).sum()
+    with accelerator_api.autocast():
+        loss = loss + model(x.to(device, non_blocking=True)).sum()
@@ -19,2 +23,2 @@
-    torch.set_default_device("cuda")
-    model = torch.nn.Linear(4, 4).cuda()
+    torch.set_default_device(device)
+    model = torch.nn.Linear(4, 4).to(device)
@@ -22,7 +26,7 @@
-    model.load_state_dict(torch.load("places_all.pth", map_location="cuda"))
-    first = torch.load("places_all.pth", map_location="cuda:0")
-    scaler = torch.amp.GradScaler("cuda")
-    legacy = torch.cuda.amp.GradScaler()
-    x = torch.randn(2, 4, device="cuda")
-    with torch.device("cuda"):
-        extra = torch.zeros(2, device="cuda:0")
+    model.load_state_dict(torch.load("places_all.pth", map_location=device))
+    first = torch.load("places_all.pth", map_location=f"{accelerator_api.device_type()}:0" if accelerator_api.device_type() != "cpu" else "cpu")
+    scaler = torch.amp.GradScaler(device)
+    legacy = accelerator_api.GradScaler()
+    x = torch.randn(2, 4, device=device)
+    with torch.device(device):
+        extra = torch.zeros(2, device=f"{accelerator_api.device_type()}:0" if accelerator_api.device_type() != "cpu" else "cpu")
""",
        )

    def test_a_stray_cuda_gives_no_device_line(self):
        """A "cuda" handed to a call with no place of the line: no line (a rerun would meet
        that site beside a bound ``device``); ``.cuda()`` goes to the current accelerator, as in
        any module of a user's project with no device."""
        self.assertExpectedInline(
            _fixed("stray_cuda.py"),
            """\
@@ -16,2 +16,2 @@
-    net.cuda()
-    print(net(noise(2, "cuda").cuda()))
+    net.to(torch.accelerator.current_accelerator())
+    print(net(noise(2, "cuda").to(torch.accelerator.current_accelerator())))
""",
        )

    def test_a_seeded_generator_is_a_place(self):
        """``torch.Generator("cuda")`` (positional, as diffusers' docs write it) is a device
        argument: the script's device line reaches it as it reaches ``device="cuda"``."""
        self.assertExpectedInline(
            _fixed("generator_script.py"),
            """\
@@ -7,0 +8 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -9,4 +10,4 @@
-pipe = pipe.to("cuda")
-generator = torch.Generator("cuda").manual_seed(0)
-latents = torch.randn(2, 4, generator=generator, device="cuda")
-with torch.autocast("cuda"):
+pipe = pipe.to(device)
+generator = torch.Generator(device).manual_seed(0)
+latents = torch.randn(2, 4, generator=generator, device=device)
+with torch.autocast(device):
@@ -14,2 +15,2 @@
-again = torch.Generator(device="cuda").manual_seed(1)
-print(image.sum().item(), torch.randn(1, generator=again, device="cuda").item())
+again = torch.Generator(device=device).manual_seed(1)
+print(image.sum().item(), torch.randn(1, generator=again, device=device).item())
""",
        )

    def test_generator_look_alikes_in_a_library(self):
        self.assertExpectedInline(
            _fixed("generator_library.py"),
            """\
# left HN502:16: no `device` variable bound before it in scope
# left HN509:28: not a default or a built string: decide by hand
@@ -20 +20 @@
-    return torch.Generator("cuda").manual_seed(seed)
+    return torch.Generator(device).manual_seed(seed)
""",
        )

    def test_factory_device_in_a_library(self):
        self.assertExpectedInline(
            _fixed("factory_library.py"),
            """\
# left HN502:8: no `device` variable bound before it in scope
""",
        )

    def test_default_device_in_a_script(self):
        """Where a script picks its device with no name for it: ``device_map="cuda"``,
        ``torch.set_default_device("cuda:0")``, ``with torch.device("cuda"):``."""
        self.assertExpectedInline(
            _fixed("default_device.py"),
            """\
@@ -4,0 +5,3 @@
+
+
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -12 +15 @@
-    model = load("m", device_map="cuda")
+    model = load("m", device_map=device)
@@ -14,2 +17,2 @@
-    torch.set_default_device("cuda:0")
-    with torch.device("cuda"):
+    torch.set_default_device(f"{torch.accelerator.current_accelerator().type}:0" if torch.accelerator.is_available() else "cpu")
+    with torch.device(device):
@@ -17 +20,2 @@
-    torch.cuda.synchronize()  # the script runs on the CPU now: checked first
+    if torch.accelerator.is_available():
+        torch.accelerator.synchronize()  # the script runs on the CPU now: checked first
""",
        )

    def test_default_device_in_a_library(self):
        self.assertExpectedInline(
            _fixed("default_device_library.py"),
            """\
# left HN502:8: not a device argument
# left HN503:9: not a device argument
# left HN509:10: not a default or a built string: decide by hand
""",
        )

    def test_stream_waits_in_a_script_with_a_cpu_path(self):
        """The prefetcher's bare ``wait_stream`` / ``record_stream`` statements: checked first
        where the script runs on the CPU (its ``.cuda()`` calls get the device line)."""
        self.assertExpectedInline(
            _fixed("stream_prefetch.py"),
            """\
@@ -6,0 +7,3 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+
+
@@ -10 +13 @@
-        self.stream = torch.cuda.Stream()
+        self.stream = torch.Stream()
@@ -16,2 +19,2 @@
-            with torch.cuda.stream(self.stream):
-                self.batch = self.batch.cuda(non_blocking=True)
+            with self.stream:
+                self.batch = self.batch.to(device, non_blocking=True)
@@ -20 +23,2 @@
-        torch.cuda.current_stream().wait_stream(self.stream)
+        if torch.accelerator.is_available():
+            torch.accelerator.current_stream().wait_stream(self.stream)
@@ -23 +27,2 @@
-            batch.record_stream(torch.cuda.current_stream())
+            if torch.accelerator.is_available():
+                batch.record_stream(torch.accelerator.current_stream())
@@ -31 +36 @@
-    current = torch.cuda.current_stream()  # a value, not a bare statement: the plain rename
+    current = torch.accelerator.current_stream()  # a value, not a bare statement: the plain rename
""",
        )

    def test_stream_waits_in_a_library(self):
        self.assertExpectedInline(
            _fixed("stream_library.py"),
            """\
@@ -7,2 +7,2 @@
-    torch.cuda.current_stream().wait_stream(stream)
-    batch.record_stream(torch.cuda.current_stream())
+    torch.accelerator.current_stream().wait_stream(stream)
+    batch.record_stream(torch.accelerator.current_stream())
""",
        )

    def test_amp_alias(self):
        """timm's ``amp_autocast = torch.cuda.amp.autocast``, called later with no device."""
        self.assertExpectedInline(
            _fixed("amp_alias.py"),
            """\
@@ -2,0 +3 @@
+import functools
@@ -5,0 +7,3 @@
+
+
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -16 +20 @@
-        amp_autocast = torch.cuda.amp.autocast
+        amp_autocast = functools.partial(torch.amp.autocast, device_type=device)
""",
        )

    def test_amp_alias_accelerator_api(self):
        self.assertExpectedInline(
            _fixed("amp_alias.py", "accelerator_api"),
            """\
@@ -4,0 +5 @@
+import accelerator_api
@@ -16 +17 @@
-        amp_autocast = torch.cuda.amp.autocast
+        amp_autocast = accelerator_api.autocast
""",
        )

    def test_amp_alias_in_a_library(self):
        self.assertExpectedInline(_fixed("amp_alias_library.py"), """""")

    def test_no_device_line_when_every_cuda_call_is_kept(self):
        self.assertExpectedInline(
            _fixed("cuda_all_kept.py"),
            """\
# left HN507:14: Tensor is used other than called or given to .type() (line 18)
# left HN101:8: cuda-flow: HN507 torch.cuda.FloatTensor (line 14)
# left HN501:12: cuda-branch: cuda (line 11)
# left HN501:13: cuda-branch: cuda (line 11)
""",
        )

    def test_dcgan_pick(self):
        self.assertExpectedInline(
            _fixed("dcgan_pick.py"),
            """\
@@ -11 +11 @@
-parser.add_argument("--cuda", action="store_true", help="enables cuda")
+parser.add_argument("--cuda", action="store_true", dest="accel", help="enables accelerator")
@@ -15 +15 @@
-if torch.cuda.is_available() and not opt.cuda:
+if torch.accelerator.is_available() and not opt.accel:
@@ -18 +18 @@
-device = torch.device("cuda:0" if opt.cuda else "cpu")
+device = torch.device(f"{torch.accelerator.current_accelerator().type}:0" if opt.accel else "cpu")
""",
        )

    def test_cpu_first_pick(self):
        self.assertExpectedInline(
            _fixed("cpu_first_pick.py"),
            """\
# left HN509:19: not a default or a built string: decide by hand
# left HN502:19: not a device argument
@@ -11 +11 @@
-parser.add_argument("--no-cuda", action="store_true", help="disables cuda")
+parser.add_argument("--no-cuda", action="store_true", dest="no_accel", help="disables accelerator")
@@ -17,3 +17,3 @@
-    dev = "cpu" if (not torch.cuda.is_available() or args.no_cuda) else "cuda:0"
-    mine = "cpu" if args.no_cuda else args.device
-    meta = "meta" if args.no_cuda else "cuda:1"
+    dev = "cpu" if (not torch.accelerator.is_available() or args.no_accel) else f"{torch.accelerator.current_accelerator().type}:0"
+    mine = "cpu" if args.no_accel else args.device
+    meta = "meta" if args.no_accel else "cuda:1"
""",
        )

    def test_dcgan_pick_kept(self):
        self.assertExpectedInline(
            _fixed("dcgan_pick_kept.py"),
            """\
# left HN503:15: a fallback whose other side is not "cpu": no accelerator may exist there (current_accelerator() is None)
@@ -14 +14 @@
-device = torch.device("cuda:0" if opt.cuda else "cpu")
+device = torch.device(f"{torch.accelerator.current_accelerator().type}:0" if opt.cuda else "cpu")
""",
        )

    def test_namespace_flag(self):
        """``args.cuda = not args.no_cuda and torch.cuda.is_available()``: renamed with every read
        in the step of the check (the cuda-flag finding on it fixed there)."""
        self.assertExpectedInline(
            _fixed("namespace_flag.py"),
            """\
@@ -8 +8 @@
-parser.add_argument("--no-cuda", action="store_true", default=False, help="disables CUDA training")
+parser.add_argument("--no-cuda", action="store_true", default=False, dest="no_accel", help="disables accelerator training")
@@ -12 +12 @@
-args.cuda = not args.no_cuda and torch.cuda.is_available()
+args.accel = not args.no_accel and torch.accelerator.is_available()
@@ -15,5 +15,5 @@
-device = torch.device("cuda" if args.cuda else "cpu")
-kwargs = {"num_workers": 1, "pin_memory": True} if args.cuda else {}
-if args.cuda:
-    cuda_kwargs = {"shuffle": True}
-    kwargs.update(cuda_kwargs)
+device = torch.device(torch.accelerator.current_accelerator().type if args.accel else "cpu")
+kwargs = {"num_workers": 1, "pin_memory": True} if args.accel else {}
+if args.accel:
+    accel_kwargs = {"shuffle": True}
+    kwargs.update(accel_kwargs)
@@ -22,2 +22,2 @@
-if args.cuda:
-    model.cuda()
+if args.accel:
+    model.to(device)
@@ -25 +25 @@
-    model.load_state_dict(torch.load(args.resume, map_location=lambda storage, loc: storage.cuda() if args.cuda else storage))
+    model.load_state_dict(torch.load(args.resume, map_location=lambda storage, loc: storage.to(device=device) if args.accel else storage))
""",
        )

    def test_namespace_flag_in_main(self):
        self.assertExpectedInline(
            _fixed("namespace_flag_main.py"),
            """\
@@ -7,0 +8,3 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
+
+
@@ -9,2 +12,2 @@
-    if args.use_cuda:
-        data = data.cuda()
+    if args.use_accel:
+        data = data.to(device)
@@ -18 +21 @@
-    args.use_cuda = torch.cuda.is_available() and not args.cpu
+    args.use_accel = torch.accelerator.is_available() and not args.cpu
@@ -20,2 +23,2 @@
-    if args.use_cuda:
-        model = model.cuda()
+    if args.use_accel:
+        model = model.to(device)
""",
        )

    def test_namespace_flag_escapes(self):
        self.assertExpectedInline(
            _fixed("namespace_flag_escapes.py"),
            """\
# left HN101:10: cuda-statement: HN510 args.cuda (line 10)
@@ -11 +11 @@
-device = torch.device("cuda" if args.cuda else "cpu")
+device = torch.device(torch.accelerator.current_accelerator().type if args.cuda else "cpu")
""",
        )

    def test_namespace_flag_set_twice(self):
        self.assertExpectedInline(
            _fixed("namespace_flag_twice.py"),
            """\
# left HN101:10: cuda-statement: HN510 args.cuda (line 10)
@@ -13 +13 @@
-device = torch.device("cuda" if args.cuda else "cpu")
+device = torch.device(torch.accelerator.current_accelerator().type if args.cuda else "cpu")
""",
        )

    def test_namespace_flag_on_another_object(self):
        self.assertExpectedInline(
            _fixed("namespace_flag_object.py"),
            """\
# left HN101:7: cuda-statement: cfg.cuda (line 7)
# left HN503:8: cuda-branch: cfg.cuda (line 8)
""",
        )

    def test_namespace_flag_read_by_cuda_code(self):
        self.assertExpectedInline(
            _fixed("namespace_flag_cuda_read.py"),
            """\
# left HN101:10: args.cuda is read where the code stays CUDA (line 11)
@@ -13 +13 @@
-device = torch.device("cuda" if args.cuda else "cpu")
+device = torch.device(torch.accelerator.current_accelerator().type if args.cuda else "cpu")
""",
        )

    def test_namespace_flag_declared_or_received_elsewhere(self):
        self.assertExpectedInline(
            _fixed("namespace_flag_option.py"),
            """\
# left HN510:18: device-flag: `types.SimpleNamespace` is not a function of the scanned tree: its `use_cuda=` stays
# left HN101:16: cuda-statement: HN510 args.cuda (line 16)
@@ -17 +17 @@
-args.use_cuda = torch.cuda.is_available()
+args.use_cuda = torch.accelerator.is_available()
@@ -19 +19 @@
-device = torch.device("cuda" if args.cuda else "cpu")
+device = torch.device(torch.accelerator.current_accelerator().type if args.cuda else "cpu")
""",
        )

    def test_namespace_flag_saved_with_the_checkpoint(self):
        self.assertExpectedInline(
            _fixed("namespace_flag_saved.py"),
            """\
# left HN101:10: cuda-statement: HN510 args.cuda (line 10)
@@ -6,0 +7 @@
+device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
@@ -13 +14 @@
-    model.cuda()
+    model.to(device)
""",
        )


def test_identical_code_identical_decisions():
    """The same helper in two files of different surroundings: the same rewrite."""
    helper = (DIR / "device_sync.py").read_text().split("\n\n\ndef sync_each_backend")[0]
    script = helper + '\n\n\nif __name__ == "__main__":\n    device_sync("cpu")\n'
    a, _ = fix(helper, "a.py")
    b, _ = fix(script, "tools/b.py")
    assert a.after.split("\n\n\n")[1] == b.after.split("\n\n\n")[1]
    assert "torch.cuda" not in a.after


def test_namespace_flag_fixes_its_cuda_flag_finding():
    """The rename fixes the cuda-flag finding (HN510) on the attribute with the check, in one
    step (the summary counts what a rescan no longer finds); where a read keeps the check,
    neither is fixed."""
    for name, fixed in (("namespace_flag.py", True), ("namespace_flag_cuda_read.py", False)):
        result, found = fix((DIR / name).read_text(), name)
        line = next(f.line for f in found if f.rule == "HN510")
        assert (("HN510", line) in result.outcome.applied) is fixed, name
        assert (("HN101", line) in result.outcome.applied) is fixed, name
        _, again = fix(result.after, name)
        assert any(f.rule in ("HN510", "HN101") for f in again) is not fixed, name


def test_a_decorated_anchor_gets_the_line_above_its_decorators():
    """The script's ``device`` line goes above the first statement's decorators, never missing:
    a script that reads ``device`` binds it."""
    result, _ = fix((DIR / "decorated_anchor.py").read_text(), "examples/evaluate.py")
    head = result.after.split("@torch.no_grad()")[0]
    assert "\ndevice = torch.accelerator.current_accelerator().type" in head, result.after
    assert result.after.count("x.to(device)") == 1 and ".cuda()" not in result.after


def test_a_seed_after_other_generators_seeds_goes():
    """``torch.cuda.manual_seed(s)`` after ``torch.manual_seed(s)`` and Python's or NumPy's seed
    (a seed block): deleted in a script as right after it; after a call that may draw random
    numbers (``model.init_weights()``) it is not a repeat (the rename)."""
    src = (
        "import random\n\nimport torch\n\n\ndef main(seed, model):\n"
        "    torch.random.manual_seed(seed)\n    random.seed(seed)\n"
        "    torch.cuda.manual_seed(seed)\n    torch.manual_seed(seed)\n"
        "    model.init_weights()\n    torch.cuda.manual_seed(seed)\n\n\n"
        'if __name__ == "__main__":\n    main(0, None)\n'
    )
    result, _ = fix(src, "examples/train.py")
    body = result.after.split("def main(seed, model):\n")[1].split("\n\n\n")[0]
    assert body.splitlines() == [
        "    torch.random.manual_seed(seed)",
        "    random.seed(seed)",
        "    torch.manual_seed(seed)",
        "    model.init_weights()",
        "    torch.manual_seed(seed)",
    ], result.after
