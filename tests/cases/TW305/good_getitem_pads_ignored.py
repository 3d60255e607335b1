"""Correct: __getitem__ pads the labels with -100 (tokens with 0), which CrossEntropyLoss ignores."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

MAX_LEN = 8


class Tagged(Dataset):
    def __init__(self, lengths):
        g = torch.Generator().manual_seed(0)
        self.items = [(torch.randint(1, 50, (n,), generator=g), torch.randint(1, 5, (n,), generator=g)) for n in lengths]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        tokens, tags = self.items[i]
        return F.pad(tokens, (0, MAX_LEN - len(tokens))), F.pad(tags, (0, MAX_LEN - len(tags)), value=-100)


loader = DataLoader(Tagged([3, 8, 5, 2, 6, 4]), batch_size=3, shuffle=True)
model = nn.Sequential(nn.Embedding(50, 16), nn.Linear(16, 5))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    for tokens, tags in loader:
        loss = criterion(model(tokens).reshape(-1, 5), tags.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
