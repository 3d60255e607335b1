"""train_test_split first; StandardScaler fitted on the training rows, only applied to validation."""
import numpy as np
import torch
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn

rng = np.random.default_rng(0)
features = rng.normal(5.0, 2.0, size=(48, 6)).astype(np.float32)
labels = (features[:, 0] > 5.0).astype(np.int64)
X_train, X_val, y_train, y_val = train_test_split(features, labels, test_size=0.25, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train = torch.tensor(scaler.transform(X_train), dtype=torch.float32)
X_val = torch.tensor(scaler.transform(X_val), dtype=torch.float32)
y_train, y_val = torch.tensor(y_train), torch.tensor(y_val)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    model.train()
    perm = torch.randperm(len(X_train))
    for start in range(0, len(X_train), 12):
        idx = perm[start:start + 12]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(X_train[idx]), y_train[idx])
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        print(epoch, (model(X_val).argmax(1) == y_val).float().mean().item())
