"""TW115: a train_one_epoch helper with `accumulation_steps` from the config and tqdm around the loader."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm

CONFIG = {"accumulation_steps": 3, "epochs": 2, "lr": 0.05}


def train_one_epoch(model, loader, optimizer, accumulation_steps):
    model.train()
    for step, (inputs, labels) in enumerate(tqdm(loader, disable=True)):
        outputs = model(inputs)
        loss = nn.functional.mse_loss(outputs, labels) / accumulation_steps
        loss.backward()
        if (step + 1) % accumulation_steps == 0:  # static: TW115
            optimizer.step()  # runtime: TW115
            optimizer.zero_grad()


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.AdamW(model.parameters(), lr=CONFIG["lr"])
    data = TensorDataset(torch.randn(50, 6), torch.randn(50, 1))
    loader = DataLoader(data, batch_size=8, shuffle=True)
    for epoch in range(CONFIG["epochs"]):
        train_one_epoch(model, loader, optimizer, CONFIG["accumulation_steps"])


if __name__ == "__main__":
    main()
