"""The fast line diff: a valid edit script on any input, difflib's own answer on small ones."""

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

import patches.generate.linediff as linediff

lines = st.lists(st.sampled_from(["a\n", "b\n", "\n", ")\n", "x = 1\n"]), max_size=40)


@settings(max_examples=200, deadline=None)
@given(lines, lines, st.sampled_from([0, 4, linediff.SMALL]))
def test_opcodes_rebuild_b_and_match_difflib_when_small(a, b, small):
    old, linediff.SMALL = linediff.SMALL, small
    try:
        ops = linediff.opcodes(a, b)
    finally:
        linediff.SMALL = old
    pos_a = pos_b = 0
    rebuilt = []
    for tag, i1, i2, j1, j2 in ops:
        assert (i1, j1) == (pos_a, pos_b)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        rebuilt += b[j1:j2]
        pos_a, pos_b = i2, j2
    assert (pos_a, pos_b) == (len(a), len(b)) and rebuilt == b
    if small == linediff.SMALL:
        assert ops == difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
