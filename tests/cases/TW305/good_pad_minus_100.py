"""Correct: targets padded with -100, the default ignore_index of F.cross_entropy."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence

torch.manual_seed(0)
corpus = [torch.randint(2, 40, (n,)) for n in (6, 14, 9, 3, 11, 8)]
model = nn.Sequential(nn.Embedding(40, 32), nn.Linear(32, 40))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
for epoch in range(3):
    for i in range(0, len(corpus), 3):
        chunk = corpus[i:i + 3]
        inputs = pad_sequence([s[:-1] for s in chunk], batch_first=True, padding_value=0)
        targets = pad_sequence([s[1:] for s in chunk], batch_first=True, padding_value=-100)
        loss = F.cross_entropy(model(inputs).reshape(-1, 40), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
