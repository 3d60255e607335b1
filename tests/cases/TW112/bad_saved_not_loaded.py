"""TW112: the optimizer and scheduler states are saved, but resume() loads only the model."""
import io

import torch
from torch import nn


def build():
    model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    return model, optimizer, scheduler


def run_epochs(model, optimizer, scheduler, data, epochs, start=0):
    x, y = data
    for epoch in range(start, epochs):
        for i in range(0, len(x), 8):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x[i:i + 8]), y[i:i + 8]).backward()
            optimizer.step()
        scheduler.step()


def main():
    torch.manual_seed(0)
    x = torch.randn(32, 6)
    data = (x, (x[:, 0] > 0).long())
    model, optimizer, scheduler = build()
    run_epochs(model, optimizer, scheduler, data, 2)
    store = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": 2}, store)
    store.seek(0)

    model, optimizer, scheduler = build()  # as a new process would, after a restart
    state = torch.load(store, weights_only=True)  # runtime: TW112
    model.load_state_dict(state["model"])  # static: TW112
    run_epochs(model, optimizer, scheduler, data, 4, start=state["epoch"])


if __name__ == "__main__":
    main()
