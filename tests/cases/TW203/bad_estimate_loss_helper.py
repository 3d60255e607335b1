"""TW203: a nanoGPT-style `estimate_loss()` run every few iterations lost its `@torch.no_grad()`: it keeps only
floats, so its forward passes build graphs nobody uses, although a backward follows in the training loop."""
import torch
from torch import nn


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, y):
        logits = self.drop(self.fc(x))
        return logits, nn.functional.mse_loss(logits, y)


torch.manual_seed(0)
model = GPT()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
eval_iters = 2


def get_batch(split):
    return torch.randn(4, 8), torch.randn(4, 8)


def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            logits, loss = model(X, Y)  # error: TW203
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


for iter_num in range(6):
    if iter_num % 3 == 0:
        print(iter_num, estimate_loss())
    X, Y = get_batch("train")
    logits, loss = model(X, Y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
