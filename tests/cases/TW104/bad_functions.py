"""TW104: a train_one_epoch helper clips before unscaling."""
import torch
from torch import nn
from torch.amp import GradScaler
from torch.utils.data import DataLoader, TensorDataset


def train_one_epoch(model, loader, optimizer, scaler, max_norm=0.5):
    model.train()
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            out = model(x)
            loss = nn.functional.mse_loss(out.float(), y)
        scaler.scale(loss).backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # error: TW104
        scaler.step(optimizer)
        scaler.update()
    return loss.item()


torch.manual_seed(0)
X = torch.randn(32, 6)
ds = TensorDataset(X, X.sum(1, keepdim=True))
loader = DataLoader(ds, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scaler = GradScaler("cpu")
for epoch in range(2):
    print(epoch, train_one_epoch(model, loader, optimizer, scaler))
