"""Correct: the padding of the labels is found with `labels == pad_token_id` and replaced in place by -100, the index
cross_entropy ignores by default, before the loss."""
import torch
import torch.nn.functional as F
from torch import nn

pad_token_id = 0


def lm_loss(logits, labels):
    labels = labels.clone()
    labels[labels == pad_token_id] = -100
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


torch.manual_seed(0)
lengths = [3, 6, 8, 4, 5, 2, 8, 7]
batches = []
for start in range(0, len(lengths), 4):
    rows = torch.full((4, 8), pad_token_id, dtype=torch.long)
    for row, n in enumerate(lengths[start:start + 4]):
        rows[row, :n] = torch.randint(1, 20, (n,))
    batches.append(rows)
model = nn.Sequential(nn.Embedding(20, 16, padding_idx=pad_token_id), nn.Linear(16, 20))
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(2):
    for tokens in batches:
        loss = lm_loss(model(tokens[:, :-1]), tokens[:, 1:])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
