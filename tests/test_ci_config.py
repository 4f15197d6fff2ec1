"""What ships for other people's CI: workflows, the action, the pre-commit hook, the packages.

Checked with the ecosystem's own tools: GitHub's schemas (check-jsonschema's vendored copies),
zizmor (security lint, offline), pre-commit itself, and ``python -m build`` + a scratch venv.
"""

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = ROOT / "action.yml"
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def _tool(name: str, *args: str, cwd=ROOT, env=None, timeout=300):
    return subprocess.run(
        [str(BIN / name), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_the_expected_workflows_exist():
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "conformance.yml"} and ACTION.is_file()


def test_workflows_and_action_match_githubs_schemas():
    proc = _tool(
        "check-jsonschema", "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = _tool("check-jsonschema", "--builtin-schema", "vendor.github-actions", str(ACTION))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_finds_nothing():
    proc = _tool(
        "zizmor", "--offline", "--no-progress", str(ROOT / ".github" / "workflows"), str(ACTION)
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _run_lines(doc) -> list[str]:
    """Every shell line of every ``run:`` in a workflow or composite action."""
    steps = [s for job in (doc.get("jobs") or {}).values() for s in job.get("steps", [])]
    steps += (doc.get("runs") or {}).get("steps", [])
    lines = []
    for s in steps:
        text = re.sub(r"\\\n", " ", s.get("run", ""))
        lines += [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines


def _make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([A-Za-z][\w-]*):", text, re.M))


@pytest.mark.parametrize("path", WORKFLOWS + [ACTION], ids=lambda p: p.name)
def test_every_command_they_run_exists(path):
    """make targets are in the Makefile, python -m modules import-resolve, hn-* are our scripts."""
    lines = _run_lines(yaml.safe_load(path.read_text()))
    assert lines, f"{path.name}: no run steps"
    targets, checked = _make_targets(), 0
    for line in lines:
        words = shlex.split(line.replace("$GITHUB_STEP_SUMMARY", "SUMMARY"), posix=True)
        for i, w in enumerate(words):
            if w == "make":
                assert words[i + 1] in targets, f"{path.name}: make {words[i + 1]}: no such target"
                checked += 1
            elif w == "-m" and i and words[i - 1].endswith("python"):
                mod = words[i + 1]
                if mod != "pip":
                    assert importlib.util.find_spec(mod), f"{path.name}: no module {mod}"
                    checked += 1
            elif w.startswith("hn-"):
                assert w in SCRIPTS, f"{path.name}: {w} is not a console script of pyproject.toml"
                checked += 1
    assert checked, f"{path.name}: runs none of this project's commands"


def test_precommit_manifest_is_valid():
    proc = _tool("pre-commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml"))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def test_precommit_hook_fails_only_on_new_findings(tmp_path):
    """The real pre-commit installs this repository's hook (at HEAD) and runs it in a scratch repo."""
    repo = tmp_path / "app"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    (repo / "util.py").write_text("def f():\n    return 1\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "audits.scan",
            str(repo),
            "-f",
            "json",
            "-o",
            str(repo / ".hwneutral-baseline.json"),
            "--no-cache",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {head}\n    hooks:\n      - id: hwneutral-audit\n"
    )
    _git(repo, "add", ".pre-commit-config.yaml")
    env = dict(os.environ)
    # the hook's own venv takes the pinned torch build (a loose torch would pull a CUDA build);
    # pre-commit keeps one venv per (repo, rev): it is built once per commit of this project
    env["PIP_CONSTRAINT"] = str(ROOT / "constraints.txt")
    env.setdefault("PRE_COMMIT_HOME", str(Path.home() / ".cache" / "hwneutral" / "pre-commit"))

    def hook():
        return _tool("pre-commit", "run", "--all-files", cwd=repo, env=env, timeout=1200)

    proc = hook()  # only the baseline's finding: passes
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    (repo / "util.py").write_text(
        "import torch\n\ndef f():\n    torch.cuda.synchronize()\n    return 1\n"
    )
    _git(repo, "add", "util.py")
    proc = hook()  # a new finding: fails and names it
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert (
        "util.py:4:5: HN105" in proc.stdout
        and "train.py" not in proc.stdout.split("hwneutral audit")[-1]
    )


def test_wheel_and_sdist_install_and_their_scripts_run(tmp_path):
    """python -m build; the wheel in a fresh venv (dependencies reused from this one)."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--outdir",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheel = next((tmp_path / "dist").glob("*.whl"))
    sdist = next((tmp_path / "dist").glob("*.tar.gz"))
    names = zipfile.ZipFile(wheel).namelist()
    for needed in (
        "audits/catalog.yaml",
        "kernels/csrc/allocator.cpp",
        "kernels/trn/opinfo_skips.yaml",
        "patches/matrix/costs.json",
    ):
        assert any(n.endswith(needed) for n in names), f"wheel lacks {needed}"
    listing = subprocess.run(["tar", "tzf", str(sdist)], capture_output=True, text=True).stdout
    assert "kernels/csrc/allocator.cpp" in listing and "audits/catalog.yaml" in listing

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    vpy = venv / "bin" / "python"
    site = subprocess.run(
        [str(vpy), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # this venv's packages (torch, libcst, ...) are visible, the project itself is not
    deps = sysconfig.get_paths()["purelib"]
    (Path(site) / "_deps.pth").write_text(deps + "\n")
    proc = subprocess.run(
        [str(vpy), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    clean_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run(
        [str(vpy), "-c", "import audits; print(audits.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env,
    )
    assert where.stdout.startswith(site), f"project imported from {where.stdout!r}, not the wheel"
    for script in SCRIPTS:
        proc = subprocess.run(
            [str(venv / "bin" / script), "--help"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=clean_env,
            timeout=120,
        )
        assert proc.returncode == 0 and "usage" in proc.stdout.lower(), (
            script,
            proc.stderr[-1500:],
        )
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    proc = subprocess.run(
        [str(venv / "bin" / "hn-scan"), str(tmp_path / "app"), "-f", "sarif", "--no-cache"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env,
        timeout=120,
    )
    assert proc.returncode == 0 and '"ruleId": "HN105"' in proc.stdout, proc.stderr[-1500:]
