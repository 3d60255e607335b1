"""A running mean that a helper returns and the next step passes back to it (a GAN path-length
regulariser): the checker follows the loop-carried value through the helper to a bounded depth
(it recursed without end here once) and finds nothing: the penalty carries its graph, the mean
fed back is detached."""

import torch
from torch import nn


def regularize(fake, latents, mean, decay=0.01):
    lengths = (fake * latents).sum(1)
    new_mean = mean + decay * (lengths.mean() - mean)
    return (lengths - new_mean).pow(2).mean(), new_mean.detach(), lengths


def train(generator, optimizer, steps, every=2):
    mean = 0.0
    for step in range(steps):
        if step % every == 0:
            latents = torch.randn(8, 4, requires_grad=True)
            fake = generator(latents)
            penalty, mean, lengths = regularize(
                fake, latents, mean
            )
            loss = 2.0 * penalty
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    generator = nn.Linear(4, 4)
    train(generator, torch.optim.SGD(generator.parameters(), lr=0.1), 6)
