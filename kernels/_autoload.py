"""`torch.backends` entry point: registers trn only when HN_TRN=1 asks for it.

It lives outside kernels.trn because importing that package is itself the registration.
"""

import os


def autoload() -> None:
    if os.environ.get("HN_TRN", "") == "1":
        import kernels.trn  # noqa: F401
