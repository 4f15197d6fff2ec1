"""What one validation is asked to do (``patches.validate.run.validate``'s input) and its error."""

from __future__ import annotations

from dataclasses import dataclass, field


class ValidateError(RuntimeError):
    """Bad input or a series that does not apply: exit 2 with this message."""


@dataclass
class ValidateOptions:
    """One validation: the series ``series`` onto ``tree`` (a checkout, or ``installed`` torch),
    before and after, on each of ``devices``.

    ``tests`` may carry a pytest selector after the file (``test_utils.py::TestCheckpoint``);
    ``xdist`` > 1 runs each (device, phase) on that many pytest-xdist processes; ``coverage``
    records per-hunk device coverage of the after runs; ``shard`` = (i, n) runs the i-th of n
    deterministic shares of the selected test files; ``jobs`` (0: one per core, counting a run's
    xdist processes) is how many (device, phase) runs go at once (patches.common.runpool);
    ``work`` is the working folder: one given here is kept; the default, a new temporary folder,
    is removed at the end unless ``keep``; ``mutants`` (per hunk, 0: off) and ``oracle``: the
    checks that turn coverage into a verdict (patches.validate.checks); ``absent``: devices
    already found absent on this machine ({device: the reason}, e.g. by an earlier validation
    of the same ``patches.prove`` run), shown absent without being probed again."""

    tree: str
    series: str
    devices: list[str]
    tests: list[str] = field(default_factory=list)
    rev: str = "HEAD"
    test_root: str | None = None
    plugins: dict[str, str] = field(default_factory=dict)
    work: str | None = None
    keep: bool = False
    timeout: float = 1800
    pytest_args: list[str] = field(default_factory=list)
    xdist: int = 0
    coverage: bool = True
    shard: tuple[int, int] | None = None
    jobs: int = 0
    mutants: int = 3  # per hunk for the mutation check (0: off; nothing is then proven)
    oracle: bool = True  # record and compare the changed functions' cpu behaviour
    absent: dict[str, str] = field(default_factory=dict)
