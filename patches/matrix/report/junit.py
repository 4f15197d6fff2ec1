"""The matrix as JUnit XML (``matrix.junit.xml``): one testsuite per device, one testcase per
(op, dtype) and per upstream test."""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

TAGS = {
    "fail": "failure",
    "error": "error",
    "skip": "skipped",
    "xfail": "skipped",
    "refused": "skipped",
    "absent": "skipped",
}


def _suite(data: dict, dev: str) -> list[str]:
    cases = [c for c in data["cells"] if c["device"] == dev]
    tests = [o for o in data["tests"] if o["device"] == dev]
    n_fail = sum(c["status"] == "fail" for c in cases + tests)
    n_err = sum(c["status"] == "error" for c in cases + tests)
    n_skip = sum(c["status"] in ("skip", "xfail", "refused", "absent") for c in cases + tests)
    out = [
        f'<testsuite name={quoteattr("matrix." + dev)} tests="{len(cases) + len(tests)}"'
        f' failures="{n_fail}" errors="{n_err}" skipped="{n_skip}">'
    ]
    items = [
        (f"opinfo.{dev}.{c['dtype']}", c["op"], c["status"], c["duration"], c["message"])
        for c in cases
    ]
    items += [(f"tests.{dev}", o["test"], o["status"], o["duration"], o["message"]) for o in tests]
    for cls, name, status, dur, msg in items:
        out.append(
            f'  <testcase classname={quoteattr(cls)} name={quoteattr(name)} time="{dur:.4f}">'
        )
        tag = TAGS.get(status)
        if tag:
            out.append(f"    <{tag} message={quoteattr(f'{status}: {msg}')}/>")
        out.append("  </testcase>")
    out.append("</testsuite>")
    return out


def to_junit(data: dict) -> str:
    out = ['<?xml version="1.0" encoding="utf-8"?>', "<testsuites>"]
    for dev in data["devices"]:
        out += _suite(data, dev)
    out.append("</testsuites>")
    return "\n".join(out) + "\n"
