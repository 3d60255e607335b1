"""Tiny models for the memory tests; also loaded by path from the CLI tests (``tiny_models.py:make_gpt``)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

# The shape the analytic formula is checked against (see docs/memory.md).
GPT = {"vocab": 50, "seq": 16, "hidden": 32, "heads": 4, "layers": 2, "batch": 3}


class Block(nn.Module):
    """Pre-LN GPT block: fused QKV, eager attention, GELU MLP, no dropout (as the formula with --no-dropout)."""

    def __init__(self, hidden: int, heads: int, ffn: int, flash: bool = False) -> None:
        super().__init__()
        self.heads, self.flash = heads, flash
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.qkv, self.proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
        self.fc1, self.act, self.fc2 = nn.Linear(hidden, ffn), nn.GELU(), nn.Linear(ffn, hidden)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q, k, v = self.qkv(x).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in (q, k, v))
        if self.flash:
            return self.proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).contiguous().view(b, s, h))
        probs = torch.softmax(q @ k.transpose(-2, -1) * (1.0 / math.sqrt(h // self.heads)), dim=-1)
        return self.proj((probs @ v).transpose(1, 2).contiguous().view(b, s, h))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class TinyGPT(nn.Module):
    def __init__(self, vocab: int, seq: int, hidden: int, heads: int, layers: int, flash: bool = False,
                 **_: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.blocks = nn.ModuleList(Block(hidden, heads, 4 * hidden, flash) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)
        self.head.weight = self.embed.weight  # tied, as the formula assumes

    def forward(self, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def make_gpt(flash: bool = False) -> TinyGPT:
    torch.manual_seed(0)
    return TinyGPT(**GPT, flash=flash)


def make_gpt_batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, GPT["vocab"], (GPT["batch"], GPT["seq"]), generator=g)
    return ids, torch.randint(0, GPT["vocab"], (GPT["batch"], GPT["seq"]), generator=g)


def make_mlp(width: int = 64) -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(20, width), nn.ReLU(), nn.Linear(width, width), nn.BatchNorm1d(width), nn.Tanh(),
                         nn.Linear(width, 5))


def make_broken():
    raise ValueError("no weights file")
