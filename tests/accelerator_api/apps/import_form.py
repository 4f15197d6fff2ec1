import accelerator_api.autoport  # noqa: F401  (the one-line port)
import json

import torch

x = torch.ones(2, device="cuda")
print(json.dumps({"device": str(x.device), "available": torch.cuda.is_available()}))
