"""Upstream device-generic test files on cpu and on a device, compared test by test.

    python -m patches.matrix.upstream FILE [FILE ...] [--device trn] [-k EXPR] [--json OUT]
    make upstream-compare FILES="../shared/upstream/pytorch-tests/test_dlpack.py"

Each file runs through pytest once per device (``patches.common.runner.run_tests``: a fresh
``device_boot`` subprocess with ``PYTORCH_TESTING_DEVICE_ONLY_FOR``, outcomes from JUnit XML).
``instantiate_device_type_tests`` names a test after its device (``TestFooCPU::test_x_cpu_float32``
and ``TestFooPRIVATEUSE1::test_x_trn_float32``), so names are normalised to ``<dev>`` before the
two runs are joined. The score of a file is: of the tests that pass on cpu, how many pass on the
device. Not counted: variants in a dtype the device declines by design (float64/complex128 on trn:
absent, see kernels/trainium/harness.py), tests whose body asks for such a dtype and get the
device's policy refusal (``TypeError: aten::empty: float64 is not supported on trn ...``: the same
design decision, reported in a column of its own and listed), and tests with no device variant at
all (``@onlyCPU``).
Exit code 0 when every file reaches ``--min-file`` and the total reaches ``--min-total``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from patches.common.runner import PytestRun, run_tests

# dtypes a device declines by design: their variants do not exist there, so they are not misses
DECLINED = {"trn": ("float64", "complex128", "double", "cdouble")}


def normalise(test: str, device: str) -> str:
    """``file.TestFooCPU::test_x_cpu_float32`` -> ``file.TestFoo<dev>::test_x_<dev>_float32``."""
    cls, _, name = test.rpartition("::")
    for suffix in ("PRIVATEUSE1", device.upper()):
        if cls.endswith(suffix):
            cls = cls[: -len(suffix)] + "<dev>"
            break
    name = re.sub(rf"_{re.escape(device)}(?=_|$)", "_<dev>", name)
    return f"{cls}::{name}"


def declined(test: str, device: str) -> bool:
    return any(re.search(rf"(^|_){d}(_|$)", test) for d in DECLINED.get(device, ()))


def refused(message: str, device: str) -> bool:
    """A failure that is the device's dtype policy refusing a declined dtype the test asked for
    (kernels/trainium: ``<op>: float64 is not supported on trn (...)``)."""
    return any(
        re.search(rf"\b{d} is not supported on {re.escape(device)}\b", message)
        for d in DECLINED.get(device, ())
    )


@dataclass
class FileScore:
    file: str
    cpu_pass: int = 0  # passing on cpu and counted (not declined, has a device variant)
    both_pass: int = 0
    declined: int = 0
    cpu_only: int = 0  # passing on cpu, no device variant (@onlyCPU and the like)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (test, message): dtype policy
    misses: list[tuple[str, str, str]] = field(default_factory=list)  # (test, status, message)

    @property
    def rate(self) -> float:
        return self.both_pass / self.cpu_pass if self.cpu_pass else 1.0


def cpu_only_skip(status: str, message: str) -> bool:
    """The device variant of an ``@onlyCPU`` test: it exists but skips itself with
    common_device_type's ``Only runs on cpu`` (``onlyOn("cpu")``), so, like a test with no device
    variant at all, it is not the device's to pass."""
    return status == "skip" and bool(re.search(r"\bOnly runs on \[?'?cpu'?\]?$", message.strip()))


def score(file: str, cpu: list, dev: list, device: str) -> FileScore:
    s = FileScore(file)
    on_dev = {normalise(o.test, device): o for o in dev}
    for o in cpu:
        if o.status != "pass":
            continue
        key = normalise(o.test, "cpu")
        if declined(key, device):
            s.declined += 1
            continue
        d = on_dev.get(key)
        if d is None or cpu_only_skip(d.status, d.message):
            s.cpu_only += 1
            continue
        if d.status != "pass" and refused(d.message, device):
            s.refused.append((key, d.message))
            continue
        s.cpu_pass += 1
        if d.status == "pass":
            s.both_pass += 1
        else:
            s.misses.append((key, d.status, d.message))
    return s


