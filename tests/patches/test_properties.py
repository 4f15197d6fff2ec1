"""Property tests over the fixture corpus: programs composed of fixture statements (plus comments
and corruptions) always come out parseable, compilable, and stable under a second run; on trees
composed of them, the safe rules fix a subset of what ``--unsafe-fixes`` fixes, and ``--explain``
gives generate's own decision for every finding in both modes."""

import ast
import tempfile
from collections import Counter
from pathlib import Path

from codemod_helpers import FIXTURES, fix
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from audits.catalog import load
from patches.generate.linediff import opcodes


def _statements() -> list[str]:
    out = []
    for p in sorted(FIXTURES.glob("hn*.py")):
        src = p.read_text()
        for node in ast.parse(src).body:
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            out.append("\n".join(src.splitlines()[start - 1 : node.end_lineno]))
    return out


STATEMENTS = _statements()
programs = st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=6).map("\n\n".join)


@st.composite
def mangled(draw):
    """A program, sometimes with a comment inserted or one line corrupted."""
    lines = draw(programs).splitlines()
    i = draw(st.integers(0, len(lines)))
    how = draw(st.sampled_from(["keep", "comment", "corrupt", "indent"]))
    if how == "comment":
        lines.insert(i, "# torch.cuda.synchronize() in a comment stays")
    elif how == "corrupt" and lines:
        lines[min(i, len(lines) - 1)] += draw(st.sampled_from(["(", " :=", " def", "\t)"]))
    elif how == "indent" and lines:
        lines[min(i, len(lines) - 1)] = "  " + lines[min(i, len(lines) - 1)]
    return "\n".join(lines) + "\n"


def _parses(src: str) -> bool:
    try:
        compile(src, "x.py", "exec", dont_inherit=True)
        return True
    except SyntaxError:
        return False


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mangled())
# an exact refactor writes a CUDA compare (``device_type == "cuda"``) after another site's HN505
# was fixed: the property holds for the lines the rewrite did not write (found by hypothesis)
@example(
    "def validate(devices, count):\n"
    '    return all(d.type == "cpu" or (d.type == "cuda" and 0 <= d.index < count) for d in devices)\n'
    "\n"
    "def _include_paths(cuda: bool = False):\n"
    '    paths = ["/usr/include"]\n'
    "    if cuda:\n"
    '        paths.append(os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include"))\n'
    "    return paths\n"
)
# a device type threaded into a call that had no argument (``autocast()``, a ``device`` in scope)
@example(
    "def forward_no_device(model, x):\n    with torch.cuda.amp.autocast():\n"
    '        return model(x)\n\ndevice = "cuda:0"\n'
)
# a script's introduced ``device`` beside a plain "cuda" argument (a second run used it)
@example(
    "def move(x):\n    if torch.cuda.is_available():\n        x = x.cuda()\n    return x\n\n"
    'def no_device(x):\n    return x.to(torch.device("cuda"))\n\nmove(1)\n'
)
# a module-level TF32 assignment the precision idiom turns into a call: the module must not
# become a script on the second run (script-device's is_script)
@example(
    "torch.backends.cuda.matmul.allow_tf32 = True  # allow tf32 on matmul\n\n"
    "def no_device_type(x, rank):\n    return x.cuda(rank)\n"
)
# the backend pick written for a "nccl" default holds a "cpu": not a CPU path of the script, or
# the device fact beside it was checked on the second run only (found by hypothesis)
@example(
    'free, total = torch.cuda.mem_get_info(device=0)\n\nparser.add_argument("--dist-backend", '
    'default="nccl", type=str)\n'
)
# CUDA's own call kept under its check (HN116): still found after the fix, by design
@example("torch.cuda.set_per_process_memory_fraction(0.5)\n")
# a script's SM version, CUDA's where CUDA is (HN109's keeps_cuda; found by hypothesis)
@example(
    "major, minor = torch.cuda.get_device_capability()\n\n"
    'parser.add_argument("--dist-backend", default="nccl", type=str)\n'
)
@example(
    'def pick():\n    return "gpu" if torch.cuda.is_available() else "cpu"\n\n'
    "torch.cuda.set_per_process_memory_fraction(0.5)\n"
)
@example(  # torch optional to the file: a function's from-import binds no `torch` (round 42)
    'def pick():\n    return "gpu" if torch.cuda.is_available() else "cpu"\n\n'
    "def repro(args):\n    from torch.cuda import synchronize as sync\n\n"
    "    need_sync = any(isinstance(a, torch.Tensor) and a.is_cuda for a in args)\n"
    "    if need_sync:\n        sync()\n"
)
def test_rewrite_is_parse_safe_and_idempotent(src):
    first, found = fix(src)
    if not _parses(src):
        # Unparseable input: reported by the scan or the codemod, never rewritten.
        assert first.after == src
        return
    assert not first.error, first.error
    assert _parses(first.after)
    second, found2 = fix(first.after)
    assert second.after == first.after, "a second run changed the code again"
    assert second.outcome.applied == []
    # distinct sites: two families may both record the one statement they rewrite together
    before, fixed = (
        Counter(f.rule for f in found),
        Counter(r for r, _ in set(first.outcome.applied)),
    )
    fully_fixed = {r for r in fixed if fixed[r] == before[r]} - KEPT
    # The audit reports no finding of a rule whose every site was fixed, except on a line an
    # exact refactor wrote: it names CUDA by design (HN510's ``if cuda:`` -> ``if device_type ==
    # "cuda":``, an HN505 compare), or a fix that keeps CUDA's call under CUDA's check (HN116:
    # its ``if torch.cuda.is_available():`` is an HN101 site by design).
    written = _added(src, first.after) if (EXACT | KEPT) & set(fixed) else set()
    assert not [f for f in found2 if f.rule in fully_fixed and f.line not in written]


