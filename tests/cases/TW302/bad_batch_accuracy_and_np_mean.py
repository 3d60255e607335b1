"""TW302: per-batch accuracies `correct / len(y)` summed and divided by the number of batches, a per-batch loss
list averaged with np.mean, and `test_loss * 1.0 / len(loader)` (22 samples in batches of 8)."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
val_loader = DataLoader(TensorDataset(torch.randn(22, 8), torch.randint(0, 2, (22,))), batch_size=8)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
model.eval()
with torch.no_grad():
    acc, test_loss, losses = 0.0, 0.0, []
    for x, y in val_loader:
        out = model(x)
        correct = (out.argmax(1) == y).sum().item()
        acc += 100.0 * correct / len(y)
        test_loss += nn.functional.cross_entropy(out, y).item()
        losses.append(nn.functional.cross_entropy(out, y).item())
    print(acc / len(val_loader))  # error: TW302
    print(np.mean(losses))  # error: TW302
    print(test_loss * 1.0 / len(val_loader))  # error: TW302
