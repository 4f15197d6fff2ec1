"""``--explain``'s ``->``: what the series leaves where the site was, the whole block that
replaced it (a guard written above a statement shifts every line below it)."""

from patches.generate.explain import _line_after

BEFORE = "import torch\n\ntorch.cuda.set_device(rank)\ntorch.cuda.manual_seed(0)\nprint(1)\n"
AFTER = (
    "import torch\n\nif torch.accelerator.is_available():\n"
    "    torch.accelerator.set_device_index(rank)\ntorch.manual_seed(0)\nprint(1)\n"
)


def test_a_changed_line_shows_the_block_that_replaced_it():
    want = (
        "if torch.accelerator.is_available(): ⏎ torch.accelerator.set_device_index(rank)"
        " ⏎ torch.manual_seed(0)"
    )
    assert _line_after(BEFORE, AFTER, 4) == want  # not the guard's second line
    assert _line_after(BEFORE, AFTER, 3) == want


def test_an_unchanged_line_is_itself_where_it_moved():
    assert _line_after(BEFORE, AFTER, 5) == "print(1)"


def test_a_long_block_is_cut():
    shown = _line_after(BEFORE, AFTER, 4, width=20)
    assert len(shown) == 20 and shown.endswith("…")
