"""Prove series on PyTorch's own code: upstream tests, per-hunk device coverage, PR bundles."""
