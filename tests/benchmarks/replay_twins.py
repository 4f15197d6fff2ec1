"""Kept-site rewrites with a twin upstream neutralised (``replay.py`` prints them).

A rule that holds a kept site back holds back every site it cannot tell from it. For each kept
site a mode rewrote, this looks for its twins among the ``neutralized`` labels: those of this
pair that the same mode rewrote too (a rule that held the kept site back by what its statement
says would lose that rewrite from recall), and, with ``--later``, those of the later
pairs (upstream made one like it in a later release). Two statements are twins:

- ``statement``: the same tokens once layout, comments, string quotes and plain names (locals,
  parameters: any name that is not an attribute and not ``torch``) are set aside, so
  ``torch.cuda.set_device(rank)`` and ``torch.cuda.set_device(device)`` are twins, and
  ``torch.cuda.set_device(self.rank)`` is not;
- ``api``: otherwise, the same CUDA spots (``replay_label.CUDA_TOKENS``, with each
  ``torch.cuda`` read to its full dotted name; local names holding ``cuda`` left out).

A kept site with no twin is where a rule about the statement could still separate what upstream
kept from what it neutralised; one with a twin needs the code around it (the unit) or nothing
can. A reader's aid beside the list of kept-site rewrites; the target counts every kept rewrite.
"""

from __future__ import annotations

import builtins
import io
import keyword
import re
import sys
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from replay_label import _CUDA, CUDA_TOKENS  # noqa: E402

_DOTTED = re.compile(r"\btorch\.cuda(?:\.\w+)+")
_LOCAL_NAME = re.compile(CUDA_TOKENS["cuda name"])
# names that say what the statement does, not what its author called things
_KEEP = {"torch", "self", "cls", *dir(builtins), *keyword.kwlist, *keyword.softkwlist}


def statement_key(text: str) -> str:
    """The statement's tokens, plain names as ``_`` (see the module docstring)."""
    out: list[str] = []
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return " ".join(text.split())
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    for tok in toks:
        if tok.type in skip or tok.type == tokenize.ENDMARKER:
            continue
        s = tok.string
        if tok.type == tokenize.STRING:
            s = s.replace("'", '"')
        elif tok.type == tokenize.NAME and s not in _KEEP and not (out and out[-1] == "."):
            s = "_"
        out.append(s)
    return " ".join(out)


def api_key(text: str) -> tuple[str, ...]:
    """The statement's CUDA spots, sorted: ``torch.cuda.*`` by full dotted name, quotes as
    ``"``, local names holding ``cuda`` left out."""
    spots: Counter = Counter(m.group(0) for m in _DOTTED.finditer(text))
    rest = _DOTTED.sub(" ", text)
    for m in _CUDA.finditer(rest):
        s = m.group(0)
        if s == "torch.cuda" or _LOCAL_NAME.fullmatch(s) and not s.startswith("is_cuda"):
            continue
        spots[s.replace("'", '"')] += 1
    return tuple(sorted(spots.elements()))


@dataclass
class Twins:
    """One mode's kept-site rewrites and their twins."""

    mode: str
    rewritten: int = 0  # kept sites the mode rewrote
    # site -> (how, twin site, where the twin is from); one row per kept site with a twin
    twins: list[tuple[str, str, str, str]] = field(default_factory=list)
    alone: list[str] = field(default_factory=list)  # kept sites with no twin


def _candidates(data: dict, records, later: list[dict]) -> list[tuple[str, str, str]]:
    """(site, old text, source) of every neutralised statement a twin may be."""
    rel = data["pair"]["new"]
    out = [
        (f"{r.path}:{r.line}", r.old_text, rel)
        for r in records
        if r.status == "neutralized" and r.rewritten
    ]
    for lst in later:
        rel = lst["pair"]["new"]
        for lab in lst["labels"]:
            if lab["status"] == "neutralized":
                out.append((f"{lab['path']}:{lab['old_line']}", lab["old_text"], rel))
    return out


def check(mode: str, data: dict, records, later: list[dict] = ()) -> Twins:
    """``records``: one mode's replay_score.Records for the label list ``data``."""
    res = Twins(mode)
    pool = [
        (site, statement_key(t), api_key(t), src)
        for site, t, src in _candidates(data, records, later)
    ]
    for r in records:
        if r.status != "kept" or not r.rewritten:
            continue
        res.rewritten += 1
        site, skey, akey = f"{r.path}:{r.line}", statement_key(r.old_text), api_key(r.old_text)
        hit = next((("statement", s, src) for s, k, _, src in pool if k == skey), None)
        if hit is None and akey:
            hit = next((("api", s, src) for s, _, a, src in pool if a == akey), None)
        if hit is None:
            res.alone.append(site)
        else:
            res.twins.append((site, *hit))
    return res


def show(res: Twins) -> None:
    how = Counter(t[1] for t in res.twins)
    print(
        f"[{res.mode}] kept-site rewrites with a twin upstream neutralised: {len(res.twins)} of "
        f"{res.rewritten} (same statement {how['statement']}, same CUDA API {how['api']})"
    )
    for site, kind, twin, src in res.twins:
        print(f"  {site}  {kind:9}  {twin} ({src})")
    print(f"[{res.mode}] kept-site rewrites with no twin: {len(res.alone)}")
    for site in res.alone:
        print(f"  {site}")
