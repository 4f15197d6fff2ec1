"""tests/kernels runs as its own pytest process, so it may register trn in-process.

Registration must precede any import of torch.testing._internal.common_utils/common_device_type:
those modules compute their device list at import time.
"""

import kernels.trn  # noqa: F401  (registers the device; its harness hook drops trn variants in
#                     dtypes the preset lacks, e.g. float64: absent, not failed)
