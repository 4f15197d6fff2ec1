"""The conformance matrix: upstream OpInfo samples on every device, compared with CPU."""
