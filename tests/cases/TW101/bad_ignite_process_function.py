# case: static-only
"""TW101: Ignite's form: a factory builds `Engine(train_step)`, and the engine's `run(loader, max_epochs)` calls the
step once per batch; the step backpropagates and steps but never clears the gradients, so each step applies the sum
of every batch so far."""
import torch
from ignite.engine import Engine
from torch import nn


def create_trainer(model, optimizer, criterion, device):
    def train_step(engine, batch):
        model.train()
        x, y = batch[0].to(device), batch[1].to(device)
        loss = criterion(model(x), y)
        loss.backward()  # error: TW101
        optimizer.step()
        return {"batch loss": loss.item()}

    return Engine(train_step)


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    trainer = create_trainer(model, optimizer, nn.CrossEntropyLoss(), "cpu")
    data = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]
    trainer.run(data, max_epochs=3)


if __name__ == "__main__":
    main()
