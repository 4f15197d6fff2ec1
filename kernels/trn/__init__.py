"""`trn`: a reference PrivateUse1 accelerator whose memory is host RAM (see docs/device.md).

Importing this package registers the device — it becomes torch.accelerator for the process.
"""

from .register import backend_name, is_registered, register

register()

__all__ = ["backend_name", "is_registered", "register"]