def alone(file: str, outcomes: list, device: str) -> dict:
    """A file whose device tests have no cpu variant (``instantiate_device_type_tests(...,
    except_for="cpu")``, as test_binary_ufuncs' device class): nothing to join, so the device's
    own outcomes, with the dtype-policy refusals counted apart from the other failures."""
    counts: dict[str, int] = {}
    refusals, failures = 0, []
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
        if o.status in ("fail", "error"):
            if refused(o.message, device):
                refusals += 1
            else:
                failures.append((normalise(o.test, device), o.message))
    return {"file": file, "counts": counts, "refused": refusals, "failures": failures}


def run_file(path: Path, dev: str, work: Path, k: str | None = None, timeout: float = 3600) -> list:
    args = ["-k", k] if k else []
    return run_tests(
        path.parent,
        [path.name],
        dev,
        "after",
        PytestRun(
            work / path.stem,
            pythonpath=[Path.cwd()],
            timeout=timeout,
            pytest_args=["-p", "no:randomly", *args],
        ),
    ).outcomes


def compare_file(
    path: Path, device: str, work: Path, k: str | None = None, timeout: float = 3600
) -> FileScore:
    runs = {dev: run_file(path, dev, work, k, timeout) for dev in ("cpu", device)}
    return score(path.name, runs["cpu"], runs[device], device)


def report(scores: list[FileScore], device: str, out=sys.stdout) -> None:
    print(
        f"{'file':28} {'cpu pass':>9} {device + ' pass':>9} {'rate':>7} "
        f"{'declined':>9} {'refused':>8} {'cpu-only':>9}",
        file=out,
    )
    for s in scores:
        print(
            f"{s.file:28} {s.cpu_pass:9d} {s.both_pass:9d} {s.rate:7.2%} "
            f"{s.declined:9d} {len(s.refused):8d} {s.cpu_only:9d}",
            file=out,
        )
    total_cpu = sum(s.cpu_pass for s in scores)
    total_both = sum(s.both_pass for s in scores)
    rate = total_both / total_cpu if total_cpu else 1.0
    print(f"{'total':28} {total_cpu:9d} {total_both:9d} {rate:7.2%}", file=out)
    for s in scores:
        for test, msg in s.refused:
            print(f"  refused {s.file} {test}: {msg[:160]}", file=out)
        for test, status, msg in s.misses:
            print(f"  miss {s.file} {test}: {status}: {msg[:160]}", file=out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m patches.matrix.upstream", description=__doc__, allow_abbrev=False
    )
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--device", default="trn")
    ap.add_argument("-k", help="pytest -k expression (a bounded subset)")
    ap.add_argument("--json", type=Path, help="write the scores here")
    ap.add_argument("--min-file", type=float, default=0.97)
    ap.add_argument("--min-total", type=float, default=0.995)
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per pytest run")
    ap.add_argument(
        "--alone",
        action="store_true",
        help="run on the device only and report its outcomes (files whose device class has no "
        "cpu variant)",
    )
    a = ap.parse_args(argv)
    missing = [str(f) for f in a.files if not f.is_file()]
    if missing:
        print(f"error: no such file {missing}", file=sys.stderr)
        return 2
    if a.alone:
        with tempfile.TemporaryDirectory(prefix="hn-upstream-") as tmp:
            reports = [
                alone(f.name, run_file(f.resolve(), a.device, Path(tmp), a.k, a.timeout), a.device)
                for f in a.files
            ]
        for r in reports:
            print(f"{r['file']}: {r['counts']}; refused {r['refused']}")
            for test, msg in r["failures"]:
                print(f"  fail {test}: {msg[:160]}")
        if a.json:
            a.json.write_text(json.dumps(reports, indent=1))
        return 0
    with tempfile.TemporaryDirectory(prefix="hn-upstream-") as tmp:
        scores = [compare_file(f.resolve(), a.device, Path(tmp), a.k, a.timeout) for f in a.files]
    report(scores, a.device)
    if a.json:
        a.json.write_text(
            json.dumps(
                [
                    {
                        "file": s.file,
                        "cpu_pass": s.cpu_pass,
                        "both_pass": s.both_pass,
                        "declined": s.declined,
                        "cpu_only": s.cpu_only,
                        "refused": s.refused,
                        "misses": s.misses,
                    }
                    for s in scores
                ],
                indent=1,
            )
        )
    total_cpu = sum(s.cpu_pass for s in scores)
    total = sum(s.both_pass for s in scores) / total_cpu if total_cpu else 1.0
    ok = total >= a.min_total and all(s.rate >= a.min_file for s in scores)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
