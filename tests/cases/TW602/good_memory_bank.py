"""The feature bank stores detached embeddings."""
import torch
from torch import nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
head = nn.Linear(4, 2)
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.05)
X, Y = torch.randn(32, 8), torch.randint(0, 2, (32,))
feature_bank = torch.zeros(32, 4)

for epoch in range(3):
    perm = torch.randperm(32)
    for start in range(0, 32, 4):
        idx = perm[start:start + 4]
        emb = encoder(X[idx])
        loss = nn.functional.cross_entropy(head(emb), Y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        feature_bank[idx] = emb.detach()
    sims = nn.functional.normalize(feature_bank, dim=1) @ nn.functional.normalize(feature_bank, dim=1).T
    knn = Y[sims.fill_diagonal_(-1).argmax(1)]
    print(epoch, loss.item(), (knn == Y).float().mean().item())
