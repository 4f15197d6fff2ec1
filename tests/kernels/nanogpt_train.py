"""A nanoGPT-style training script (our own code): config globals overridable as --key=value,
a GPT of pre-norm blocks (causal F.scaled_dot_product_attention, LayerNorm, GELU MLP, tied
embedding/head), AdamW with weight decay groups, gradient clipping, `compile = True`.

    HN_TRN=1 python tests/kernels/nanogpt_train.py --device=trn --max_iters=6

Names no emulator: HN_TRN=1 registers the device at `import torch`. Prints one line per
iteration (`iter I: loss L`) and, when compiled, the frames Dynamo compiled.
tests/kernels/test_inductor.py imports GPT from here (same graphs: Inductor's cache is shared).
"""

import math
import sys
import time

import torch
import torch.nn as nn
from torch.nn import functional as F

# -----------------------------------------------------------------------------
batch_size = 2
block_size = 8
n_layer = 2
n_head = 2
n_embd = 16
vocab_size = 32
learning_rate = 1e-2
weight_decay = 0.1
grad_clip = 1.0
max_iters = 6
seed = 1337
device = "cpu"
compile = True
# -----------------------------------------------------------------------------


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd)
        )

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size=32, block_size=8, n_layer=2, n_head=2, n_embd=16):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList(Block(n_embd, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying, as nanoGPT

    def forward(self, idx, targets):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    def configure_optimizers(self, weight_decay, learning_rate):
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [
            {"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=(0.9, 0.95))


def main(argv):
    g = globals()
    for arg in argv:
        key, val = arg.removeprefix("--").split("=", 1)
        g[key] = val == "True" if isinstance(g[key], bool) else type(g[key])(val)
    torch.manual_seed(seed)
    model = GPT(vocab_size, block_size, n_layer, n_head, n_embd).to(device)
    optimizer = model.configure_optimizers(weight_decay, learning_rate)
    if compile:
        model = torch.compile(model)
    data = torch.randint(
        vocab_size, (batch_size, block_size + 1), generator=torch.Generator().manual_seed(0)
    )
    x, y = data[:, :-1].contiguous().to(device), data[:, 1:].contiguous().to(device)  # one batch
    t0 = time.time()
    for it in range(max_iters):
        loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        dt, t0 = time.time() - t0, time.time()
        print(
            f"iter {it}: loss {loss.item():.6f}, time {dt * 1000:.1f}ms, ppl {math.exp(loss.item()):.2f}"
        )
    if compile:
        from torch._dynamo.utils import counters

        print(f"compiled frames: {counters['stats']['unique_graphs']}")
    print(f"device: {next(model.parameters()).device}")


if __name__ == "__main__":
    main(sys.argv[1:])
