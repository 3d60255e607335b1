"""TW108: a language-model step whose inputs and targets come from a `get_batch` helper slicing a corpus tensor, and
whose loader comes from a `make_loader` helper: all of it data. The loss reads `output.detach()`."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def get_batch(source, i, seq_len=4):
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def make_loader(n):
    features = torch.from_numpy(np.random.rand(n, 6).astype(np.float32))
    return DataLoader(TensorDataset(features, torch.randint(0, 5, (n,))), batch_size=4, shuffle=True)


torch.manual_seed(0)
np.random.seed(0)
corpus = torch.randint(0, 10, (40,))
embed_head = nn.Sequential(nn.Embedding(10, 8), nn.Linear(8, 10))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(embed_head.parameters(), lr=0.1)
for i in range(0, 20, 4):
    data, targets = get_batch(corpus, i)
    output = embed_head(data)
    loss = criterion(output.detach(), targets).requires_grad_()
    optimizer.zero_grad()
    loss.backward()  # error: TW108
    optimizer.step()

classifier = nn.Linear(6, 5)
optimizer = torch.optim.SGD(classifier.parameters(), lr=0.1)
for features, labels in make_loader(16):
    loss = criterion(classifier(features).detach(), labels.long()).requires_grad_()
    optimizer.zero_grad()
    loss.backward()  # error: TW108
    optimizer.step()
print(loss.item())
