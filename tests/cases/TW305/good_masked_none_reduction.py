"""Correct: a per-position loss (reduction='none') multiplied by a mask of real tokens and averaged over them."""
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence

torch.manual_seed(0)
seqs = [torch.randint(1, 20, (n,)) for n in (5, 9, 3, 7)]
labels = [torch.randint(0, 4, (len(s),)) for s in seqs]
model = nn.Sequential(nn.Embedding(20, 8, padding_idx=0), nn.Linear(8, 4))
criterion = nn.CrossEntropyLoss(reduction="none")
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(4):
    x = pad_sequence(seqs, batch_first=True)
    y = pad_sequence(labels, batch_first=True)
    mask = (x != 0).float()
    per_token = criterion(model(x).transpose(1, 2), y)
    loss = (per_token * mask).sum() / mask.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