EXACT = {r.id for r in load().rules if ((r.fix or {}).get("args") or {}).get("exact")}
# HN116: the fix keeps CUDA's own call, under ``torch.cuda.is_available()`` (its replacement);
# HN109 in a script: CUDA's SM version where CUDA is, else (0, 0) (``keeps_cuda``)
KEPT = {
    r.id
    for r in load().rules
    if (r.replacement or "").startswith("torch.cuda.")
    or ((r.fix or {}).get("args") or {}).get("keeps_cuda")
}


def _added(a: str, b: str) -> set[int]:
    """The lines of ``b`` (1-based) that are not in ``a``'s place."""
    ops = opcodes(a.splitlines(), b.splitlines())
    return {j + 1 for tag, _, _, j1, j2 in ops if tag != "equal" for j in range(j1, j2)}


# -- safe mode is a subset of unsafe mode, and --explain answers what generate does ------------

INTENT = FIXTURES / "intent"
# where a file lives changes what the gate knows (CUDA's own code, test files, PyTorch's tree)
PATHS = ("torch/utils/gen.py", "torch/cuda/gen.py", "test/test_gen.py", "pkg/gen.py")


def _units() -> list[str]:
    """Top-level statements of the rule fixtures and of the labelled intent snippets."""
    out = list(STATEMENTS)
    for p in sorted(INTENT.rglob("*.py")):
        src = p.read_text()
        for node in ast.parse(src).body:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
                out.append("\n".join(src.splitlines()[start - 1 : node.end_lineno]))
    return out


UNITS = _units()


def _scanned(root: Path, unsafe: bool):
    """A run of ``root`` with the tree scan's report: each file's scan, then the audit's
    tree-level pass (uses of the tree's wrappers of CUDA queries: ``tree_uses``), no cache."""
    from audits.model import Report
    from patches.generate import pipeline, tree_uses
    from patches.generate.state import Settings

    run = pipeline.read(Settings(root, unsafe_fixes=unsafe))
    report = Report(root=str(root))
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        found, errors = run.audit.rescan(p.read_text(), rel)
        report.findings += [f for f in found if f.rule in run.audit.selected]
        report.errors += errors
    pipeline.scan(run, report)
    report.findings += tree_uses.after(run, {})[0]
    return run


