"""Project-local wrappers of CUDA predicates and queries are followed across modules (two hops
and a package re-export), through the one import resolver; their uses are findings of the wrapped
rule that say "via `pkg.mod.fn`", and a wrapper in a skip decorator or an ``if`` gates as a direct
predicate does. Local look-alikes (a shadowing local function, a multi-vendor predicate) are not."""

from pathlib import Path

from audits.engine import Options, run_scan

PROJECT = Path(__file__).parent / "fixtures" / "wrappers_project"


def _scan(tmp_path, **kw):
    return run_scan(Options(root=str(PROJECT), cache_dir=str(tmp_path), languages=["python"], **kw))


def _via(report):
    return sorted(
        (f.path, f.line, f.rule, f.message.split("via `")[1].split("`")[0])
        for f in report.findings
        if "via `" in f.message
    )


def test_uses_of_wrappers_are_findings_of_the_wrapped_rule(tmp_path):
    got = _via(_scan(tmp_path))
    assert got == [
        ("app/train.py", 9, "HN101", "pkg.mid.use_gpu"),  # two hops: use_gpu -> utils.is_cuda...
        ("app/train.py", 9, "HN710", "pkg.mid.use_gpu"),  # ... -> torch.cuda.is_available
        ("app/train.py", 11, "HN101", "pkg.is_cuda_available"),  # re-exported by pkg/__init__
        ("app/train.py", 11, "HN710", "pkg.is_cuda_available"),
        ("app/train.py", 13, "HN102", "pkg.mid.many"),
        ("app/train.py", 13, "HN102", "pkg.utils.HAS_GPU"),  # a flag set from device_count()
        ("app/train.py", 17, "HN101", "pkg.mid.use_gpu"),
        ("app/train.py", 17, "HN713", "pkg.mid.use_gpu"),  # skipUnless(wrapper()): a gate
        ("pkg/mid.py", 6, "HN101", "pkg.utils.is_cuda_available"),
        ("pkg/mid.py", 10, "HN102", "pkg.utils.n_gpus"),
    ]


def test_wrapper_findings_are_manual_and_cached(tmp_path):
    first = _scan(tmp_path)
    wrapped = [f for f in first.findings if "via `" in f.message]
    assert wrapped and all(f.safety == "manual" and f.replacement is None for f in wrapped)
    again = _scan(tmp_path)  # warm: the tree pass is served from the cache
    assert again.findings == first.findings


def test_selection_applies_to_wrapper_findings(tmp_path):
    rep = _scan(tmp_path, select=["HN102"])
    assert {f.rule for f in rep.findings} == {"HN102"}
    assert ("app/train.py", 13, "HN102", "pkg.utils.HAS_GPU") in _via(rep)
