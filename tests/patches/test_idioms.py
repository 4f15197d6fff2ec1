"""Training-script idioms (issue 14): device defaults, indexed devices, derived device types,
predicates, capability queries, precision flags, the distributed backend. Each case: the real
scan (or, for forms the scan does not report yet, the rule's spec on the given line), the real
codemod, the exact rewritten line; every result compiles and a second run changes nothing."""

from __future__ import annotations

import pytest

from patches.generate.codemods import rewrite
from tests.patches.codemod_helpers import diff, fix, specs

ACC = "torch.accelerator.current_accelerator().type"
OR_CPU = f'{ACC} if torch.accelerator.is_available() else "cpu"'
REQUIRED = "assert torch.cuda.is_available()\n"
NEEDED = "assert torch.accelerator.is_available()\n"

SCANNED = [
    # device defaults: the accelerator's type, CPU when none; still overridable
    ('device = "cuda"  # or cpu\n', f"device = {OR_CPU}  # or cpu\n"),
    (
        "device = 'cuda:0'\n",
        f'device = f"{{{ACC}}}:0" if torch.accelerator.is_available() else "cpu"\n',
    ),
    (
        'p.add_argument("--device", default="cuda", help="x")\n',
        f'p.add_argument("--device", default={OR_CPU}, help="x")\n',
    ),
    (
        'dev = torch.device("cuda")\n',
        'dev = torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")\n',
    ),
    # indexed devices, where only an accelerator gets (a library's module level raised nothing
    # without one: there they are left, tests/patches/test_named_devices.py)
    (REQUIRED + 'device = f"cuda:{rank}"\n', NEEDED + f'device = f"{{{ACC}}}:{{rank}}"\n'),
    (REQUIRED + "d = torch.device('cuda', rank)\n", NEEDED + f"d = torch.device({ACC}, rank)\n"),
    (REQUIRED + 'd = torch.device("cuda:1")\n', NEEDED + f"d = torch.device({ACC}, 1)\n"),
    # a device chosen by a flag: the accelerator when asked for
    (
        'device = torch.device("cuda" if args.gpu else "cpu")\n',
        f'device = torch.device({ACC} if args.gpu else "cpu")\n',
    ),
    # HN509 (a device string anywhere): built strings keep their type
    (REQUIRED + 'e = "cuda:{}".format(rank)\n', NEEDED + f'e = "{{}}:{{}}".format({ACC}, rank)\n'),
    # a device type argument: the device's type in scope
    (
        'with torch.autocast(device_type="cuda", dtype=torch.bfloat16):\n    pass\n',
        "with torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16):\n    pass\n",
    ),
    (
        'scaler = torch.amp.GradScaler("cuda")\n',
        "scaler = torch.amp.GradScaler(torch.device(device).type)\n",
    ),
    # memory reporting: read where the CUDA counter answered 0 without CUDA (in an f-string's
    # field, on the line before: a conditional there cannot be wrapped)
    (
        'print(f"{torch.cuda.max_memory_allocated() / 1e9:.2f} GB")\n',
        "max_memory_allocated = torch.accelerator.max_memory_allocated() if "
        "torch.accelerator.is_available() else 0\n"
        'print(f"{max_memory_allocated / 1e9:.2f} GB")\n',
    ),
    (
        "print(torch.cuda.max_memory_allocated() / 1e9)\n",
        "print((torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() "
        "else 0) / 1e9)\n",
    ),
    # a bare reset: checked, like a bare empty_cache()
    (
        "torch.cuda.reset_peak_memory_stats()\n",
        "if torch.accelerator.is_available():\n    torch.accelerator.reset_peak_memory_stats()\n",
    ),
    # derived device types and predicates
    (
        'device_type = "cuda" if "cuda" in device else "cpu"\n',
        "device_type = torch.device(device).type\n",
    ),
    ('use_fused = device_type == "cuda"\n', 'use_fused = device_type != "cpu"\n'),
    ("if x.device.type != 'cuda':\n    pass\n", "if x.device.type == 'cpu':\n    pass\n"),
    (
        'pin = "cuda" in str(device)\n',
        'pin = torch.device(device).type != "cpu"\n',
    ),
    # a list of accelerators: off the host, for every accelerator
    (
        'if x.device.type in ["cuda", torch._C._get_privateuse1_backend_name()]:\n    pass\n',
        'if x.device.type not in ("cpu", "meta"):\n    pass\n',
    ),
    (
        "skip = x.device.type not in ('cuda', torch._C._get_privateuse1_backend_name())\n",
        'skip = x.device.type in ("cpu", "meta")\n',
    ),
    # the negated list with work in its body (not an early exit) still asks "off the host?"
    (
        "if x.device.type not in ['cuda', torch._C._get_privateuse1_backend_name()]:\n"
        "    x = x.to(device)\n",
        'if x.device.type in ("cpu", "meta"):\n    x = x.to(device)\n',
    ),
    # capability predicates that pick bf16 (``torch.cuda.is_bf16_supported()`` itself stays while
    # torch.mps lacks it: ``module-lacks``, labels in intent/trainers/module_queries.py)
    (
        "use_bf16 = torch.cuda.get_device_capability() >= (8, 0)\n",
        "use_bf16 = (torch.accelerator.is_available() and "
        "torch.get_device_module().is_bf16_supported(including_emulation=False))\n",
    ),
    # precision flags
    (
        "torch.backends.cuda.matmul.allow_tf32 = True  # faster\n",
        'torch.set_float32_matmul_precision("high")  # faster\n',
    ),
    # the distributed backend: at the process group, and as a configured default
    (
        'dist.init_process_group(backend="nccl")\n',
        "dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(device))\n",
    ),
    (
        'backend = "nccl"\n',
        "backend = torch.distributed.Backend.default_device_backend_map.get(" + OR_CPU + ")\n",
    ),
]


