"""The JUnit XML view of a validation report (CI test reporters): one testsuite per device."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from patches.validate import hunks as hunkcov


def render_junit(report: dict) -> str:
    """One testsuite per device; one testcase per (test, device) comparison: a regression is a
    failure, a test that does not pass after the series is skipped with its before/after, and
    each hunk with no passing test on the device is a failure-free property of the suite."""
    root = ET.Element("testsuites", name="patches.validate")
    for dev, info in report["devices"].items():
        mine = [c for c in report["comparisons"] if c["device"] == dev]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"validate.{dev}",
            tests=str(len(mine)),
            failures=str(sum(1 for c in mine if c["change"] == "regression")),
            skipped=str(
                sum(1 for c in mine if c["after"] != "pass" and c["change"] != "regression")
            ),
        )
        props = ET.SubElement(suite, "properties")
        ET.SubElement(
            props,
            "property",
            name="device",
            value=info["detail"] if info["available"] else f"absent: {info['detail']}",
        )
        for h in report.get("hunks") or []:
            ET.SubElement(
                props,
                "property",
                name=f"hunk {h['patch']}#{h['hunk']} {h['path']}",
                value=hunkcov.cell(h, dev).replace("**", ""),
            )
        for c in mine:
            cls, _, name = c["test"].rpartition("::")
            case = ET.SubElement(suite, "testcase", classname=cls, name=name)
            what = f"{c['before']} -> {c['after']}"
            if c["change"] == "regression":
                ET.SubElement(case, "failure", message=f"regression {what}: {c['message']}"[:500])
            elif c["after"] != "pass":
                ET.SubElement(case, "skipped", message=f"{c['change']} ({what})")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"
