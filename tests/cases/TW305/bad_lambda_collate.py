"""TW305: a one-line lambda collate pads tokens and labels with pad_sequence's default 0; F.cross_entropy counts it."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

torch.manual_seed(0)
examples = [(torch.randint(1, 20, (n,)), torch.randint(1, 3, (n,))) for n in (3, 8, 5, 2, 6, 4)]
loader = DataLoader(
    examples, batch_size=3, shuffle=True,
    collate_fn=lambda b: (pad_sequence([x for x, _ in b], batch_first=True), pad_sequence([y for _, y in b], batch_first=True)),
)
model = nn.Sequential(nn.Embedding(20, 8), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for tokens, labels in loader:
        loss = F.cross_entropy(model(tokens).transpose(1, 2), labels)  # error: TW305
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
