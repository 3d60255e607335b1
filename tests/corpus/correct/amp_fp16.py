"""Automatic mixed precision with float16: autocast for the forward pass, a GradScaler for the
backward pass, unscale_ before clipping, scaler.step/update, and the scaler saved with the checkpoint."""
import io

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
epochs, max_grad_norm = 3, 1.0

torch.manual_seed(0)
X = torch.randn(96, 20)
Y = (X[:, :5].sum(1) > 0).long()
train_loader = DataLoader(TensorDataset(X[:64], Y[:64]), batch_size=16, shuffle=True,
                          generator=torch.Generator().manual_seed(0))
val_loader = DataLoader(TensorDataset(X[64:], Y[64:]), batch_size=16)

model = nn.Sequential(nn.Linear(20, 64), nn.LayerNorm(64), nn.GELU(), nn.Dropout(0.1), nn.Linear(64, 2)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.05)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=2e-3, total_steps=epochs * len(train_loader))
scaler = torch.amp.GradScaler(device)

for epoch in range(epochs):
    model.train()
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device, dtype=torch.float16):
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()

    model.eval()
    correct = 0
    with torch.no_grad(), torch.autocast(device_type=device, dtype=torch.float16):
        for x, y in val_loader:
            x, y = x.to(device), y.to(device)
            correct += (model(x).argmax(1) == y).sum().item()
    print(f"epoch {epoch}: loss {loss.item():.4f} grad-norm {grad_norm.item():.3f} "
          f"val acc {correct / len(val_loader.dataset):.3f} scale {scaler.get_scale():.0f}")

checkpoint = io.BytesIO()
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict()}, checkpoint)
checkpoint.seek(0)
state = torch.load(checkpoint, weights_only=True)
scaler.load_state_dict(state["scaler"])
