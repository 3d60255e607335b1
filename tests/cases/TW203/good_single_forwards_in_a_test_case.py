# case: static-only
"""A unit test: a few optimizer steps, then one forward pass per check, compared with allclose. A test method runs
once; it is no validation pass, and its few graphs are freed when it returns."""
import unittest

import torch
from torch import nn


class TestAdapterTraining(unittest.TestCase):
    def test_outputs_change_after_training(self):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
        before = model(x)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        for _ in range(3):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        after = model(x)
        self.assertFalse(torch.allclose(before, after))
        model.eval()
        again = model(x)
        self.assertTrue(torch.allclose(after, again))


if __name__ == "__main__":
    unittest.main(exit=False)
