"""Registers torch's pure-Python PrivateUse1 stand-in as "npx": an accelerator nobody named."""
from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

_setup_privateuseone_for_python_backend("npx")
