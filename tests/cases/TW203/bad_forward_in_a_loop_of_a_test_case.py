"""TW203: a unit test that evaluates batch after batch with autograd on: a validation pass, repeated, inside a test."""
import unittest

import torch
from torch import nn


class TestAccuracy(unittest.TestCase):
    def test_accuracy_after_training(self):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        batches = [(torch.randn(6, 4), torch.randint(0, 2, (6,))) for _ in range(4)]
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        for x, y in batches:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        model.eval()
        correct = 0
        for x, y in batches:
            logits = model(x)  # error: TW203
            correct += (logits.argmax(1) == y).sum().item()
        self.assertGreaterEqual(correct, 0)


if __name__ == "__main__":
    unittest.main(exit=False)
