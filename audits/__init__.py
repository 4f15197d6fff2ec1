"""hwneutral audits: find CUDA-specific code (python -m audits.scan)."""

__version__ = "0.1.0"
