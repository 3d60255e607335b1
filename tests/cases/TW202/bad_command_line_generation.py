# case: static-only
"""TW202 and TW203: `fire.Fire()` runs `generate` from the command line (autograd on, as PyTorch starts); it builds the
model with Dropout, loads its weights and decodes token by token, keeping only `argmax().item()` of each output,
without `model.eval()` (Dropout still drops) and without no_grad (a graph per token, never used)."""
import fire
import torch
from torch import nn


class TinyLM(nn.Module):
    def __init__(self, vocab=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, 32)
        self.drop = nn.Dropout(0.2)
        self.head = nn.Linear(32, vocab)

    def forward(self, tokens):
        return self.head(self.drop(self.embed(tokens)))


def train(path="lm.pt", steps=20):
    model = TinyLM()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(steps):
        tokens = torch.randint(0, 16, (8, 12))
        logits = model(tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, 16), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.save(model.state_dict(), path)


def generate(path="lm.pt", length=10):
    model = TinyLM()
    model.load_state_dict(torch.load(path, weights_only=True))
    tokens = [0]
    for _ in range(length):
        logits = model(torch.tensor(tokens)[None])  # static: TW202, TW203
        tokens.append(logits[0, -1].argmax().item())
    print(tokens)


if __name__ == "__main__":
    fire.Fire()
