"""Correct: SGD takes its momentum from the command line, 0 by default, so plain SGD keeps no state, and the
scheduler comes back from the checkpoint with the model."""
import argparse
import io

import torch
from torch import nn

parser = argparse.ArgumentParser()
parser.add_argument("--lr", default=0.1, type=float)
parser.add_argument("--momentum", default=0.0, type=float)
parser.add_argument("--epochs", default=4, type=int)


def main(args):
    torch.manual_seed(0)
    x = torch.randn(32, 6)
    y = (x[:, 0] > 0).long()
    model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 2))
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2)
    store = io.BytesIO()
    torch.save({"state_dict": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": 1}, store)
    store.seek(0)
    if store.getbuffer().nbytes:
        checkpoint = torch.load(store, weights_only=True)
        start_epoch = checkpoint["epoch"]
        model.load_state_dict(checkpoint["state_dict"])
        scheduler.load_state_dict(checkpoint["scheduler"])
    else:
        start_epoch = 0
    for epoch in range(start_epoch, args.epochs):
        for i in range(0, len(x), 8):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x[i:i + 8]), y[i:i + 8]).backward()
            optimizer.step()
        scheduler.step()


if __name__ == "__main__":
    main(parser.parse_args())
