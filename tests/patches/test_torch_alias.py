"""The file's own name for torch (``torch_alias``): a module that imports ``torch as th`` gets
``th.accelerator...`` from the series and no second ``import torch``; anything else keeps the
families' spelling."""

import os
import subprocess
import sys
import textwrap

from patches.generate.torch_alias import alias

ORIGINAL = textwrap.dedent(
    """\
    import torch as th


    def place(x):
        return x.cuda()
    """
)
PORTED = textwrap.dedent(
    """\
    import torch as th
    import torch


    def place(x):
        return x.to(torch.accelerator.current_accelerator())
    """
)


def test_the_alias_spells_what_the_series_wrote_and_its_import_goes():
    assert alias(ORIGINAL, PORTED) == ORIGINAL.replace(
        "x.cuda()", "x.to(th.accelerator.current_accelerator())"
    )


def test_a_file_that_binds_torch_keeps_the_families_spelling():
    original = "import torch\nimport torch as th\n\nx = th.ones(2).cuda()\n"
    after = original.replace(".cuda()", ".to(torch.accelerator.current_accelerator())")
    assert alias(original, after) == after


def test_two_aliases_or_none_leave_the_step_alone():
    both = "import torch as th\nimport torch as t\n"
    two, ported_two = (x.replace("import torch as th\n", both) for x in (ORIGINAL, PORTED))
    assert alias(two, ported_two) == ported_two
    plain, ported_plain = (x.replace("import torch as th\n", "") for x in (ORIGINAL, PORTED))
    assert alias(plain, ported_plain) == ported_plain


def test_a_torch_the_series_did_not_write_leaves_the_step_alone():
    original = ORIGINAL + "\n\ndef other():\n    return torch.ones(1)\n"  # unbound: not ours
    after = PORTED + "\n\ndef other():\n    return torch.ones(1)\n"
    assert alias(original, after) == after


def test_generate_writes_the_alias_and_a_rerun_adds_nothing(tmp_path):
    tree = tmp_path / "proj"
    tree.mkdir()
    (tree / "feats.py").write_text(ORIGINAL)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "base"]):
        subprocess.run(cmd, cwd=tree, check=True, env=env)
    gen = [sys.executable, "-m", "patches.generate", str(tree), "--unsafe-fixes"]
    subprocess.run([*gen, "--apply"], check=True, capture_output=True)
    text = (tree / "feats.py").read_text()
    assert "th.accelerator.current_accelerator()" in text and "import torch\n" not in text, text
    again = subprocess.run([*gen, "--diff"], capture_output=True, text=True)
    assert "+++" not in again.stdout, again.stdout
