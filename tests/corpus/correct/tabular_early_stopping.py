"""Tabular regression with a scikit-learn split and scaler fitted on the training rows, a trainer
class with early stopping on the validation loss, ReduceLROnPlateau, and the best weights kept."""
import copy

import numpy as np
import torch
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, lr=1e-2, patience=2):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, factor=0.5, patience=0)
        self.criterion = nn.MSELoss()
        self.patience = patience

    def train_epoch(self, loader):
        self.model.train()
        total = 0.0
        for batch in loader:
            features, target = batch
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(features), target)
            loss.backward()
            self.optimizer.step()
            total += loss.item() * len(target)
        return total / len(loader.dataset)

    @torch.no_grad()
    def validate(self, loader):
        self.model.eval()
        total = sum(self.criterion(self.model(f), t).item() * len(t) for f, t in loader)
        return total / len(loader.dataset)

    def fit(self, train_loader, val_loader, max_epochs=6):
        best, best_state, waited = float("inf"), None, 0
        for epoch in range(max_epochs):
            train_loss = self.train_epoch(train_loader)
            val_loss = self.validate(val_loader)
            self.scheduler.step(val_loss)
            print(f"epoch {epoch}: train {train_loss:.4f} val {val_loss:.4f}")
            if val_loss < best:
                best, best_state, waited = val_loss, copy.deepcopy(self.model.state_dict()), 0
            else:
                waited += 1
                if waited >= self.patience:
                    break
        self.model.load_state_dict(best_state)
        return best


rng = np.random.default_rng(0)
X = rng.normal(3.0, 2.0, size=(80, 5)).astype(np.float32)
y = (X @ np.array([0.5, -1.0, 0.0, 2.0, 0.1], dtype=np.float32) + rng.normal(0, 0.1, 80)).astype(np.float32)
X_train, X_val, y_train, y_val = train_test_split(X, y, test_size=0.2, random_state=0)
scaler = StandardScaler().fit(X_train)
to_ds = lambda a, b: TensorDataset(torch.from_numpy(scaler.transform(a).astype(np.float32)), torch.from_numpy(b)[:, None])
train_loader = DataLoader(to_ds(X_train, y_train), batch_size=16, shuffle=True, generator=torch.Generator().manual_seed(0))
val_loader = DataLoader(to_ds(X_val, y_val), batch_size=16)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 1))
print("best val loss", Trainer(model).fit(train_loader, val_loader))
