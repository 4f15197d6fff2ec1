"""Plumbing shared by validate and matrix: device boot and probing, pytest runs, outcomes, git."""
