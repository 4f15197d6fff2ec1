"""The ``families/fact_guard.py`` rewrite family: a device fact a script only reports, checked
with its readers (tests/patches/fixtures/fact_guard/). Its series, patch by patch, and the ports
run on the CPU: ``test_cpu_ports.py``."""

from __future__ import annotations

import ast

import pytest

from patches.generate.codemods.context import FileContext
from patches.generate.codemods.families import fact_units
from tests.patches.family_fixtures import cases, check


@pytest.mark.parametrize("case", cases("fact_guard"))
def test_fixture(case):
    check("fact_guard", case)


def _units(source: str, path: str = "examples/report.py"):
    return fact_units.units(FileContext(source, ast.parse(source), path, ""))


def test_units_a_query_reading_another_is_its_reader():
    src = (
        "import torch\n"
        "props = torch.cuda.get_device_properties(0)\n"
        "free, total = torch.cuda.mem_get_info(props.name)\n"
        "print(free, total)\n"
        "x = torch.ones(2, device='cpu')\n"
        "print(x)\n"
    )
    units = _units(src)
    assert [(u.head, u.end) for u in units.values()] == [(2, 4)]


def test_units_need_a_script_that_runs_on_the_cpu():
    src = "import torch\nprops = torch.cuda.get_device_properties(0)\nprint(props.name)\n"
    assert _units(src) == {}  # no CPU path: the original's raise stays the port's
    library = (
        "import torch\n"
        "def report(device='cpu'):\n"
        "    props = torch.cuda.get_device_properties(0)\n"
        "    return props.name\n"
    )
    assert _units(library, "torch/utils/lib.py") == {}  # no code runs at the top: no script
    script = library + "print(report())\n"
    assert [(u.head, u.end) for u in _units(script).values()] == []  # read by `return`


def test_units_check_only_the_query_s_own_names_for_cuda_fields():
    """A reader's own name (``label = props.name``, then ``label.upper()``) is no properties
    object: its attributes are not fields only CUDA's properties have."""
    src = (
        "import torch\n"
        "props = torch.cuda.get_device_properties(0)\n"
        "label = props.name\n"
        "print(label.upper())\n"
        "x = torch.ones(2, device='cpu')\n"
        "print(x)\n"
    )
    assert [(u.head, u.end) for u in _units(src).values()] == [(2, 4)]
    assert _units(src.replace("label.upper()", "props.multi_processor_count")) == {}
