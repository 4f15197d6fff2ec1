"""``cuda-expectation``: the branch the site selects states an error the device must raise (an
OpInfo ``ErrorInput``, ``assertRaisesRegex``, ``pytest.raises``: ``[checks] expected_errors``).
The expected type and message are what CUDA's kernels raise: ``if torch.device(device).type ==
"cuda": yield ErrorInput(..., error_regex="to be on same device")`` widened to every
accelerator makes the test expect CUDA's message from a device that words its own (measured:
``masked_fill``'s error inputs fail on trn after that rewrite). Upstream keeps these checks and
names further devices beside CUDA when their errors match.

The same holds for test inputs withheld from CUDA (``if not (dtype == torch.bool and
device.type == "cuda"): yield SampleInput(...)`` with no else): a gap of CUDA's, which a neutral
check would make every accelerator's (measured: ``sort`` loses 24 of 34 bool samples on trn)."""

from __future__ import annotations

import ast

from patches.generate.intent.data import expected_error_calls, test_input_calls
from patches.generate.intent.nodes import last_name
from patches.generate.intent.probe import Evidence, Probe

KIND = "cuda-expectation"
SUMMARY = (
    "the code it selects states CUDA's own behaviour (an error CUDA raises, inputs CUDA is spared)"
)


def _yields_inputs(stmts: list[ast.AST]) -> ast.AST | None:
    """A ``yield`` of a test input (``yield SampleInput(...)``: ``[checks] test_inputs``); a bare
    ``yield`` (a context manager's) is none."""
    wanted = test_input_calls()
    for stmt in stmts:
        for n in ast.walk(stmt):
            if (
                isinstance(n, ast.Yield)
                and isinstance(n.value, ast.Call)
                and last_name(n.value.func) in wanted
            ):
                return n
    return None


def detect(p: Probe) -> list[Evidence]:
    wanted = expected_error_calls()
    selected, other = p.arms
    for stmt in selected:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and last_name(node.func) in wanted:
                what = f"{last_name(node.func)}(...) (line {node.lineno})"
                return [Evidence(KIND, p.f.line, f"the branch expects an error: {what}")]
    withheld = _yields_inputs(other) if not selected else None
    if withheld is not None:
        what = f"test inputs withheld from CUDA (yield, line {withheld.lineno})"
        return [Evidence(KIND, p.f.line, what)]
    return []
