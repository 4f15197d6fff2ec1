"""The CLI end to end, in-process via audits.scan.main (real files, real cache, real formats)."""

import json

import pytest
import yaml

from audits.scan import main

SRC = """import torch
torch.cuda.synchronize()
x = torch.zeros(3, device="cuda")
torch.cuda.empty_cache()  # hn: ignore[HN302]
"""


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text(SRC)
    (root / "pkg" / "clean.py").write_text("import torch\nprint('cuda is great')\n")
    return root


def run(capsys, *args):
    rc = main([*map(str, args), "--no-progress"] if args[:1] != ("diff",) else list(map(str, args)))
    out, err = capsys.readouterr()
    return rc, out, err


def test_json_report_and_exit_codes(tree, tmp_path, capsys):
    rc, out, err = run(capsys, tree, "--format", "json", "--no-cache")
    assert rc == 0
    doc = json.loads(out)
    assert [(f["rule"], f["line"]) for f in doc["findings"]] == [("HN105", 2), ("HN502", 3)]
    assert doc["findings"][0]["subsystem"] == "pkg"
    assert "2 findings" in err
    assert run(capsys, tree, "--no-cache", "--fail-on-findings")[0] == 1
    assert run(capsys, tree, "--no-cache", "--fail-on-findings", "--ignore", "HN1,device")[0] == 0
    assert run(capsys, tree, "--select", "HN9")[0] == 2
    assert run(capsys, tmp_path / "missing")[0] == 2


def test_yaml_markdown_table_and_output_file(tree, tmp_path, capsys):
    _, out, _ = run(capsys, tree, "-f", "yaml", "--no-cache")
    assert yaml.safe_load(out)["summary"]["findings"] == 2
    _, out, _ = run(capsys, tree, "-f", "markdown", "--no-cache")
    assert "| `pkg/a.py:2:1` | HN105 |" in out
    _, out, _ = run(capsys, tree, "--no-cache")
    assert "HN105" in out and "cuda-synchronize" in out and "2 findings" in out
    dest = tmp_path / "r.json"
    _, out, _ = run(capsys, tree, "-f", "json", "-o", dest, "--no-cache")
    assert out == "" and json.loads(dest.read_text())["summary"]["findings"] == 2


def test_sarif_has_what_github_code_scanning_needs(tree, capsys):
    _, out, _ = run(capsys, tree, "-f", "sarif", "--no-cache")
    doc = json.loads(out)
    assert doc["version"] == "2.1.0" and "sarif-2.1.0" in doc["$schema"]
    run0 = doc["runs"][0]
    rules = run0["tool"]["driver"]["rules"]
    assert run0["tool"]["driver"]["name"] == "hwneutral"
    assert all(
        {"id", "shortDescription", "fullDescription", "help", "helpUri", "defaultConfiguration"}
        <= set(r)
        for r in rules
    )
    for res in run0["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/a.py"
        assert res["partialFingerprints"]


def test_config_in_scanned_pyproject(tree, capsys):
    (tree / "pyproject.toml").write_text(
        '[tool.hwneutral]\nignore = ["HN105"]\nexclude = ["build/*"]\n'
    )
    (tree / "build").mkdir()
    (tree / "build" / "gen.py").write_text(SRC)
    _, out, _ = run(capsys, tree, "-f", "json", "--no-cache")
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["HN502"]
    (tree / "pyproject.toml").write_text("[tool.hwneutral]\nbogus = 1\n")
    assert run(capsys, tree, "--no-cache")[0] == 2
    (tree / "pyproject.toml").write_text(
        '[tool.hwneutral]\nper-file-ignores = {"pkg/*" = ["HN5"]}\n'
    )
    _, out, _ = run(capsys, tree, "-f", "json", "--no-cache")
    assert [(f["path"], f["rule"]) for f in json.loads(out)["findings"]] == [
        ("build/gen.py", "HN105"),
        ("build/gen.py", "HN502"),
        ("pkg/a.py", "HN105"),
    ]


def test_baseline_and_diff(tree, tmp_path, capsys):
    old = tmp_path / "old.json"
    run(capsys, tree, "-f", "json", "-o", old, "--no-cache")
    a = tree / "pkg" / "a.py"
    a.write_text("# moved\n" + SRC + "torch.cuda.manual_seed(0)\n")
    _, out, _ = run(capsys, tree, "-f", "json", "--no-cache", "--baseline", old)
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["HN310"]  # line moves are not new
    new = tmp_path / "new.json"
    run(capsys, tree, "-f", "json", "-o", new, "--no-cache")
    rc, out, _ = run(capsys, "diff", old, new, "--fail-on-findings")
    assert rc == 1 and out.startswith("1 new, 0 fixed, 2 existing")
    rc, out, _ = run(capsys, "diff", new, old, "-f", "json")
    assert rc == 0 and json.loads(out)["summary"] == {"new": 0, "fixed": 1, "existing": 2}
    (tmp_path / "junk.json").write_text("{}")
    assert run(capsys, tree, "--baseline", tmp_path / "junk.json")[0] == 2


def test_cache_warm_equals_cold_and_edit_invalidates_only_that_file(tree, tmp_path, capsys):
    import audits.workers as workers

    for i in range(60):
        (tree / "pkg" / f"m{i}.py").write_text(
            SRC.replace("synchronize()", f"synchronize()  # {i}")
        )
    cache = tmp_path / "cache"
    _, cold, _ = run(capsys, tree, "-f", "json", "--cache-dir", cache, "-j", "2")

    def scanned_by(*args):
        """Run a single-process scan and return (paths actually scanned, JSON output)."""
        scanned = []
        orig = workers.scan_one
        workers.scan_one = lambda e: (scanned.append(e.relpath), orig(e))[1]
        try:
            _, out, _ = run(capsys, tree, "-f", "json", "--cache-dir", cache, "-j", "1", *args)
        finally:
            workers.scan_one = orig
        return scanned, out

    # Speed is the benchmark's business; here: the warm run rescans nothing and says the same.
    scanned, warm = scanned_by()
    strip = lambda s: {k: v for k, v in json.loads(s).items() if k != "duration_s"}  # noqa: E731
    assert scanned == [] and strip(cold) == strip(warm)
    assert not any(p.is_relative_to(tree) for p in cache.rglob("*"))  # stored outside
    assert len(list(cache.glob("*.json"))) == 1 and not list(tree.rglob("*.json"))

    (tree / "pkg" / "m3.py").write_text("import torch\ntorch.cuda.manual_seed(1)\n")
    scanned, out = scanned_by()
    assert scanned == ["pkg/m3.py"]
    rules = [f["rule"] for f in json.loads(out)["findings"] if f["path"] == "pkg/m3.py"]
    assert rules == ["HN310"]
