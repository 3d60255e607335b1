"""TW401: a trainer class builds its own unshuffled training loader."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class PairsDataset(Dataset):
    def __init__(self, n=32):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 6, generator=g)
        self.y = (self.x[:, 0] > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"features": self.x[i], "label": self.y[i]}


class Trainer:
    def __init__(self, model, dataset):
        self.model = model
        self.loader = DataLoader(dataset, batch_size=8, num_workers=0)  # error: TW401
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    def fit(self, epochs=2):
        self.model.train()
        for epoch in range(epochs):
            for batch in self.loader:
                self.optimizer.zero_grad()
                loss = nn.functional.cross_entropy(self.model(batch["features"]), batch["label"])
                loss.backward()
                self.optimizer.step()
            print(epoch, loss.item())


torch.manual_seed(0)
Trainer(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2)), PairsDataset()).fit()
