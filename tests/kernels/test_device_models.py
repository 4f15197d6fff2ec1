"""Real models train the same on trn as on CPU (issue 12 part 1).

Tied weights must stay tied across `.to("trn")`, `.cpu()` and `.to(dtype)` (nn.Module._apply swaps
in place only when `torch._has_compatible_shallow_copy_type` says so), and small random-init models
of real families from `transformers` must give the same parameters after forward, backward and three
optimizer steps on both devices, from the same seed.
"""

from __future__ import annotations

import importlib.metadata

import pytest
import torch
import transformers  # the `test` extra: a missing install fails, it does not skip
from torch import nn

DEV = "trn"


def test_shallow_copy_type_is_compatible_between_cpu_and_trn():
    cpu, dev = torch.zeros(2), torch.zeros(2, device=DEV)
    assert torch._has_compatible_shallow_copy_type(cpu, dev)
    assert torch._has_compatible_shallow_copy_type(dev, cpu)
    assert torch._has_compatible_shallow_copy_type(dev, torch.zeros(2, device=f"{DEV}:1"))
    # what c10 refuses for CPU/CUDA stays refused: sparse vs dense is not interchangeable
    assert not torch._has_compatible_shallow_copy_type(dev, torch.zeros(2).to_sparse())


def test_param_data_assignment_moves_a_parameter_in_place():
    p = nn.Parameter(torch.ones(3))
    p.data = torch.full((3,), 2.0, device=DEV)
    assert p.device.type == DEV and p.tolist() == [2.0, 2.0, 2.0]
    assert isinstance(p, nn.Parameter)
    p.data = p.data.cpu()
    assert p.device.type == "cpu"


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 10, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, idx):
        return self.head(self.emb(idx))


@pytest.mark.parametrize(
    "move",
    [
        lambda m: m.to(DEV),
        lambda m: m.to(DEV).cpu(),
        lambda m: m.to(DEV).to(torch.bfloat16),
        lambda m: m.to(DEV).to(torch.bfloat16).to(DEV, torch.float32).cpu(),
        lambda m: getattr(m, DEV)(),
    ],
    ids=["to_trn", "trn_then_cpu", "trn_then_bf16", "round_trip", "module_method"],
)
def test_tied_weights_stay_tied(move):
    m = Tied()
    original = m.emb.weight
    m = move(m)
    assert m.head.weight is m.emb.weight
    assert m.emb.weight is original  # swapped in place: same Parameter object, new data
    assert len(list(m.parameters())) == 1


def test_tied_gradient_accumulates_both_uses():
    torch.manual_seed(0)
    m = Tied()
    idx = torch.tensor([[1, 2, 3]])
    m(idx).square().sum().backward()
    ref = m.emb.weight.grad.clone()
    m.zero_grad(set_to_none=True)
    m.to(DEV)
    m(idx.to(DEV)).square().sum().backward()
    torch.testing.assert_close(m.emb.weight.grad.cpu(), ref)


# ---- real model families from transformers, random init, built from config (no hub) ----


def _no_kernels_clash():
    """Hugging Face's `kernels` distribution shares its import name with this project's top-level
    `kernels` package: transformers (5.25 requires it) reads its version, then imports ours at
    model load and fails on a missing name. Say so instead of that ImportError."""
    try:
        version = importlib.metadata.version("kernels")
    except importlib.metadata.PackageNotFoundError:
        return
    pytest.fail(
        f"Hugging Face's `kernels` {version} is installed beside this project's `kernels` package "
        "(same import name): transformers would import ours. Install the test extra's "
        "transformers (<5.25, pyproject.toml) or `pip uninstall kernels`."
    )


def _gpt2(attn):
    cfg = transformers.GPT2Config(
        vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, attn_implementation=attn,
    )  # fmt: skip
    return transformers.GPT2LMHeadModel(cfg), "causal"


def _bert(attn):
    cfg = transformers.BertConfig(
        vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=32,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, attn_implementation=attn,
    )  # fmt: skip
    return transformers.BertForMaskedLM(cfg), "masked"


def _llama(attn):
    cfg = transformers.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
        tie_word_embeddings=True, attn_implementation=attn,
    )  # fmt: skip
    return transformers.LlamaForCausalLM(cfg), "causal"


FAMILIES = {"gpt2": _gpt2, "bert": _bert, "llama": _llama}


def _build(family: str, attn):
    _no_kernels_clash()
    return FAMILIES[family](attn)


LR = 1e-2
OPTIMIZERS = {
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=LR),
    "sgd_momentum": lambda ps: torch.optim.SGD(ps, lr=LR, momentum=0.9),
}


def _train(family: str, opt: str, device: str, attn: str):
    torch.manual_seed(0)
    model, kind = _build(family, attn)
    model.eval()  # dropout is 0 anyway; eval keeps any remaining randomness out
    tied_before = {id(p) for p in model.parameters()}
    model.to(device)
    assert {id(p) for p in model.parameters()} == tied_before, "to() replaced parameters"
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 64, (2, 12), generator=g)
    labels = ids.clone()
    if kind == "masked":
        labels[:, ::2] = -100
    optim = OPTIMIZERS[opt](model.parameters())
    losses = []
    for _ in range(3):
        optim.zero_grad()
        out = model(input_ids=ids.to(device), labels=labels.to(device))
        out.loss.backward()
        optim.step()
        losses.append(out.loss.item())
    grads = {n: p.grad.detach().cpu() for n, p in model.named_parameters()}
    params = {n: p.detach().cpu() for n, p in model.named_parameters()}
    return losses, grads, params


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_real_model_trains_like_cpu(family, opt):
    """Eager attention: the same CPU kernels run on both devices, so float32 tolerance holds."""
    cpu = _train(family, opt, "cpu", "eager")
    dev = _train(family, opt, DEV, "eager")
    _compare(cpu, dev, grad_tol={}, param_tol={})


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_real_model_with_sdpa_trains_like_cpu(family, opt):
    """transformers' default SDPA attention: CPU and trn may pick different attention kernels
    (CPU its flash kernel), whose sums round differently (~1e-7). Adam divides by sqrt(v), so a
    parameter whose gradient is pure rounding noise (GPT-2's key bias: softmax ignores a shift)
    moves by up to ~lr on either device in a different direction: AdamW parameters are compared
    at a fraction of lr, everything else at float32 tolerance."""
    cpu = _train(family, opt, "cpu", "sdpa")
    dev = _train(family, opt, DEV, "sdpa")
    param_tol = (
        {"rtol": 1e-4, "atol": LR * 1e-2} if opt == "adamw" else {"rtol": 1e-4, "atol": 1e-6}
    )
    _compare(cpu, dev, grad_tol={"rtol": 1e-4, "atol": 1e-6}, param_tol=param_tol)


def _compare(cpu, dev, grad_tol, param_tol):
    cpu_losses, cpu_grads, cpu_params = cpu
    dev_losses, dev_grads, dev_params = dev
    assert cpu_params.keys() == dev_params.keys()
    torch.testing.assert_close(dev_losses, cpu_losses, rtol=1e-5, atol=1e-6)
    for name in cpu_params:
        torch.testing.assert_close(
            dev_grads[name], cpu_grads[name], msg=lambda m, n=name: f"grad of {n}: {m}", **grad_tol
        )
        torch.testing.assert_close(
            dev_params[name], cpu_params[name], msg=lambda m, n=name: f"{n}: {m}", **param_tol
        )
