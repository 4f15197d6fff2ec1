"""Where an added ``import m`` goes (``codemods.imports``): among the file's plain ``import x``
lines of its section (the standard library's, or the rest), at its sorted place, as isort and
PyTorch's lint keep them; with no such line, after the leading imports as before."""

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


def test_with_no_line_of_its_section_it_goes_after_the_imports():
    src = "from torch import nn\nimport torch\n\nx = 1\n"
    assert (
        _add(src, "contextlib")
        == "from torch import nn\nimport torch\nimport contextlib\n\nx = 1\n"
    )


def test_a_second_run_adds_nothing():
    once = _add("import argparse\n\nimport torch\n\nx = 1\n", "contextlib")
    assert _add(once, "contextlib") == once


def test_the_files_opening_comment_block_stays_first():
    src = "# Copyright the authors\nimport torch.nn as nn\n\nx = 1\n"
    assert (
        _add(src, "torch")
        == "# Copyright the authors\nimport torch\nimport torch.nn as nn\n\nx = 1\n"
    )
