"""Project-local wrappers of CUDA predicates and queries are followed across modules (two hops,
a package re-export, a returned local assigned from the query, in a ``with`` or ``try`` too),
through the one import resolver; their uses are findings of the wrapped rule that say "via
`pkg.mod.fn`", and a wrapper in a skip decorator or an ``if`` gates as a direct predicate does.
Local look-alikes (a shadowing local function, a multi-vendor predicate) are not."""

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
        ("app/probe_use.py", 13, "HN101", "pkg.probe.cuda_ready"),  # assigned, then returned
        ("app/probe_use.py", 13, "HN710", "pkg.probe.cuda_ready"),
        ("app/probe_use.py", 15, "HN102", "pkg.probe.gpu_count_locked"),  # assigned in a `with`
        ("app/probe_use.py", 16, "HN101", "pkg.probe.maybe_ready"),  # `ok = False` first
        ("app/probe_use.py", 16, "HN101", "pkg.probe.ready_twice"),  # a wrapper's result
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
        ("pkg/probe.py", 29, "HN101", "pkg.probe.cuda_ready"),
    ]  # not followed: any_accelerator (xpu too), passthrough (a parameter), counted (a loop)


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


def test_a_name_is_in_the_words_exactly_when_it_is_in_the_bytes():
    from audits.python.words import words

    data = "x9has_gpu = 3\nfrom .ütils import n_gpus, HAS_GPU  # cuda\n\tdef _f(a):return a.b\n"
    w = words(data.encode())
    for name in ("has_gpu", "x9has_gpu", "9has", "n_gpus", "HAS_GPU", "b", "_f", "cuda", "tils"):
        assert (name.encode() in w) is (name.encode() in data.encode()), name
    for absent in ("has_gpu =", "n_gpus,", "gpus, HAS", "a.b", "return a"):
        assert absent.encode() not in w, absent


def test_the_wrapper_pass_reads_no_file_the_scan_read(tmp_path, monkeypatch):
    """Cold: the workers' words serve the pass. After an edit: the edited file's words are
    fresh, the others come from the words store; without the store they are read again."""
    import shutil

    import audits.wrapper_pass as wp

    tree = tmp_path / "tree"
    shutil.copytree(PROJECT, tree)
    reread: list[int] = []
    real = wp.words
    monkeypatch.setattr(wp, "words", lambda data: (reread.append(1), real(data))[1])
    cache = tmp_path / "cache"

    def scan():
        opts = Options(root=str(tree), cache_dir=str(cache), languages=["python"], jobs=1)
        return _via(run_scan(opts))

    first = scan()
    assert first and reread == []
    train = tree / "app" / "train.py"
    train.write_text(train.read_text() + "\n")
    assert scan() == first and reread == []
    for store in cache.glob("*.words"):
        store.unlink()
    train.write_text(train.read_text() + "\n")
    assert scan() == first
    assert len(reread) == sum(1 for _ in tree.rglob("*.py")) - 1  # all but the edited one
