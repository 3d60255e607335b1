# case: static-only
"""TW302: a test loop (22 samples in batches of 8) written for PyTorch before 0.4, which reads each batch's mean loss
as `loss.data[0]` (a one-element tensor then; PyTorch 2 raises on it, hence static only) and adds each batch's
accuracy `pred.eq(y).float().mean()`, then divides both by the number of batches."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
test_loader = DataLoader(TensorDataset(torch.randn(22, 8), torch.randint(0, 2, (22,))), batch_size=8)
model = nn.Sequential(nn.Linear(8, 2), nn.LogSoftmax(dim=1))
model.eval()
with torch.no_grad():
    test_loss, correct = 0.0, 0.0
    for data, target in test_loader:
        output = model(data)
        test_loss += F.nll_loss(output, target).data[0]
        pred = output.data.max(1, keepdim=True)[1]
        correct += pred.eq(target.data.view_as(pred)).cpu().float().mean()
    test_loss /= len(test_loader)  # error: TW302
    print(test_loss, 100. * correct / len(test_loader))  # error: TW302
