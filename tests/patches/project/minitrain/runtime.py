"""Device selection helpers."""
import torch


def visible_devices() -> int:
    """How many GPUs this process can use."""
    return torch.cuda.device_count()


def pick_device(rank: int = 0) -> torch.device:
    # One process per GPU: bind this rank to its device.
    if torch.cuda.is_available():
        torch.cuda.set_device(rank % torch.cuda.device_count())
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def release_memory(device=None) -> None:
    """Free cached blocks and wait for pending work (e.g. between eval runs)."""
    torch.cuda.synchronize(device=device)
    torch.cuda.empty_cache()