def _decisions(root: Path, unsafe: bool):
    """(the run, the (path, rule, line, col) generate fixes, the summary's fixed per rule)."""
    from patches.generate import pipeline, recount

    run = pipeline.plan(_scanned(root, unsafe))
    assert not run.plan.unaccounted(run.report.findings)
    return run, run.plan.fixed_at, recount.summary_counts(run)[1]


def _explained(root: Path, unsafe: bool, report) -> tuple[set, Counter]:
    """(the findings ``--explain`` says generate rewrites, those it says are fixed per rule:
    rewritten, or gone after the series), one file at a time; every finding of the report has
    a decision."""
    from patches.generate.explain import TAKEN, WRAPPER_GONE, decisions

    run = _scanned(root, unsafe)
    rewritten, fixed, decided = set(), Counter(), []
    for p in sorted(root.rglob("*.py")):
        d = decisions(p, root, run=run)
        for f in d.found:
            lines = d.lines(f)
            decided.append((f.path, f.rule, f.line, f.col))
            if d.rewritten(f):
                rewritten.add((f.path, f.rule, f.line, f.col))
            if d.rewritten(f) or any(TAKEN in ln or WRAPPER_GONE in ln for ln in lines):
                fixed[f.rule] += 1
    want = Counter((f.path, f.rule, f.line, f.col) for f in report.findings)
    assert Counter(decided) == want, f"no decision: {sorted(want - Counter(decided))}"
    return rewritten, fixed


def _check_tree(root: Path) -> tuple[set, set]:
    """safe ⊆ unsafe; in both modes every finding of the scan (the tree-level pass's too) has
    ``--explain``'s decision, the same as generate's, and generate's summary counts as fixed
    what explain says is fixed (rewritten, or gone after the series)."""
    safe_run, safe, safe_fixed = _decisions(root, False)
    unsafe_run, unsafe, unsafe_fixed = _decisions(root, True)
    assert safe <= unsafe, f"fixed in safe mode only: {sorted(safe - unsafe)}"
    for mode, run, fixed_at, fixed in (
        ("safe mode", safe_run, safe, safe_fixed),
        ("--unsafe-fixes", unsafe_run, unsafe, unsafe_fixed),
    ):
        rewritten, explained = _explained(root, run.settings.unsafe_fixes, run.report)
        assert rewritten == fixed_at, f"explain and generate differ ({mode})"
        assert +explained == +fixed, f"explain and the summary count differ ({mode})"
    return safe, unsafe


def test_safe_is_a_subset_of_unsafe_on_the_intent_snippets(tmp_path):
    """Every labelled snippet at its own path, one tree; explain agrees in both modes."""
    root = tmp_path / "tree"
    for p in INTENT.rglob("*.py"):
        dst = root / p.relative_to(INTENT)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(p.read_text())
    _check_tree(root)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(PATHS),
            st.lists(st.sampled_from(UNITS), min_size=1, max_size=5),
        ),
        min_size=1,
        max_size=2,
        unique_by=lambda x: x[0],
    )
)
def test_safe_is_a_subset_of_unsafe_and_explain_agrees(files):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, units in files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text("import torch\n\n\n" + "\n\n\n".join(units) + "\n")
        _check_tree(root)


# -- the same on the families' own fixtures (torch's shapes, at their fixture paths) -----------

HEADER = "# fixture-path: "
FAMILY_FIXTURES = sorted(
    p
    for p in FIXTURES.glob("*/*.py")
    if p.parent.name not in ("intent",) and not p.name.endswith(".expected.py")
)


