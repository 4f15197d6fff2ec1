"""The wild-scripts benchmark (tests/benchmarks/wild_scripts.py) without the network: its whole
measure on a small tree of our own, the split-unit rules on hand-written decisions, and the
sdist fetch's digest and member-path checks."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import textwrap
import urllib.error
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.benchmarks import wild_fetch, wild_scripts, wild_units
from tests.benchmarks.replay_score import Hunk

REPO = Path(__file__).resolve().parents[2]

TRAIN = """\
import argparse

import torch
import torch.nn as nn


def main():
    assert torch.cuda.is_available()
    torch.backends.cudnn.benchmark = True
    device = "cuda"
    model = nn.Linear(4, 2).to(device)
    print(len(torch.cuda.memory_snapshot()))
    return model(torch.ones(1, 4, device=device))


def report(model):
    device = "cuda"
    model = model.to(device)
    if torch.cuda.is_available():
        print("GPU:", torch.cuda.get_device_name(0))
        print("CUDA version:", torch.version.cuda)
    return model


def pick_dtype(x):
    x = x.to("cuda")
    major, _ = torch.cuda.get_device_capability()
    return x.to(torch.bfloat16 if major >= 8 else torch.float16)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.parse_args()
    main()
"""


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """wild_scripts.measure on a one-script tree: generate, git am, rerun, decisions."""
    root = tmp_path_factory.mktemp("wild")
    (root / "src").mkdir()
    (root / "src" / "train.py").write_text(TRAIN)
    opts = SimpleNamespace(project=REPO, unsafe=True)
    res = wild_scripts.measure(root / "src", opts, root / "work")
    return res, root / "work" / "tree"


def _units(res) -> dict[str, dict]:
    return {u["unit"]: u for u in res["split_units"]}


def _sites(res, unit: str) -> list[dict]:
    return [s for s in res["sites"] if s["unit"] == unit]


def test_measure_checks_pass(measured):
    res, _ = measured
    c = res["checks"]
    assert c["patches"] >= 1 and c["applied"] == c["patches"]
    assert not c["apply_error"] and not c["prefix_failures"] and c["rerun_patches"] == 0
    assert not res["crashes"] and not res["rewritten_not_in_diff"]
    assert (res["before"], res["fixed"], res["left"], res["undecided"]) == (12, 4, 8, 0)
    # generate's own summary counts what --explain decides: the keeps_cuda rewrite of HN109
    # keeps CUDA's call on purpose and is fixed (round 21's summary said one fewer)
    assert (res["generate_says"]["fixed"], res["generate_says"]["left_after"]) == (4, 8)


def test_rewritten_and_left_in_one_function_is_split(measured):
    res, _ = measured
    main = _units(res)["main"]
    assert [s["line"] for s in main["rewritten"]] == [10]  # device = "cuda"
    left = {(s["line"], s["rule"], s["reason"]) for s in main["left"]}
    assert (8, "HN101", "cuda-guarded") in left  # assert torch.cuda.is_available()
    assert (12, "HN304", "manual rule") in left  # CUDA's allocator: what the assert guards
    flag = [s for s in _sites(res, "main") if s["line"] == 9]  # cudnn.benchmark = True
    assert flag and not any(s["counts"] for s in flag)  # runs anywhere, does nothing off CUDA


def test_cuda_info_block_left_whole_is_not_split(measured):
    res, _ = measured
    sites = _sites(res, "report")
    assert any(s["status"] == "rewritten" for s in sites)
    left = [s for s in sites if s["status"] == "left"]
    assert {s["line"] for s in left} == {19, 20, 21}  # the whole `if torch.cuda...` block
    assert any("cuda-branch" in s["kinds"] for s in left)
    assert not any(s["counts"] for s in left)
    assert "report" not in _units(res)


def test_keeps_cuda_line_is_not_split(measured):
    res, tree = measured
    sites = _sites(res, "pick_dtype")
    assert sites and all(s["status"] == "rewritten" for s in sites)
    after = (tree / "train.py").read_text()
    assert "torch.cuda.get_device_capability() if torch.cuda.is_available() else (0, 0)" in after
    # the series' own CUDA line is found again by the rescan, and counts nowhere
    assert res["after_rerun_scan"] > res["left"]
    assert set(_units(res)) == {"main"}


# --- the split rules on hand-written decisions --------------------------------------------

REWRITE = ["REWRITTEN (no evidence that this code is about CUDA itself)", "    -> x"]
GUARDED = [
    "LEFT, the code is about CUDA itself:",
    "    cuda-comment (the comment at the site is about CUDA): 'gpu'",
    "    cuda-guarded (the code it guards stays CUDA-specific): 'No GPU' (line 3)",
]
BRANCH = ["LEFT, the code is about CUDA itself:", "    cuda-branch (only CUDA reaches this): x"]
MANUAL = ["left: manual rule: no mechanical rewrite"]
ANYWAY = MANUAL + [
    "    but the series rewrites its line anyway -> if torch.accelerator.is_available():"
]
NODEV = ["LEFT: no `device` in scope"]

SCRIPT = textwrap.dedent(
    """\
    import torch


    def run(opt):
        if opt.cuda and not torch.cuda.is_available():
            raise RuntimeError("No GPU found")
        device = torch.device("cuda")
        if torch.cuda.is_available():
            print(torch.cuda.get_device_name(0))
        return device


    class Box:
        def go(self):
            return torch.ones(2).cuda()
    """
)


def _f(rule: str, line: int, lines: list[str]) -> dict:
    return {"rule": rule, "line": line, "end_line": line, "col": 4, "lines": lines}


def test_classify_reads_explain_lines():
    assert wild_units.classify(REWRITE)[:2] == ("rewritten", "rewritten")
    assert wild_units.classify(ANYWAY)[0] == "fixed"
    assert wild_units.classify(GUARDED) == (
        "left",
        "cuda-guarded",
        ["cuda-comment", "cuda-guarded"],
    )
    assert wild_units.classify(MANUAL)[1] == "manual rule"
    assert wild_units.classify(NODEV)[1] == wild_units.NO_DEVICE
    autocast = ["LEFT: torch.amp.autocast needs device_type: no device_type or device in scope"]
    assert wild_units.classify(autocast)[1] == "torch.amp.autocast needs device_type"


def _sites_of(hunks, findings=None):
    findings = findings or [
        _f("HN101", 5, GUARDED),
        _f("HN710", 5, MANUAL),
        _f("HN503", 7, REWRITE),
        _f("HN101", 8, GUARDED),
        _f("HN108", 9, BRANCH),
        _f("HN501", 15, NODEV),
    ]
    return wild_units.sites_of("s.py", SCRIPT, findings, hunks)


def test_a_cuda_requirement_beside_a_rewrite_splits_its_unit():
    sites = _sites_of([Hunk(7, ["old"], ["new"])])
    units = wild_units.split_units(sites)
    assert [(u.unit, [s.line for s in u.left]) for u in units] == [("run", [5, 5])]
    assert {s.unit for s in sites} == {"run", "Box.go"}


def test_a_cuda_only_block_counts_once_the_series_edits_it():
    sites = _sites_of([Hunk(7, ["old"], ["new"]), Hunk(9, [], ["inserted in the block"])])
    (unit,) = wild_units.split_units(sites)
    assert [s.line for s in unit.left] == [5, 5, 8, 9]


def test_a_left_finding_on_a_line_the_series_wrote_does_not_count():
    sites = _sites_of([Hunk(5, ["old"], ["new"]), Hunk(7, ["old"], ["new"])])
    assert wild_units.split_units(sites) == []
    assert [s.counts for s in sites if s.line == 5] == [False, False]


def test_no_rewrite_no_split():
    findings = [_f("HN101", 5, GUARDED), _f("HN503", 7, NODEV), _f("HN501", 15, NODEV)]
    assert wild_units.split_units(_sites_of([], findings)) == []
    findings[1] = _f("HN503", 7, REWRITE)
    assert len(wild_units.split_units(_sites_of([], findings))) == 1


def test_tally():
    findings = [_f("HN710", 5, ANYWAY), _f("HN503", 7, REWRITE), _f("HN501", 15, NODEV)]
    extra = [{"rule": "HN103", "line": 7, "end_line": 7, "col": 1}]
    sites = wild_units.sites_of("s.py", SCRIPT, findings, [], extra)
    t = wild_units.tally(sites)
    assert (t["before"], t["rewritten"], t["fixed"], t["left"], t["undecided"]) == (4, 1, 2, 1, 1)
    assert t["no_device"] == 1 and t["left_by_reason"] == {wild_units.NO_DEVICE: 1}
    assert t["by_rule"] == {
        "HN103": [1, 0, 0],
        "HN501": [1, 0, 1],
        "HN503": [1, 1, 0],
        "HN710": [1, 1, 0],
    }


# --- fetching -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "pkg-1.0/../../evil.py", "..", "C:/x.py", "\\\\host\\x.py"]
)
def test_unsafe_member_names(name):
    assert wild_fetch.unsafe_member(name)


def test_safe_member_name():
    assert wild_fetch.unsafe_member("pkg-1.0/examples/a..b/x.py") == ""


def _tar(path: Path, members: dict[str, bytes], link: str = "") -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if link:
            info = tarfile.TarInfo(link)
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(info)
    return path


def test_extract_refuses_a_climbing_member(tmp_path):
    archive = _tar(tmp_path / "a.tar.gz", {"p-1/examples/a.py": b"x=1\n", "p-1/../../evil.py": b""})
    with pytest.raises(wild_fetch.FetchError, match="unsafe"):
        wild_fetch.extract(archive, tmp_path / "out", ["examples"])
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "evil.py").exists()


def test_extract_selects_moves_and_skips_links(tmp_path):
    members = {"p-1/fairseq/examples/a.py": b"a\n", "p-1/setup.cfg": b"c\n", "p-1/other.py": b"o"}
    archive = _tar(tmp_path / "a.tar.gz", members, link="p-1/fairseq/examples/link.py")
    out = wild_fetch.extract(archive, tmp_path / "out", ["fairseq/examples=examples", "setup.cfg"])
    got = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert got == ["examples/a.py", "setup.cfg"]


DATA = b"the sdist"
DIGEST = hashlib.sha256(DATA).hexdigest()


def _pypi(monkeypatch, payload: bytes = DATA, digest: str = DIGEST, versioned: bool = True):
    """A fake PyPI: the JSON page (relative url, as this machine's mirror serves it) and the file."""
    asked = []
    meta = [
        {"packagetype": "sdist", "filename": "p-1.tar.gz", "url": "../../packages/ab/p-1.tar.gz"}
    ]
    meta[0]["digests"] = {"sha256": digest}

    def get(url):
        asked.append(url)
        if url.endswith("/p/1/json"):
            if not versioned:
                raise urllib.error.HTTPError(url, 404, "Not Found", {}, None)
            return json.dumps({"urls": meta}).encode()
        if url.endswith("/p/json"):
            return json.dumps({"urls": [], "releases": {"1": meta}}).encode()
        return payload

    monkeypatch.setattr(wild_fetch, "_get", get)
    return asked


@pytest.mark.parametrize(
    "versioned, url",
    [
        (True, "https://pypi.org/pypi/packages/ab/p-1.tar.gz"),  # from /pypi/p/1/json
        (False, "https://pypi.org/packages/ab/p-1.tar.gz"),  # the project page: /pypi/p/json
    ],
)
def test_relative_url_resolved_against_the_json_page(monkeypatch, versioned, url):
    _pypi(monkeypatch, versioned=versioned)
    assert wild_fetch.sdist_entry("p", "1") == (url, "p-1.tar.gz", DIGEST)


def test_a_cached_file_with_a_wrong_digest_is_refused(monkeypatch, tmp_path):
    (tmp_path / "p-1.tar.gz").write_bytes(b"tampered")
    asked = _pypi(monkeypatch)
    got = wild_fetch.download("p", "1", ("p-1.tar.gz", DIGEST), tmp_path)
    assert got.read_bytes() == DATA and asked[-1].endswith("p-1.tar.gz")  # downloaded again
    asked.clear()
    assert wild_fetch.download("p", "1", ("p-1.tar.gz", DIGEST), tmp_path) == got
    assert asked == []  # a matching cached file: no network


def test_a_download_with_a_wrong_digest_is_refused(monkeypatch, tmp_path):
    _pypi(monkeypatch, payload=b"not it")
    with pytest.raises(wild_fetch.FetchError, match="sha256"):
        wild_fetch.download("p", "1", ("p-1.tar.gz", DIGEST), tmp_path)
    assert not (tmp_path / "p-1.tar.gz").exists()


def test_pypi_digest_other_than_the_pin_is_refused(monkeypatch, tmp_path):
    _pypi(monkeypatch, digest="0" * 64)
    with pytest.raises(wild_fetch.FetchError, match="pinned"):
        wild_fetch.download("p", "1", ("p-1.tar.gz", DIGEST), tmp_path)


@pytest.mark.parametrize(
    ("args", "named"),
    [(["--projects", "fairscale"], "fairscale==0.4.13"), (["--set", "held-out"], "opacus==1.6.0")],
)
def test_fetch_failure_exits_2_naming_the_project(monkeypatch, tmp_path, capsys, args, named):
    """A tuned project or a held-out one: exit 2, naming the sdist that could not be had."""

    def fail(name, version, pin):
        raise wild_scripts.FetchError(f"{name}=={version}: cannot read it")

    monkeypatch.setattr(wild_scripts.wild_fetch, "download", fail)
    assert wild_scripts.main([*args, "--keep", str(tmp_path)]) == 2
    assert named in capsys.readouterr().err


def test_a_library_flag_left_beside_a_rewrite_splits_nothing():
    src = textwrap.dedent(
        """\
        import torch


        def main():
            assert torch.cuda.is_available()
            torch.backends.cudnn.benchmark = True
            device = "cuda"
            return device
        """
    )
    findings = [_f("HN101", 5, REWRITE), _f("HN412", 6, MANUAL), _f("HN502", 7, REWRITE)]
    sites = wild_units.sites_of("b.py", src, findings, [Hunk(5, ["old"], ["new"])])
    assert wild_units.split_units(sites) == []
    findings[1] = _f("HN104", 6, MANUAL)  # not a flag: it splits
    src = src.replace("torch.backends.cudnn.benchmark = True", "torch.cuda.set_device(0)")
    sites = wild_units.sites_of("b.py", src, findings, [Hunk(5, ["old"], ["new"])])
    assert len(wild_units.split_units(sites)) == 1


def test_a_library_flag_through_its_module_alias_splits_nothing():
    src = textwrap.dedent(
        """        import torch
        import torch.backends.cudnn as cudnn


        def main():
            assert torch.cuda.is_available()
            cudnn.benchmark = True
            device = "cuda"
            return device
        """
    )
    findings = [_f("HN101", 6, REWRITE), _f("HN412", 7, MANUAL), _f("HN502", 8, REWRITE)]
    sites = wild_units.sites_of("b.py", src, findings, [Hunk(6, ["old"], ["new"])])
    assert wild_units.split_units(sites) == []
    other = src.replace("import torch.backends.cudnn as cudnn", "import mylib as cudnn")
    sites = wild_units.sites_of("b.py", other, findings, [Hunk(6, ["old"], ["new"])])
    assert len(wild_units.split_units(sites)) == 1  # another module's attribute: it splits


def test_the_import_of_a_library_settings_module_splits_nothing():
    src = textwrap.dedent(
        """\
        import argparse
        import torch.backends.cudnn as cudnn

        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default="cuda")
        cudnn.benchmark = True
        """
    )
    findings = [_f("HN190", 2, MANUAL), _f("HN502", 5, REWRITE), _f("HN412", 6, MANUAL)]
    sites = wild_units.sites_of("d.py", src, findings, [Hunk(5, ["old"], ["new"])])
    assert wild_units.split_units(sites) == []
    other = src.replace("torch.backends.cudnn", "torch.cuda.nccl")  # CUDA work, not a setting
    sites = wild_units.sites_of("d.py", other, findings, [Hunk(5, ["old"], ["new"])])
    assert len(wild_units.split_units(sites)) == 1


# --- the held-out set (round 22) ----------------------------------------------------------


def test_sets_keep_the_tuned_default_and_hold_the_others_out():
    assert wild_scripts.SETS["tuned"] == ["ignite", "fairscale", "fairseq"]
    held = wild_scripts.SETS["held-out"]
    assert held and not set(held) & set(wild_scripts.SETS["tuned"])
    assert all(wild_scripts.PROJECTS[k].held_out for k in held)
    assert wild_scripts.parse_args([]).keys == wild_scripts.SETS["tuned"]
    assert wild_scripts.parse_args(["--set", "held-out"]).keys == held
    assert wild_scripts.parse_args(["--set", "all"]).keys == list(wild_scripts.PROJECTS)
    assert wild_scripts.parse_args(["--projects", "opacus,ignite"]).keys == ["opacus", "ignite"]


def test_every_pin_is_a_sha256_of_an_sdist():
    for p in wild_scripts.PROJECTS.values():
        filename, digest = p.sdist
        assert filename.endswith(".tar.gz") and p.version in filename
        assert len(digest) == 64 and int(digest, 16) >= 0
        assert p.folders and not any(f.startswith(("/", "..")) for f in p.folders)


def test_the_report_prints_held_out_projects_apart(capsys):
    row = {
        "files_scanned": 1,
        "files_with_findings": 1,
        "before": 2,
        "fixed": 1,
        "left": 1,
        "undecided": 0,
        "after_rerun_scan": 1,
        "no_device": 0,
        "split_units": [],
        "checks": {"patches": 1, "apply_error": "", "prefix_failures": [], "rerun_patches": 0},
        "seconds": {"all": 1.0},
    }
    tuned = {"project": "ignite==0.5.5", "held_out": False, **row}
    held = {"project": "opacus==1.6.0", "held_out": True, **row}
    wild_scripts.wild_report.summary([tuned, held], plain=True)
    out = capsys.readouterr().out
    first, _, second = out.partition("Held-out projects")
    assert "ignite==0.5.5" in first and "opacus" not in first
    assert "opacus==1.6.0" in second and "ignite" not in second


def test_a_project_that_breaks_generate_does_not_hide_the_others(
    measured, monkeypatch, tmp_path, capsys
):
    """One project's generate crash is reported and exits 1; the projects after it are still
    measured and shown (round 27: lm_eval's crash hid the other three projects' figures)."""
    res, _ = measured

    def run(key, opts, work):
        if key == "fairscale":
            raise RuntimeError("generate exited 1: FileNotFoundError")
        proj = wild_scripts.PROJECTS[key]
        return {"project": key, "folders": list(proj.folders), "held_out": False, **res}

    monkeypatch.setattr(wild_scripts, "run_project", run)
    out_json = tmp_path / "out.json"
    argv = ["--projects", "fairscale,ignite", "--plain", "--json", str(out_json)]
    assert wild_scripts.main([*argv, "--keep", str(tmp_path)]) == 1
    out = capsys.readouterr()
    assert "fairscale: generate exited 1" in out.err
    assert "fairscale: NOT MEASURED: generate exited 1" in out.out and "ignite" in out.out
    saved = json.loads(out_json.read_text())
    assert [p["project"] for p in saved["projects"]] == ["ignite"]
    assert saved["broken"] == {"fairscale": "generate exited 1: FileNotFoundError"}


def test_a_file_generate_went_on_without_is_a_crash():
    """generate leaves a file its codemod failed on and goes on (exit 0); the benchmark reads
    that file from generate's summary and fails the project."""
    summary = (
        "3 patches, 2 files, 4 findings fixed, 1 left, 1 file errors (1.0s)\n"
        "  error pkg/mod.py: codemod-fault StopIteration:  (module_device.py:94)"
    )
    assert wild_scripts.faults(summary) == [
        {"file": "pkg/mod.py", "traceback": "StopIteration:  (module_device.py:94)"}
    ]
    assert wild_scripts.faults(summary.splitlines()[0]) == []
    r = {"checks": {"apply_error": "", "prefix_failures": [], "rerun_patches": 0}}
    assert wild_scripts.failed({**r, "crashes": wild_scripts.faults(summary)})
