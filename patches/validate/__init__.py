"""Validate a series: run the affected tests before and after it on every device."""