def _fixture_rel(p: Path) -> str:
    """The path a family fixture is scanned and gated as (its header), else its own name (the
    script and corpus fixtures, which are scripts outside torch)."""
    first = p.read_text().splitlines()[0] if p.read_text() else ""
    if first.startswith(HEADER):
        return first[len(HEADER) :].strip()
    return f"{p.parent.name}/{p.name}"


def _fixture_tree(root: Path, files) -> None:
    for i, p in enumerate(files):
        rel = Path(_fixture_rel(p))
        if (root / rel).exists():  # two fixtures at one path: keep the folder, not the name
            rel = rel.with_name(f"{rel.stem}_{i}{rel.suffix}")
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(p.read_text())


def test_family_fixtures_exist():
    """The strategy below draws from something: every family folder has fixtures."""
    folders = {p.parent.name for p in FAMILY_FIXTURES}
    assert {"device_checks", "module_device", "timing", "corpus"} <= folders, folders


def test_family_fixture_tree_fixes_and_agrees(tmp_path):
    """A fixed tree of fixtures whose decisions depend on the rest of their file (a module's own
    device, a timing unit, a negated check beside torch.cuda calls): something is fixed, the safe
    fixes are a subset, and explain agrees in both modes."""
    wanted = ("fsdp_harness", "negated", "negative_negated_kernel_check", "timing_unit")
    files = [p for p in FAMILY_FIXTURES if p.stem in wanted]
    assert len(files) >= 3, files
    _fixture_tree(tmp_path, files)
    safe, unsafe = _check_tree(tmp_path)
    assert unsafe and len(unsafe) > len(safe), (safe, unsafe)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(FAMILY_FIXTURES), min_size=1, max_size=4, unique=True))
def test_safe_is_a_subset_of_unsafe_and_explain_agrees_on_family_fixtures(files):
    """Whole family fixtures (where a site's decision depends on its file: module devices,
    timing units, device checks, script idioms) at their own paths: safe ⊆ unsafe, and
    ``--explain`` gives generate's decision for every finding in both modes."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _fixture_tree(root, files)
        _check_tree(root)


# -- uses of a project's wrappers (the tree-level pass) and CUDA kept on purpose ----------------

TREE_USES = FIXTURES / "tree_uses"


def test_wrapper_uses_in_another_file_are_decided(tmp_path):
    """Wrappers of CUDA queries defined in ``pkg/util.py``, used in ``pkg/train.py``: every use
    has explain's decision, generate's; a use goes with its wrapper when the series makes the
    wrapper neutral, and stays with one it leaves (``cuda_sm``: CUDA's SM version)."""
    from patches.generate import pipeline, recount
    from patches.generate.explain import at_line, decisions

    for p in TREE_USES.rglob("*.py"):
        (tmp_path / p.relative_to(TREE_USES)).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p.relative_to(TREE_USES)).write_text(p.read_text())
    _check_tree(tmp_path)
    d = decisions(tmp_path / "pkg/train.py", tmp_path, run=_scanned(tmp_path, True))
    used = at_line(d, 9)
    assert "left: a use of a project wrapper" in used and "`pkg.util.get_device`" in used
    assert "but the series makes its wrapper neutral" in used
    kept = at_line(d, 18)
    assert "`pkg.util.cuda_sm`" in kept and "neutral:" not in kept
    run = pipeline.plan(_scanned(tmp_path, True))
    before, fixed, left, _ = recount.summary_counts(run)
    assert (fixed["HN103"], fixed["HN102"], left["HN109"]) == (3, 2, 2), (fixed, left)


def test_a_keeps_cuda_rewrite_counts_fixed(tmp_path):
    """HN116's rewrite keeps CUDA's call under CUDA's check on purpose: the rescan still finds
    the call, on a line the series wrote. generate's summary counts the finding fixed (as
    ``--explain`` says REWRITTEN), the kept call and its guard apart (``written``)."""
    from patches.generate import pipeline, recount

    (tmp_path / "train.py").write_text(
        "import torch\n\ntorch.cuda.set_per_process_memory_fraction(0.5)\nprint('ok')\n"
    )
    run = pipeline.plan(_scanned(tmp_path, True))
    assert "torch.cuda.is_available()" in run.plan.finals["train.py"]
    before, fixed, left, written = recount.summary_counts(run)
    assert (before["HN116"], fixed["HN116"], left["HN116"]) == (1, 1, 0)
    assert written["HN116"] == 1 and sum(left.values()) == 0, (left, written)
    _check_tree(tmp_path)


