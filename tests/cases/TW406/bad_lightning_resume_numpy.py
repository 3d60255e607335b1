# case: static-only
"""TW406: a Lightning script splits with np.random.permutation (unseeded) and resumes with ckpt_path="last"."""
import lightning as L
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Subset, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


data = TensorDataset(torch.randn(500, 8), torch.randn(500, 1))
order = np.random.permutation(len(data))  # error: TW406
train_set, val_set = Subset(data, order[:400].tolist()), Subset(data, order[400:].tolist())
trainer = L.Trainer(max_epochs=10)
trainer.fit(Regressor(), DataLoader(train_set, batch_size=32, shuffle=True), DataLoader(val_set, batch_size=64), ckpt_path="last")
