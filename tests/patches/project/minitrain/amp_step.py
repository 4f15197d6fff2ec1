"""One mixed-precision training step."""
import torch


def make_scaler(enabled: bool = True):
    return torch.cuda.amp.GradScaler(enabled=enabled)


def train_step(model, batch, target, optimizer, scaler, device):
    """Forward/backward under autocast with loss scaling; returns the loss value."""
    x, y = batch.cuda(non_blocking=True), target.cuda(non_blocking=True)
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.amp.autocast(dtype=torch.float16):
        loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
