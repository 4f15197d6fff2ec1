"""Verdicts from coverage, mutation and the CPU oracle (patches.validate.checks), on report
entries as patches.validate writes them: proven only where checked and CPU behaviour is kept."""

from __future__ import annotations

from patches.validate import checks


def _entry(cpu_tests, trn_tests, cpu_mutants, trn_mutants=(), differences=()):
    def dev(tests, mutants):
        return {
            "state": "measured",
            "tests": list(tests),
            "passing_tests": list(tests),
            "statements_run": [212] if tests else [],
        }

    def mut(tests, mutants):
        killed = any(m["killed"] for m in mutants)
        verdict = "checked" if killed else "unchecked" if tests else "unexercised"
        return {"tests": list(tests), "nodes": [], "mutants": list(mutants), "verdict": verdict}

    return {
        "key": "0001-x.patch#1",
        "patch": "0001-x.patch",
        "hunk": 1,
        "path": "torch/utils/dlpack.py",
        "header": "@@ -209,7 +209,7 @@",
        "statements": [212],
        "devices": {
            "cpu": dev(cpu_tests, cpu_mutants),
            "trn": dev(trn_tests, trn_mutants),
            "cuda": {"state": "absent: torch.cuda.is_available() is False"},
        },
        "mutation": {"cpu": mut(cpu_tests, cpu_mutants), "trn": mut(trn_tests, trn_mutants)},
        "oracle": {
            "functions": ["torch/utils/dlpack.py::from_dlpack"],
            "calls": 3,
            "differences": list(differences),
        },
    }


KILLED = {
    "operator": "none-value",
    "line": 212,
    "description": "`x` -> `None`",
    "killed": True,
    "killed_by": "test_dlpack.T::test_a_cpu",
    "why": "fail: AttributeError",
    "node": "test_dlpack.py::T::test_a_cpu",
}
SURVIVED = {"operator": "revert", "line": 212, "description": "`a` -> `b`", "killed": False}
DIFF = {
    "test": "test_dlpack.T::test_a_cpu",
    "function": "torch/utils/dlpack.py::from_dlpack",
    "call": 1,
    "args": "arg 0=Tensor(float32, [5], cpu)",
    "what": ["result: shares storage with arg 0 -> its own storage"],
}


def test_checked_is_proven_unchecked_and_unexercised_are_not():
    e = _entry(["test_dlpack.T::test_a_cpu"], [], [SURVIVED, KILLED])
    s = checks.finalize([e], ["cpu", "trn", "cuda"], mutated=True)
    assert e["verdicts"] == {"cpu": "checked", "trn": "unexercised", "cuda": "absent"}
    assert e["proven_on"] == ["cpu"]
    assert s["hunks_proven"] == {"cpu": 1, "trn": 0, "cuda": 0}
    assert s["verdicts"]["cpu"]["checked"] == 1 and s["verdicts"]["trn"]["unexercised"] == 1
    assert checks.verdict_cell(e, "cpu") == (
        "checked: 1 tests (1 passing); `none-value` killed by `test_dlpack.T::test_a_cpu`"
    )
    assert checks.verdict_cell(e, "trn") == "**unexercised**"

    e = _entry(["t.T::a"], ["t.T::a"], [SURVIVED], [SURVIVED])
    checks.finalize([e], ["cpu", "trn"], mutated=True)
    assert e["verdicts"]["cpu"] == "unchecked" and e["proven_on"] == []
    assert (
        checks.verdict_cell(e, "cpu") == "**unchecked**: 1 tests (1 passing); 1 mutant(s) survived"
    )


def test_a_cpu_behaviour_change_is_never_proven():
    e = _entry(["test_dlpack.T::test_a_cpu"], ["t.T::b"], [KILLED], [KILLED], [DIFF])
    s = checks.finalize([e], ["cpu", "trn"], mutated=True)
    assert e["verdicts"]["cpu"] == e["verdicts"]["trn"] == "checked"
    assert e["proven_on"] == [] and s["behaviour_changed"] == 1
    report = {
        "devices": {"cpu": {}, "trn": {}},
        "hunks": [e],
        "summary": s,
        "checks": {"mutation": {"bound_text": "at most 3 mutants per hunk"}},
    }
    md = "\n".join(checks.render_markdown(report, lambda dev, node: f"run {dev} {node}"))
    assert "**1 difference(s)**" in md
    assert "**CPU behaviour changed**" in md
    assert "`test_dlpack.T::test_a_cpu`, from_dlpack call 1" in md
    assert "result: shares storage with arg 0 -> its own storage" in md
    assert "run cpu test_dlpack.py::T::test_a_cpu" in md  # how to rerun the verdict
    assert "at most 3 mutants per hunk" in md


def test_without_mutation_nothing_is_proven():
    e = _entry(["t.T::a"], [], [])
    e.pop("mutation")
    checks.finalize([e], ["cpu", "trn"], mutated=False)
    assert e["verdicts"] == {"cpu": "not checked", "trn": "unexercised", "cuda": "absent"}
    assert e["proven_on"] == []


def test_shards_merge_to_the_best_verdict_and_all_differences():
    from patches.validate import hunks as hunkcov

    a = _entry(["t.T::a"], [], [SURVIVED])
    b = _entry([], ["t.T::b"], [], [KILLED], [DIFF])
    for e in (a, b):
        checks.finalize([e], ["cpu", "trn"], mutated=True)
    assert a["verdicts"]["cpu"] == "unchecked" and b["verdicts"]["trn"] == "checked"
    merged = hunkcov.merge_entries([[a], [b]])
    checks.merge([[a], [b]], merged)
    (m,) = merged
    assert m["verdicts"] == {"cpu": "unchecked", "trn": "checked", "cuda": "absent"}
    assert m["oracle"]["differences"] == [DIFF] and m["oracle"]["calls"] == 6
    assert m["proven_on"] == []  # checked on trn, but CPU behaviour changed


def test_summary_has_one_table_of_verdicts_per_device():
    from patches.prove.report.summary import summary_markdown

    rows = [
        {"subsystem": "a", "status": "no change needed", "seconds": 1.0, "findings": 3},
        {
            "subsystem": "b",
            "patches": 1,
            "hunks": 2,
            "hunks_proven": {"cpu": 1, "trn": 0},
            "verdicts": {
                "cpu": {"checked": 1, "unchecked": 1, "unexercised": 0},
                "trn": {"checked": 0, "unchecked": 0, "unexercised": 2},
            },
            "behaviour_changed": 0,
            "tests": 5,
            "gains": 0,
            "regressions": 0,
            "seconds": 3.0,
            "status": "ok",
            "devices": {"cpu": "cpu", "trn": "trn", "cuda": "absent: no GPU"},
            "bound": "at most 3 mutants per hunk",
        },
    ]
    md = summary_markdown(rows, ["cpu", "trn", "cuda"], 10, 0)
    table = [ln for ln in md.splitlines() if ln.startswith("|")]
    assert len(table) == 4 and len({ln.count("|") for ln in table}) == 1
    assert "| cpu: checked / unchecked / unexercised | trn: checked" in table[0]
    assert "| b | 1 | 2 | 1 / 1 / 0 | 0 / 0 / 2 | absent | 1 / 0 / 0 | 0 |" in table[3]
    assert "Mutation check bound: at most 3 mutants per hunk." in md
