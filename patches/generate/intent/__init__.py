"""Intent analysis: is the code around a finding about CUDA itself? The gate every family uses.

A neutral rewrite is right only where the code means "the accelerator", not "CUDA". This package
answers that from the file's ``ast`` alone (no libcst; of ``patches`` only the duck-typed file
context), so the audit's messages could reuse it. Each reason is a named ``Evidence`` kind, one
module each under ``kinds/`` (their registry, ``kinds.ORDER``, is the list).

"Still CUDA" means a CUDA token (an identifier, attribute or space-free string matching
``[markers]`` of ``cuda_intent.toml``) or a finding that this run does not fix. Tokens that a fixed
finding covers (its rewrite removes them) do not count. Consistency follows: a site is left when
what shares its unit stays CUDA, so a unit becomes neutral as a whole or not at all;
``Gate.settle`` iterates that to a fixed point.

Modules: ``gate`` (the fixed point), ``index`` (per-file facts and structure), ``remaining``
(what stays CUDA in a span), ``probe`` (what a kind sees and answers), ``data`` (the TOML),
``comments`` (the comment scanner), ``nodes`` (spans and small ``ast`` tests).
"""

from __future__ import annotations

from patches.generate.intent.data import about_cuda_text, is_cuda_word
from patches.generate.intent.gate import Gate, evidence
from patches.generate.intent.kinds import KINDS
from patches.generate.intent.nodes import (
    CUDA_DEVICE_STR,
    Site,
    Span,
    cuda_literal,
    is_call,
    span_of,
)
from patches.generate.intent.probe import Evidence, Options

__all__ = [
    "CUDA_DEVICE_STR",
    "KINDS",
    "Evidence",
    "Gate",
    "Options",
    "Site",
    "Span",
    "about_cuda_text",
    "cuda_literal",
    "evidence",
    "is_call",
    "is_cuda_word",
    "span_of",
]