def _lines(src: str) -> list[str]:
    return [ln for ln in diff(src, "").splitlines() if ln.startswith("-")]


@pytest.mark.parametrize("line,expected", SCANNED)
def test_scanned_idiom(line, expected):
    src = (
        "import torch\nimport torch.distributed as dist\n\ndevice = 'cpu'\nrank = 0\nargs = None\n"
        + line
    )
    rw, found = fix(src)
    assert not rw.error, rw.error
    assert rw.after == src.replace(line, expected), diff(src, rw.after)
    compile(rw.after, "x.py", "exec")
    again, _ = fix(rw.after)
    assert again.after == rw.after  # idempotent: nothing left to rewrite


UNREPORTED = [
    # forms the scan does not report yet: the rule's spec on the line, as generate would pass it
    (
        "HN503",
        'd = torch.device("cuda:%d" % rank)\n',
        f'd = torch.device("%s:%d" % ({ACC}, rank))\n',
    ),
    (
        "HN503",
        "d = torch.device('cuda:{}'.format(rank))\n",
        f"d = torch.device('{{}}:{{}}'.format({ACC}, rank))\n",
    ),
    ("HN502", 'd = "cuda:%d" % (rank,)\n', f'd = "%s:%d" % ({ACC}, rank,)\n'),
]


@pytest.mark.parametrize("rule,line,expected", UNREPORTED)
def test_unreported_forms(rule, line, expected):
    src = "import torch\n\nrank = 0\n" + line
    # a test module's top level (a library's raised nothing there without an accelerator)
    rw = rewrite(src, "tests/test_x.py", [(specs()[rule], frozenset({4}))])
    assert not rw.error, rw.error
    assert rw.after == src.replace(line, expected), diff(src, rw.after)
    compile(rw.after, "x.py", "exec")


def test_accelerator_api_target():
    src = 'import torch\n\ndevice = "cuda"\nassert torch.cuda.is_available()\ndev = f"cuda:{device}"\n'
    rw, _ = fix(src, target="accelerator_api")
    assert "device = accelerator_api.device_type()\n" in rw.after
    assert 'dev = f"{accelerator_api.device_type()}:{device}"\n' in rw.after
    assert "import accelerator_api\n" in rw.after
    compile(rw.after, "x.py", "exec")


@pytest.mark.parametrize(
    "line",
    [
        'if x.device == torch.device("cuda", 0):\n    pass\n',  # asks "is this CUDA?"
        'def f(device="cuda"):\n    pass\n',  # a parameter default: the API's own
        'if device == "cuda":\n    pass\n',  # a device string: "cuda:0" is not "cuda"
        'if x.device.type in ["cpu", "cuda"]:\n    pass\n',  # names the host: not "an accelerator"
        'if x.device.type in ("cuda", "xpu"):\n    pass\n',  # a closed list: the Triton backends
        # an allow-list that exits for every other device: the backends supporting what follows
        'def f(x, s):\n    if x.device.type not in ["cuda", torch._C._get_privateuse1_backend_name()]:\n'
        "        return\n    x.record_stream(s)\n",
        # CUDA's own variant of one operation, the host's in the other arm
        'y = torch.nn.functional.gelu(x, approximate="tanh") if x.device.type == "cuda" '
        "else torch.nn.functional.gelu(x)\n",
        'if "cuda" in device and torch.backends.cudnn.enabled:\n    pass\n',  # cuDNN chain
        "torch.backends.cudnn.allow_tf32 = True\n",  # convolutions only: nothing neutral equals it
        "sm90 = torch.cuda.get_device_capability() >= (9, 0)\n",  # an SM check, not bf16
    ],
)
def test_left_alone(line):
    src = "import torch\n\ndevice = 'cpu'\nx = torch.zeros(1)\n" + line
    rw, _ = fix(src)
    assert line in rw.after, diff(src, rw.after)