def test_a_switch_branch_is_settled_in_one_run():
    """gpytorch's shape (a test body run through a CUDA-only wrapper with ``cuda=True``): the
    first run left the switch for the ``.cuda()`` it selects and rewrote that call, so the second
    run converted the switch. The switch's branch is CUDA's while the switch stays: one run
    settles it, in a test module too (where ``.cuda()`` has a module ``DEVICE_TYPE``)."""
    src = (FIXTURES / "intent" / "test" / "test_switches.py").read_text()
    _settled(src, "test/test_switches.py")


def _settled(src: str, path: str) -> str:
    """The first run's output, checked to be what a second run leaves as it is."""
    first, _ = fix(src, path)
    assert not first.error, first.error
    second, _ = fix(first.after, path)
    assert second.after == first.after, "a second run changed the code again"
    assert second.outcome.applied == []
    return first.after


def test_a_converted_switch_call_is_settled_in_one_run():
    """The device-flag family turns ``_load(x, cuda=True)`` into ``_load(x, device_type="cuda")``;
    a second run rewrote that "cuda" to ``torch.device(device).type`` where a ``device`` was in
    scope, though ``_load`` tests it against "cuda" (``cuda-flow``)."""
    src = (
        "import torch\n\n\ndef _load(x, cuda=False):\n    if cuda:\n        return x + 1\n"
        "    return x\n\n\ndef caller(x, device):\n    y = torch.zeros(1, device=device)\n"
        "    return _load(x, cuda=True) + y\n"
    )
    assert 'device_type="cuda"' in _settled(src, "pkg/_impl.py")


def test_a_converted_switch_call_from_another_file_is_settled(tmp_path):
    """The same across files: ``_load`` in ``pkg/_impl.py``, its caller imports it by name."""
    import subprocess
    import sys

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "_impl.py").write_text(
        "def _load(x, cuda=False):\n    if cuda:\n        return x + 1\n    return x\n"
    )
    (pkg / "_use.py").write_text(
        "import torch\n\nfrom pkg._impl import _load\n\n\ndef caller(x, device):\n"
        "    y = torch.zeros(1, device=device)\n    return _load(x, cuda=True) + y\n"
    )

    def diff() -> str:
        cmd = [sys.executable, "-m", "patches.generate", str(tmp_path), "--diff", "--unsafe-fixes"]
        out = subprocess.run(cmd, capture_output=True, text=True)
        assert out.returncode in (0, 1), out.stderr  # 1: there is a diff
        return out.stdout

    first = diff()
    assert 'device_type="cuda"' in first
    subprocess.run(["git", "apply", "-"], input=first, text=True, cwd=tmp_path, check=True)
    assert diff() == ""


def test_a_converted_switch_attribute_is_settled_in_one_run():
    """The device-flag family stores ``self.cuda = gpus > 0`` as ``self.device_type = "cuda" if
    gpus > 0 else "cpu"`` and reads ``if self.device_type == "cuda":``; a second run ported both
    (``current_accelerator().type if ...``, ``!= "cpu"``): they are the converted switch's own
    form, kept as a ``str`` device-type parameter's are."""
    src = (
        "import torch\n\n\nclass _Runner:\n    def __init__(self, gpus):\n"
        "        self.cuda = gpus > 0\n\n    def run(self, x):\n        if self.cuda:\n"
        "            return x + 1\n        return x\n"
    )
    assert 'self.device_type = "cuda" if gpus > 0 else "cpu"' in _settled(src, "pkg/_runner.py")
