"""A training loop written for AWS's native Trainium backend: only its public surface.

`import torch_neuronx`, device "neuron", `torch.neuron`, process-group backend "neuron", DDP,
`torch.compile(backend="neuron")`. Nothing here names the emulator; tests/kernels/
test_distributed.py runs it unmodified under `python -m kernels.neuron` with 2 ranks.
"""

import os

import torch
import torch.distributed as dist
import torch_neuronx  # noqa: F401  (registers the neuron device)
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("neuron")
rank, world = dist.get_rank(), dist.get_world_size()
local_rank = int(os.environ.get("LOCAL_RANK", "0"))
torch.neuron.set_device(local_rank)
device = torch.device("neuron", local_rank)

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.Linear(32, 1))
model = DDP(model.to(device))
step_model = torch.compile(model, backend="neuron")
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)

g = torch.Generator().manual_seed(rank)
w_true = torch.randn(8, 1, generator=torch.Generator().manual_seed(42))
losses = []
for step in range(20):
    x = torch.randn(16, 8, generator=g)
    y = x @ w_true
    x, y = x.to(device), y.to(device)
    loss = torch.nn.functional.mse_loss(step_model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
gathered = [torch.empty_like(flat) for _ in range(world)]
dist.all_gather(gathered, flat)
same = all(torch.equal(gathered[0].cpu(), t.cpu()) for t in gathered)
print(
    f"rank {rank}: device={flat.device} backend={dist.get_backend()} "
    f"loss {losses[0]:.4f} -> {losses[-1]:.4f} params_equal_across_ranks={same}"
)
dist.destroy_process_group()
