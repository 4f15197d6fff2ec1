"""Tensors made inside device contexts: an explicit device, a CUDA one, and a default device."""

import json
import sys

import torch

explicit = sys.argv[1]
with torch.device(explicit):
    made = [torch.zeros(2), torch.randn(2), torch.tensor([1.0]), torch.nn.Linear(2, 2).weight]
with torch.device("cuda"):
    from_cuda = torch.arange(3)
torch.set_default_device("cuda")
default = torch.empty(1)
torch.set_default_device(None)
print(
    json.dumps(
        {
            "explicit": sorted({str(t.device) for t in made}),
            "cuda_context": str(from_cuda.device),
            "default": str(default.device),
            "after": str(torch.ones(1).device),
        }
    )
)
