"""The C++ detectors of preprocessor branches: each arm of an `#if` chain whose condition names a
CUDA/ROCm macro (HN801/HN802), the arms after it (`preproc-else`), conditions tree-sitter could not
structure, and the CUDA arm holding a whole file.

A mixin of the scan in audits/cpp/cxx.py (it uses the scan's `arms`, `loose`, `root`, `plan`,
`hits`, `add`, `_line` and `_enabled`).
"""

from __future__ import annotations

from tree_sitter import Node

from audits.cpp.hits import Hit
from audits.cpp.nodes import COND_ARMS, _text

BACKSLASH_NEWLINE = "\\\n"  # a directive continued on the next line


def directive(arm: Node) -> str:
    """`#ifdef USE_CUDA` without its trailing comment."""
    cond = arm.child_by_field_name("condition") or arm.child_by_field_name("name")
    head = _text(arm.children[0]).strip()
    if cond is None:
        return head
    return f"{head} {' '.join(_text(cond).replace(BACKSLASH_NEWLINE, ' ').split())}"


class PreprocDetectors:
    # -- preprocessor chains and whole-file guards (from the scan in cxx.py) --------------------------------------------
    def branches(self) -> None:
        br_else = self._enabled("preproc-else")
        heads: dict[int, Node] = {}
        for arm, _ in self.arms.values():
            head = arm
            while (
                head.parent is not None
                and head.parent.type in COND_ARMS
                and head.parent.child_by_field_name("alternative") == head
            ):
                head = head.parent
            heads[head.id] = head
        for head in heads.values():
            chain = [head]
            while (alt := chain[-1].child_by_field_name("alternative")) is not None:
                chain.append(alt)
            matched_at: Node | None = None
            for i, arm in enumerate(chain):
                end = self._arm_end(chain, i, head)
                said = directive(arm)
                hit = self.arms.get(arm.id)
                if hit is not None:
                    matched_at = matched_at or arm
                    self.add(
                        self.plan.rules[hit[1]],
                        "branch",
                        arm,
                        f"`{said}` branch, lines {arm.start_point[0] + 1}-{end[0] + 1}",
                        end=end,
                    )
                elif matched_at is not None and br_else is not None:
                    self.add(
                        br_else,
                        "branch",
                        arm,
                        f"`{said}` arm of `{directive(matched_at)}` "
                        f"(line {matched_at.start_point[0] + 1}), lines {arm.start_point[0] + 1}-{end[0] + 1}",
                        end=end,
                    )
        self._loose_branches()

    def _loose_branches(self) -> None:
        """Conditions tree-sitter could not structure: reported with their extent unknown."""
        seen: set[int] = set()
        for tok, cond, rid in self.loose:
            if tok.id in seen:
                continue
            seen.add(tok.id)
            text = f"{_text(tok)} {' '.join(_text(cond).split())}"
            self.hits.append(
                Hit(
                    rid,
                    "branch",
                    tuple(tok.start_point),
                    tuple(cond.end_point),
                    f"`{text}` branch (extent unknown: tree-sitter could not structure "
                    f"this region)",
                )
            )

    def _arm_end(self, chain: list[Node], i: int, head: Node) -> tuple[int, int]:
        if i + 1 < len(chain):
            row = max(chain[i + 1].start_point[0] - 1, chain[i].start_point[0])
            return row, len(self._line(row))
        return head.end_point

    def whole_file_guard(self) -> Node | None:
        """The CUDA arm that holds every declaration of the file, if there is one."""
        kids = self.root.named_children
        while True:
            sig = [
                k
                for k in kids
                if k.type not in ("comment", "preproc_include", "preproc_call", "preproc_def")
            ]
            if len(sig) != 1 or sig[0].type not in ("preproc_if", "preproc_ifdef"):
                return None
            arm = sig[0]
            if arm.child_by_field_name("alternative") is not None:
                return None
            if arm.id in self.arms:
                negated = arm.children[0].type == "#ifndef" or _text(
                    arm.child_by_field_name("condition") or arm
                ).lstrip().startswith("!")
                return None if negated else arm
            cond = arm.child_by_field_name("condition") or arm.child_by_field_name("name")
            kids = [k for k in arm.named_children if k != cond]
