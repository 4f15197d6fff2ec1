"""The Markdown a prove run writes: each subsystem's bundle (``bundle``) and SUMMARY.md
(``summary``)."""
