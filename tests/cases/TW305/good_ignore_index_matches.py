"""Correct: the tags are padded with 0 and CrossEntropyLoss(ignore_index=0) leaves the padding out."""
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

torch.manual_seed(0)
samples = [(torch.randint(1, 50, (n,)), torch.randint(1, 5, (n,))) for n in [3, 9, 4, 12, 5, 7]]


def collate(batch):
    tokens, tags = zip(*batch)
    return pad_sequence(tokens, batch_first=True), pad_sequence(tags, batch_first=True)


loader = DataLoader(samples, batch_size=3, shuffle=True, collate_fn=collate)
model = nn.Sequential(nn.Embedding(50, 16, padding_idx=0), nn.Linear(16, 5))
criterion = nn.CrossEntropyLoss(ignore_index=0)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    for tokens, tags in loader:
        loss = criterion(model(tokens).view(-1, 5), tags.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
