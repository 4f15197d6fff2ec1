"""`python -m patches.matrix` on the fixed smoke subset, cpu + trn (+ absent cuda)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from hn_skip import skip_environment
from validate_helpers import REPO_ROOT

from patches.matrix.options import SMOKE_OPS


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("matrix")
    proc = subprocess.run(
        [sys.executable, "-m", "patches.matrix", "--devices", "cpu,trn,cuda", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return out, json.loads((out / "matrix.json").read_text())


def _cells(data, device):
    return {(c["op"], c["dtype"]): c for c in data["cells"] if c["device"] == device}


def test_cpu_column_runs_every_smoke_op(smoke):
    _, data = smoke
    cpu = _cells(data, "cpu")
    for name in SMOKE_OPS:  # every smoke op ran (variants are "name.variant")
        assert any(op == name or op.startswith(name + ".") for op, _ in cpu), name
    assert cpu[("add", "float32")]["status"] == "pass" and cpu[("add", "float32")]["samples"] > 5
    # upstream's own skip for test_compare_cpu is honoured, with its reason
    b = cpu[("bernoulli", "float32")]
    assert b["status"] == "skip" and "non-deterministic" in b["message"]
    assert all(c["passed"] == c["samples"] for c in cpu.values() if c["status"] == "pass")


def test_trn_column_compares_with_cpu(smoke):
    _, data = smoke
    info = data["devices"]["trn"]
    trn = _cells(data, "trn")
    if not info["available"]:
        assert trn and all(c["status"] == "absent" for c in trn.values())
        skip_environment(f"trn cannot boot in this checkout: {info['detail']}")
    cpu = _cells(data, "cpu")
    assert set(trn) == set(cpu)
    for key, c in trn.items():
        if c["status"] == "pass":
            assert c["samples"] == cpu[key]["samples"] and c["passed"] == c["samples"]
    assert sum(c["status"] == "pass" for c in trn.values()) >= len(trn) // 2


def test_absent_cuda_and_outputs_agree(smoke):
    out, data = smoke
    if not data["devices"]["cuda"]["available"]:
        cuda = _cells(data, "cuda")
        assert len(cuda) == len(_cells(data, "cpu"))
        assert {c["status"] for c in cuda.values()} == {"absent"}
    suites = {s.get("name"): s for s in ET.parse(out / "matrix.junit.xml").getroot()}
    cpu_suite = suites["matrix.cpu"]
    assert int(cpu_suite.get("tests")) == len(_cells(data, "cpu"))
    assert int(cpu_suite.get("skipped")) == sum(
        c["status"] == "skip" for c in _cells(data, "cpu").values()
    )
    md = (out / "matrix.md").read_text()
    assert "| `add` | pass (" in md


def test_html_is_self_contained_and_holds_the_data(smoke):
    out, data = smoke
    page = (out / "matrix.html").read_text()

    class Collect(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.external, self.island, self._in = [], [], "", False

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "tr" and "data-op" in a:
                self.rows.append(a["data-op"])
            if (tag in ("script", "img") and a.get("src")) or (tag == "link" and a.get("href")):
                self.external.append(a)
            self._in = tag == "script" and a.get("id") == "data"

        def handle_data(self, d):
            if self._in:
                self.island += d

        def handle_endtag(self, tag):
            self._in = False

    p = Collect()
    p.feed(page)
    assert not p.external
    assert sorted(p.rows) == sorted({c["op"] for c in data["cells"]})
    assert json.loads(p.island.replace("<\\/", "</"))["cells"] == data["cells"]
    assert 'id="q"' in page  # the filter box


def test_worker_crash_is_recorded_and_the_rest_still_runs(tmp_path):
    env = {**os.environ, "HN_MATRIX_CRASH_AT": "exp"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "patches.matrix",
            "--devices",
            "cpu",
            "--ops",
            "abs,exp,mul",
            "--out",
            str(tmp_path),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    cells = _cells(json.loads((tmp_path / "matrix.json").read_text()), "cpu")
    assert cells[("exp", "float32")]["status"] == "error"
    assert "worker died" in cells[("exp", "float32")]["message"]
    assert cells[("abs", "float32")]["status"] == cells[("mul", "float32")]["status"] == "pass"


def test_dtype_policy_refusal_is_its_own_status(tmp_path):
    # Tensor.double asks the device for float64, which trn's strict policy refuses by design
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "patches.matrix",
            "--devices",
            "cpu,trn",
            "--ops",
            "double",
            "--out",
            str(tmp_path),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "matrix.json").read_text())
    if not data["devices"]["trn"]["available"]:
        skip_environment(f"trn cannot boot in this checkout: {data['devices']['trn']['detail']}")
    assert _cells(data, "cpu")[("double", "float32")]["status"] == "pass"
    c = _cells(data, "trn")[("double", "float32")]
    assert c["status"] == "refused" and c["errors"] == 0
    assert c["refused"] == c["samples"] > 0
    assert "float64 is not supported on trn" in c["message"]
    assert data["summary"]["trn"] == {"refused": 1}
    suites = ET.parse(tmp_path / "matrix.junit.xml").getroot()
    suite = {s.get("name"): s for s in suites}["matrix.trn"]
    assert (suite.get("errors"), suite.get("failures"), suite.get("skipped")) == ("0", "0", "1")
    assert suite.find("testcase/skipped").get("message").startswith("refused: ")
    assert "| `double` | pass (" in (tmp_path / "matrix.md").read_text()
    assert "refused (0/" in (tmp_path / "matrix.md").read_text()
    page = (tmp_path / "matrix.html").read_text()
    assert 'class="c s-refused"' in page and '<span class="s-refused">refused</span>' in page


def test_refusal_matches_the_policy_message_for_any_device():
    from patches.matrix.opinfo_worker import refused

    msg = "aten::empty: float64 is not supported on xpu (no float64 datapath)"
    assert refused(TypeError(msg), "xpu")
    assert not refused(TypeError(msg), "trn")  # another device's policy
    assert not refused(RuntimeError(msg), "xpu")  # only the policy's TypeError
    assert not refused(TypeError("unsupported operand type(s)"), "xpu")
