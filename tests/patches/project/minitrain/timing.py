"""Time a callable on the GPU with events, and report peak memory."""
import torch
from torch.cuda import synchronize


def time_call(fn, *args, warmup: int = 2, iters: int = 10, device=None):
    """Return (milliseconds per call, peak bytes allocated)."""
    for _ in range(warmup):
        fn(*args)
    synchronize()
    torch.cuda.reset_peak_memory_stats(device=device)
    start = torch.cuda.Event(True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn(*args)
    end.record()
    torch.cuda.synchronize(device)
    peak = torch.cuda.max_memory_allocated(device)
    return start.elapsed_time(end) / iters, peak
