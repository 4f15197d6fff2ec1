"""Bad input becomes a FileError for that file only; nothing raises, other files still scan."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from audits.cpp_scan import MAX_BYTES, scan_source

from .conftest import CPP_RULES

GOOD = b"#ifdef USE_CUDA\nint x;\n#endif\n"


def _errors(data: bytes, name: str = "a.h"):
    findings, errors = scan_source(data, name, CPP_RULES)
    return findings, [(e.path, e.reason) for e in errors]


def test_non_utf8_is_an_encoding_error():
    findings, errors = _errors(b"// caf\xe9\n" + GOOD)
    assert findings == [] and errors == [("a.h", "encoding")]


def test_nul_bytes_are_binary():
    assert _errors(GOOD + b"\0\0") == ([], [("a.h", "binary")])


def test_huge_file_is_too_large():
    assert _errors(b"//" + b"x" * MAX_BYTES + b"\n" + GOOD) == ([], [("a.h", "too-large")])


def test_unbalanced_cmake_is_a_syntax_error_with_the_line():
    findings, errors = scan_source(b"if(USE_CUDA)\n  set(X 1)\n", "CMakeLists.txt", CPP_RULES)
    assert findings == [] and [(e.reason, e.detail) for e in errors] == [
        ("syntax", "if() at line 1 has no endif()")
    ]
    _, errors = scan_source(b'message("open\n', "x.cmake", CPP_RULES)
    assert [e.reason for e in errors] == ["syntax"]


def test_configure_file_template_placeholders_are_not_syntax_errors():
    data = b"set(FLAGS 1)\n@CUDA_NVCC_FLAGS_CONFIG@\nif(USE_CUDA)\n  set(X 1)\nendif()\n"
    findings, errors = scan_source(data, "run_nvcc.cmake", CPP_RULES)
    assert errors == [] and [f.line for f in findings] == [3]
    _, errors = scan_source(b"@ oops\n", "x.cmake", CPP_RULES)
    assert [e.reason for e in errors] == ["syntax"]


def test_broken_cpp_still_reports_what_it_can():
    """tree-sitter recovers from syntax errors: the well-formed parts are still analysed."""
    data = b"int f( {{{ ;\n#ifdef USE_CUDA\nint g();\n#endif\nbool b = t.is_cuda();\n"
    findings, errors = scan_source(data, "broken.cpp", CPP_RULES)
    assert errors == [] and {f.rule for f in findings} == {"HN801", "HN812"}


def test_a_bad_file_does_not_affect_the_next():
    assert _errors(b"\xff\xfe")[1] == [("a.h", "encoding")]
    findings, errors = scan_source(GOOD, "b.h", CPP_RULES)
    assert errors == [] and sorted(f.rule for f in findings) == ["HN801", "HN840"]


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(data):
    for name in ("x.cu", "CMakeLists.txt"):
        findings, errors = scan_source(b"#if USE_CUDA\n" + data, name, CPP_RULES)
        assert all(e.path == name for e in errors)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="#ifdefUSE_CUDA()kCUDA:=!<>{};\n \\/*\"'R", max_size=300))
def test_token_soup_never_raises(text):
    findings, errors = scan_source(text.encode(), "soup.cpp", CPP_RULES)
    assert errors == []
    for f in findings:
        assert 1 <= f.line <= f.end_line
