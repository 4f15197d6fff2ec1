"""Matrix shards: a deterministic cost-balanced split, and shards merged == one unsharded run."""

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from patches.common import shard
from patches.common.shard import ShardError
from patches.matrix import merge
from patches.matrix.costs import load_costs

OPS = "abs,add,cat,exp,mul,sum"


@pytest.mark.parametrize("spec", ["0/4", "3/2", "1/0", "a/b", "2", "", "1/-1"])
def test_bad_specs_are_one_clear_error(spec):
    with pytest.raises(ShardError, match="expected I/N"):
        shard.parse(spec)


@given(
    st.dictionaries(st.text("abcdef._", min_size=1, max_size=6), st.floats(0, 100), max_size=40),
    st.integers(1, 6),
)
def test_assignment_is_a_balanced_partition(costs, n):
    ops = sorted(costs)
    shards = shard.assign(reversed(ops), n, costs)
    assert sorted(o for s in shards for o in s) == ops  # every op exactly once
    assert shards == shard.assign(ops, n, dict(reversed(costs.items())))  # order-independent
    loads = [sum(costs[o] for o in s) for s in shards]
    if ops:  # LPT: no shard exceeds the lightest by more than the largest single op
        assert max(loads) - min(loads) <= max(costs.values()) + 1e-9


def test_nested_shards_split_a_shard():
    costs = {f"op{i}": float(i) for i in range(20)}
    outer = shard.select(costs, ["2/3"], costs)
    inner = [shard.select(costs, ["2/3", f"{j}/2"], costs) for j in (1, 2)]
    assert sorted(inner[0] + inner[1]) == outer and not set(inner[0]) & set(inner[1])


def test_committed_cost_table_covers_op_db():
    table = load_costs()
    assert len(table) > 500, (
        "patches/matrix/costs.json: refresh with python -m patches.matrix costs"
    )


def _matrix(tmp_path, name, *args):
    out = tmp_path / name
    cmd = [sys.executable, "-m", "patches.matrix", "--devices", "cpu", "--ops", OPS, "--out"]
    proc = subprocess.run(cmd + [str(out), *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def _cells(path):
    data = json.loads((path / "matrix.json").read_text())
    return [(c["op"], c["dtype"], c["device"], c["status"], c["samples"]) for c in data["cells"]]


def _merge(*args):
    proc = subprocess.run(
        [sys.executable, "-m", "patches.matrix", "merge", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stderr.strip()


def test_shards_merged_equal_the_unsharded_run(tmp_path):
    whole = _matrix(tmp_path, "whole")
    s1 = _matrix(tmp_path, "s1", "--shard", "1/2")
    s2 = _matrix(tmp_path, "s2", "--shard", "2/2", "--workers", "2")  # local workers nest
    assert _cells(s1) and _cells(s2) and not set(_cells(s1)) & set(_cells(s2))
    rc, err = _merge(s2, s1, "--out", tmp_path / "merged")
    assert rc == 0, err
    assert _cells(tmp_path / "merged") == _cells(whole)
    for name in ("matrix.md", "matrix.junit.xml", "matrix.html"):
        assert (tmp_path / "merged" / name).stat().st_size > 0

    # Per-device jobs (as in CI): a cuda column measured on a machine without one is 'absent'
    # for every cell the other devices produced, with the reason.
    c1, c2 = (
        _matrix(tmp_path, f"cuda{i}", "--devices", "cuda", "--shard", f"{i}/2") for i in (1, 2)
    )
    rc, err = _merge(s1, s2, c1, c2, "--out", tmp_path / "both")
    assert rc == 0, err
    both = json.loads((tmp_path / "both" / "matrix.json").read_text())
    cuda = [c for c in both["cells"] if c["device"] == "cuda"]
    assert len(cuda) == len(_cells(whole)) and {c["status"] for c in cuda} == {"absent"}
    assert all(c["message"] for c in cuda)
    rc, err = _merge(s1, s2, c1, "--out", tmp_path / "m0")
    assert (rc, err) == (2, "error: missing shard(s) 2/2 of cuda")

    # Bad sets of shards: one line naming what is wrong, nothing written.
    rc, err = _merge(s1, "--out", tmp_path / "m1")
    assert (rc, err) == (2, "error: missing shard(s) 2/2") and not (tmp_path / "m1").exists()
    rc, err = _merge(s1, s1, "--out", tmp_path / "m2")
    assert rc == 2 and "given twice" in err and not (tmp_path / "m2").exists()
    other = json.loads((s2 / "matrix.json").read_text())
    other["torch"] = "2.99.0"
    (tmp_path / "skew").mkdir()
    (tmp_path / "skew" / "matrix.json").write_text(json.dumps(other))
    rc, err = _merge(s1, tmp_path / "skew", "--out", tmp_path / "m3")
    assert rc == 2 and "torch" in err and "2.99.0" in err and not (tmp_path / "m3").exists()
    rc, err = _merge(s1, whole, "--out", tmp_path / "m4")  # 1/2 next to an unsharded run
    assert rc == 2 and "different splits" in err
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ShardError, match="not a matrix.json"):
        merge.load([str(tmp_path / "bad.json")])
