# case: static-only
"""Correct (the fast-neural-style form of Ignite's examples): the style image's features are computed once, by a VGG
whose parameters are frozen, and read as the target by the engine's training step, a closure of the same function:
they are not a validation pass, and the step that reads them is walked on its own."""
import torch
from ignite.engine import Engine
from torch import nn


class Vgg16(nn.Module):
    def __init__(self, requires_grad=False):
        super().__init__()
        self.slice1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.slice2 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, x):
        h1 = self.slice1(x)
        return h1, self.slice2(h1)


def gram_matrix(y):
    b, c = y.shape[:2]
    features = y.view(b, c, -1)
    return features.bmm(features.transpose(1, 2)) / features.shape[-1]


def train(loader, epochs=2):
    transformer = nn.Conv2d(3, 3, 3, padding=1)
    optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
    device = torch.device("cpu")
    vgg = Vgg16(requires_grad=False).to(device)
    style = torch.rand(4, 3, 16, 16)
    style = style.repeat(2, 1, 1, 1).to(device)
    features_style = vgg(style)
    gram_style = [gram_matrix(y) for y in features_style]

    def step(engine, batch):
        x, _ = batch
        optimizer.zero_grad()
        y = transformer(x)
        loss = sum(nn.functional.mse_loss(gram_matrix(f), g[: len(x)]) for f, g in zip(vgg(y), gram_style))
        loss.backward()
        optimizer.step()
        return loss.item()

    trainer = Engine(step)
    trainer.run(loader, max_epochs=epochs)


if __name__ == "__main__":
    train([(torch.rand(2, 3, 16, 16), None)])
