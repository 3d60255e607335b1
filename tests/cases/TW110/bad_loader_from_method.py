"""TW110: the trainer builds its loader in a method (`self._prepare_dataloader(dataset)` returns a DataLoader over a
shuffling DistributedSampler) and runs one method per epoch, which never calls set_epoch: every epoch reads the
same order."""
import torch
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, model, dataset, rank=0, world_size=2):
        self.rank, self.world_size = rank, world_size
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        self.train_loader = self._prepare_dataloader(dataset)

    def _prepare_dataloader(self, dataset):
        return DataLoader(dataset, batch_size=4, sampler=DistributedSampler(dataset, num_replicas=self.world_size, rank=self.rank))

    def _run_epoch(self, epoch, loader):
        for x, y in loader:  # error: TW110
            self.optimizer.zero_grad()
            loss = nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()

    def train(self, epochs):
        for epoch in range(epochs):
            self._run_epoch(epoch, self.train_loader)


torch.manual_seed(0)
x = torch.linspace(-1, 1, 40).unsqueeze(1)
Trainer(nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1)), TensorDataset(x, x ** 2)).train(3)
