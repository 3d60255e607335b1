"""TW101: an LBFGS closure defined in the batch loop (the PyTorch docs' form) computes the loss and calls backward
but never clears the gradients: each evaluation LBFGS makes adds onto the last one's gradients."""
import torch
from torch import nn

torch.manual_seed(0)
batches = [(torch.randn(16, 3), torch.randn(16, 1)) for _ in range(4)]
model = nn.Linear(3, 1)
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)
criterion = nn.MSELoss()


def train(epochs):
    for epoch in range(epochs):
        for inputs, targets in batches:
            def closure():
                loss = criterion(model(inputs), targets)
                loss.backward()  # error: TW101
                return loss

            optimizer.step(closure)


train(2)
