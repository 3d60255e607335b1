"""Correct: the helper masks padding for its accuracy with `gold.ne(pad_idx)` and tells cross_entropy to ignore the
same index, so padding is neither trained nor counted."""
import torch
import torch.nn.functional as F
from torch import nn

PAD = 0


def compute_loss(pred, gold, pad_idx):
    gold = gold.contiguous().view(-1)
    non_pad_mask = gold.ne(pad_idx)
    correct = pred.argmax(1).eq(gold).masked_select(non_pad_mask).sum().item()
    loss = F.cross_entropy(pred, gold, ignore_index=pad_idx, reduction="sum")
    return loss, correct


torch.manual_seed(0)
lengths = [3, 6, 8, 4, 5, 2, 8, 7]
batches = []
for start in range(0, len(lengths), 4):
    rows = torch.full((4, 8), PAD, dtype=torch.long)
    for row, n in enumerate(lengths[start:start + 4]):
        rows[row, :n] = torch.randint(1, 20, (n,))
    batches.append(rows)
model = nn.Sequential(nn.Embedding(20, 16, padding_idx=PAD), nn.Linear(16, 20))
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(2):
    for tokens in batches:
        pred = model(tokens[:, :-1]).reshape(-1, 20)
        loss, correct = compute_loss(pred, tokens[:, 1:], PAD)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