def test_rewritten_defaults_run_on_cpu():
    """The rewritten defaults evaluate on this CPU-only machine: CPU, and the derived type."""
    src = (
        "import torch\n\n"
        'device = "cuda"\n'
        'device_type = "cuda" if "cuda" in device else "cpu"\n'
        'use_amp = device_type == "cuda"\n'
    )
    rw, _ = fix(src)
    ns: dict = {}
    exec(compile(rw.after, "x.py", "exec"), ns)
    assert (ns["device"], ns["device_type"], ns["use_amp"]) == ("cpu", "cpu", False)


def test_rewritten_queries_run_on_cpu():
    """Without an accelerator the rewritten queries answer what the CUDA ones did: no bf16,
    the gloo backend for a CPU default. The bf16 pick by ``is_bf16_supported`` stays CUDA's
    (``module-lacks``: a Mac would raise), and answers the same."""
    dtype = 'dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"\n'
    src = (
        "import torch\n\n"
        'backend = "nccl"\n' + dtype + "use_bf16 = torch.cuda.get_device_capability() >= (8, 0)\n"
    )
    rw, _ = fix(src)
    assert dtype in rw.after
    assert "cuda" not in rw.after.replace("import torch", "").replace(dtype, ""), rw.after
    ns: dict = {}
    exec(compile(rw.after, "x.py", "exec"), ns)
    assert (ns["backend"], ns["dtype"], ns["use_bf16"]) == ("gloo", "float16", False)


@pytest.mark.parametrize(
    "line",
    [
        'map_location = {"cuda:%d" % 0: "cuda:%d" % rank}\n',
        'checkpoint = torch.load(f, map_location={f"cuda:{0}": f"cuda:{rank}"})\n',
        'device_map = {"cuda:{}".format(0): "cuda:{}".format(rank)}\n',
    ],
)
def test_device_map_is_left_whole(line):
    """A dict mapping devices to devices (``map_location``, an RPC device map): its keys name
    where the data was saved, not this host; a neutral value alone would no longer match its
    key. Both strings are reported and both are left, with the reason."""
    src = "import torch\n\nrank = 1\nf = None\n" + line
    rw, found = fix(src)
    assert len([f for f in found if f.line == 5]) == 2, found
    assert rw.after == src, diff(src, rw.after)
    assert [why for _, ln, why in rw.outcome.failed if ln == 5 and "device map" in why]


def test_built_device_strings_outside_a_device_map_are_rewritten():
    """A device string as a dict value under a key that is no device is still rewritten."""
    src = 'import torch\n\nrank = 1\nconfig = {"device": f"cuda:{rank}"}\n'
    src = src.replace("config", REQUIRED + "config")
    rw, _ = fix(src)
    want = src.replace('f"cuda:{rank}"', f'f"{{{ACC}}}:{{rank}}"').replace(REQUIRED, NEEDED)
    assert rw.after == want, diff(src, rw.after)


SAME_DEVICE = """import torch


def build(device, n):
    if device.type == "cuda":
        major, _ = torch.cuda.get_device_capability(device)
        target = f"sm_{major}"
    else:
        target = "llvm"
    if device.type != "cuda":
        target = f"{target} --num-cores {n}"
    return target


def place(device, x):
    if device.type == "cuda":
        x = x.to(device, non_blocking=True)
    if device.type != "cuda":
        x = x.contiguous()
    return x
"""


def test_two_checks_of_one_device_are_one_unit():
    """In ``build`` the first check guards a capability query and stays CUDA (the gate), so the
    second check of the same ``device`` stays too: rewritten alone, another accelerator would
    get the host's target without the host's core count (torch's tvm backend). In ``place``
    both checks are neutral and both are rewritten."""
    rw, _ = fix(SAME_DEVICE, path="torch/_dynamo/backends/build.py")
    assert not rw.error, rw.error
    out = rw.after.splitlines()
    assert out[4] == '    if device.type == "cuda":' and out[9] == '    if device.type != "cuda":'
    assert out[15] == '    if device.type != "cpu":' and out[17] == '    if device.type == "cpu":'
    assert ("HN505", 10) in {(r, ln) for r, ln, why in rw.outcome.failed if "line 5" in why}


CHECKED = """import torch


class Wrapper:
    def generate(self, x):
        if self.device.type == "cuda":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return self.model(x)
        return self.model(x)

    def plain(self, x):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return self.model(x)
"""


def test_an_autocast_under_a_device_check_takes_that_device():
    """``autocast("cuda")`` in the body of ``if self.device.type == "cuda":`` runs on that device
    (lmms-eval's MMaDA wrapper): its type is ``self.device``'s, not a new module-level device.
    With no check and no device around it, it is left."""
    rw, _ = fix(CHECKED, path="pkg/models/wrapper.py")
    assert not rw.error, rw.error
    out = rw.after.splitlines()
    assert out[5] == '        if self.device.type != "cpu":', rw.after
    assert out[6] == (
        "            with torch.autocast(torch.device(self.device).type, dtype=torch.bfloat16):"
    ), rw.after
    assert out[11] == '        with torch.autocast("cuda", dtype=torch.bfloat16):', rw.after
