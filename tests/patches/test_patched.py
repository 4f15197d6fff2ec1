"""A ``torch.cuda`` function the tree replaces with its own stays (intent kind ``cuda-patched``,
round 41): vLLM's ``torch.cuda.set_stream = _patched_set_stream`` tracks the current stream,
its XPU worker maps ``torch.cuda.current_stream`` to XPU's; the neutral call would bypass them.
Look-alikes: a tree that only reads the function (``prev = torch.cuda.synchronize``), or names
it in a string, patches nothing."""

from __future__ import annotations

from patches.generate import pipeline
from patches.generate.state import Settings

PATCHES = """\
import threading

import torch

prev_set_stream = torch.cuda.set_stream
prev_sync = torch.cuda.synchronize  # read, not replaced
_tls = threading.local()
HELP = '''
torch.cuda.synchronize = something  (a docstring's text, not an assignment)
'''


def _patched_set_stream(stream):
    _tls.value = stream
    prev_set_stream(stream)


torch.cuda.set_stream = _patched_set_stream
"""

WORKER = """\
import torch


def switch(stream):
    torch.cuda.set_stream(stream)


def wait():
    torch.cuda.synchronize()
"""


def test_a_function_the_tree_replaces_stays(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/torch_utils.py").write_text(PATCHES)
    (tmp_path / "pkg/worker.py").write_text(WORKER)
    run = pipeline.generate(Settings(tmp_path, unsafe_fixes=True))
    after = run.plan.finals["pkg/worker.py"]
    assert "torch.cuda.set_stream(stream)" in after
    assert "torch.accelerator.synchronize()" in after
    left = [x for x in run.plan.left if x.finding.path == "pkg/worker.py"]
    assert left and all("pkg/torch_utils.py:18" in x.reason for x in left), left
