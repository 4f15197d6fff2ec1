"""A CUDA-only training script, written the way CUDA apps are. The autoport tests run it UNMODIFIED.

Usage: cuda_train.py OUT.json [STEPS]. Writes the final fp32 loss and what the script saw.
"""
import json
import os
import sys
import tempfile

import torch
import torch.nn as nn


def make_data(n=256):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 16, generator=g)
    w = torch.randn(16, 1, generator=g)
    y = torch.tanh(x @ w) + 0.05 * torch.randn(n, 1, generator=g)
    return x, y


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))


def main(out_path, steps=30):
    assert torch.cuda.is_available(), "this script needs a CUDA GPU"
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = True
    torch.cuda.manual_seed_all(0)
    device = torch.device("cuda")

    x, y = make_data()
    x, y = x.cuda(), y.to("cuda:0")
    model = make_model().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.cuda.amp.GradScaler()
    running = torch.zeros(1, device=device)
    noise_gen = torch.Generator(device="cuda").manual_seed(1)
    torch.randn(4, device="cuda", generator=noise_gen)  # exercised only, not used by the loss

    torch.cuda.reset_peak_memory_stats()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast():
            loss = nn.functional.mse_loss(model(x).float(), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        running += loss.detach()
    end.record()
    torch.cuda.synchronize()

    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "model.pt")
        torch.save(model.state_dict(), ckpt)
        model.load_state_dict(torch.load(ckpt, map_location="cuda"))

    with torch.no_grad():
        final = nn.functional.mse_loss(model(x), y).item()
    result = {
        "final_loss": final,
        "mean_loss": (running / steps).item(),
        "param_device": str(next(model.parameters()).device),
        "is_cuda": x.is_cuda,
        "peak_bytes": torch.cuda.max_memory_allocated(),
        "allocated_bytes": torch.cuda.memory_allocated(),
        "elapsed_ms": start.elapsed_time(end),
        "device_name": torch.cuda.get_device_name(0),
    }
    with open(out_path, "w") as fh:
        json.dump(result, fh)
    print(f"final loss {final:.6f} on {result['param_device']}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 30)
