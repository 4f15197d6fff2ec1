"""The one error type the layer and autoport raise when something has no equivalent."""


class Unsupported(RuntimeError):
    """`api` has no equivalent on `device_type`; `reason` says why and what to do instead."""

    def __init__(self, api: str, device_type: str, reason: str):
        self.api, self.device_type, self.reason = api, device_type, reason
        super().__init__(f"{api} is not supported on '{device_type}': {reason}")
