"""Where an added ``import m`` goes (``codemods.imports``): among the file's plain ``import x``
lines of its section (the standard library's, or the rest), at its sorted place, as isort and
PyTorch's lint keep them; with no such line, above the first ``from`` import of its section or
the first import of a later section (the project's own, with a blank line between); else after
the leading imports as before."""

from patches.generate.codemods.imports import fix_imports


def _add(text: str, *modules: str) -> str:
    return fix_imports(text, "train.py", [(m, None) for m in modules], set())


def test_a_stdlib_import_joins_the_stdlib_lines_in_order():
    src = "import argparse\nimport time\nfrom contextlib import suppress\n\nimport torch\n\nx = 1\n"
    assert _add(src, "contextlib", "functools") == (
        "import argparse\nimport contextlib\nimport functools\nimport time\n"
        "from contextlib import suppress\n\nimport torch\n\nx = 1\n"
    )


def test_last_of_its_section_goes_after_the_section_not_after_every_import():
    src = '"""Doc."""\n\nimport argparse\n\nimport torch\n\nx = 1\n'
    assert _add(src, "contextlib") == (
        '"""Doc."""\n\nimport argparse\nimport contextlib\n\nimport torch\n\nx = 1\n'
    )


def test_a_third_party_import_sorts_among_the_third_party_lines():
    src = "import os\n\nimport numpy as np\nimport tqdm\n\nx = 1\n"
    assert (
        _add(src, "torch")
        == "import os\n\nimport numpy as np\nimport torch\nimport tqdm\n\nx = 1\n"
    )


def test_a_comment_stays_with_the_import_it_heads():
    src = "import argparse\n# timing\nimport time\n\nx = 1\n"
    assert (
        _add(src, "functools")
        == "import argparse\nimport functools\n# timing\nimport time\n\nx = 1\n"
    )


def test_with_no_line_of_its_section_it_goes_above_a_later_section():
    src = "from torch import nn\nimport torch\n\nx = 1\n"
    assert (
        _add(src, "contextlib")
        == "import contextlib\n\nfrom torch import nn\nimport torch\n\nx = 1\n"
    )


def test_with_no_import_before_it_goes_after_the_imports():
    src = "import argparse\nfrom os import path\n\nx = 1\n"
    assert _add(src, "torch") == "import argparse\nfrom os import path\nimport torch\n\nx = 1\n"


def test_a_plain_import_goes_above_the_from_imports_of_its_section():
    src = "import os\n\nfrom transformers import AutoModel\n\nx = 1\n"
    assert (
        _add(src, "torch")
        == "import os\n\nimport torch\nfrom transformers import AutoModel\n\nx = 1\n"
    )


def test_a_third_party_import_goes_above_the_projects_own_with_a_blank_line():
    # llmcompressor's examples import only the project itself (isort's first party, the tree's
    # own top-level modules; round 37): `import torch` is a section of its own above it
    src = "from llmcompressor import oneshot\n\nMODEL_ID = 1\n"
    got = fix_imports(src, "ex.py", [("torch", None)], set(), first_party={"llmcompressor"})
    assert got == "import torch\n\nfrom llmcompressor import oneshot\n\nMODEL_ID = 1\n"
    relative = fix_imports("from . import data\n\nx = 1\n", "pkg/a.py", [("torch", None)], set())
    assert relative == "import torch\n\nfrom . import data\n\nx = 1\n"
    assert fix_imports(got, "ex.py", [("torch", None)], set(), first_party={"llmcompressor"}) == got


def test_a_second_run_adds_nothing():
    once = _add("import argparse\n\nimport torch\n\nx = 1\n", "contextlib")
    assert _add(once, "contextlib") == once


def test_the_files_opening_comment_block_stays_first():
    src = "# Copyright the authors\nimport torch.nn as nn\n\nx = 1\n"
    assert (
        _add(src, "torch")
        == "# Copyright the authors\nimport torch\nimport torch.nn as nn\n\nx = 1\n"
    )
