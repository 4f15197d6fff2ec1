"""The Trainium policy layer: topology, dtype policy, numerics, stream sanitizer, test harness.

Pure: importing this package or any module of it never builds the native core nor registers a
device (``kernels.trn``, the device, imports it and applies it in ``kernels/trn/trainium.py``).
"""
