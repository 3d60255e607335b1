"""Compare trainwell's memory estimate with what CUDA really allocates in one training step.

Runs a small GPT (the architecture docs/memory.md describes) for two AdamW
steps with ``zero_grad(set_to_none=False)``, so that during the second step
weights, gradients, optimizer state and activations are all alive at once,
which is what ``total_bytes`` adds up. Prints, per configuration,
``torch.cuda.max_memory_allocated()`` during the second step, the analytic
estimate, the model-mode count, and their ratios. The gap is what trainwell
does not count: allocator rounding, kernel temporaries (the optimizer's
``foreach`` intermediates, cuBLAS workspaces). CUDA context memory is outside
``max_memory_allocated`` entirely.

Usage: python benchmarks/memory_gpu_check.py [--layers 4 --hidden 512 --seq 512 --batch 8]
Without a CUDA GPU it says so and exits 0.
"""

from __future__ import annotations

import argparse
import math
import sys

import torch
import torch.nn.functional as F
from torch import nn

from trainwell.memory.estimate import estimate_memory
from trainwell.memory.measure import measure_memory
from trainwell.memory.units import format_bytes


class Block(nn.Module):
    def __init__(self, hidden: int, heads: int, flash: bool) -> None:
        super().__init__()
        self.heads, self.flash = heads, flash
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.qkv, self.proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        self.fc1, self.act, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q, k, v = self.qkv(x).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v)
        else:
            y = torch.softmax(q @ k.transpose(-2, -1) * (1.0 / math.sqrt(h // self.heads)), dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(b, s, h))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab: int, hidden: int, heads: int, layers: int, flash: bool) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads, flash) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def peak_of_second_step(model: nn.Module, batch: tuple, precision: str) -> int:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    dtype = torch.bfloat16 if precision == "bf16-mixed" else None

    def step() -> None:
        with torch.autocast("cuda", dtype=dtype, enabled=dtype is not None):
            loss = model(*batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)

    step()  # creates the gradients and the optimizer state
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("layers", 4), ("hidden", 512), ("heads", 8), ("seq", 512), ("batch", 8), ("vocab", 8192)):
        parser.add_argument(f"--{name}", type=int, default=default)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU: nothing to measure (the gap between estimate and allocation is measured on a GPU only)")
        return 0
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    shape = dict(batch=args.batch, seq=args.seq, hidden=args.hidden, layers=args.layers, heads=args.heads,
                 vocab=args.vocab)
    for precision in ("32", "bf16-mixed"):
        for flash in (False, True):
            torch.manual_seed(0)
            model = GPT(args.vocab, args.hidden, args.heads, args.layers, flash).cuda()
            ids = torch.randint(0, args.vocab, (args.batch, args.seq), device="cuda")
            batch = (ids, torch.roll(ids, -1, dims=1))
            estimate = estimate_memory(None, "adamw", precision, dropout=False,
                                       attention="flash" if flash else "eager", **shape)
            counted = measure_memory(model, batch, "adamw", precision=precision).total_bytes
            peak = peak_of_second_step(model, batch, precision)
            label = f"{precision:>10} {'flash' if flash else 'eager':>5}"
            print(f"{label}  peak {format_bytes(peak):>22}  estimate {format_bytes(estimate.total_bytes):>22}  "
                  f"peak/estimate {peak / estimate.total_bytes:.3f}  counted(model mode, CUDA) "
                  f"{format_bytes(counted):>22}  peak/counted {peak / counted:.3f}")
            del model, batch
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
