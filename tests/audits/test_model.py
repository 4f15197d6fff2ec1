from audits.model import FileError, Finding, Report


def _finding(line=3, source="torch.cuda.synchronize()"):
    return Finding(
        rule="HN101",
        name="cuda-synchronize",
        category="runtime",
        kind="call",
        path="a/b.py",
        line=line,
        col=1,
        end_line=line,
        end_col=24,
        source=source,
        subsystem="a",
        message="m",
        replacement="torch.accelerator.synchronize",
        safety="safe",
    )


def test_report_round_trips_through_json_dict():
    r = Report(
        root="/x",
        findings=[_finding()],
        errors=[FileError("c.py", "syntax", "bad")],
        files_scanned=2,
        files_with_findings=1,
    )
    d = r.to_dict()
    assert d["summary"]["by_rule"] == {"HN101": 1}
    assert Report.from_dict(d).to_dict() == d


def test_fingerprint_ignores_line_moves_and_whitespace():
    assert (
        _finding(3).fingerprint()
        == _finding(40, "torch.cuda.synchronize( )".replace("( )", "()")).fingerprint()
    )
    assert _finding(3).fingerprint() != _finding(3, "torch.cuda.synchronize(0)").fingerprint()
