"""Views of a ``patches.validate`` report: one module per format (``markdown``, ``table``,
``junit``); the JSON report itself is the canonical form."""
