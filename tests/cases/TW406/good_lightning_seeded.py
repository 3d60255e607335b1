# case: static-only
"""Correct: the same data module under DDP, after L.seed_everything: every process draws the same split."""
import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset, random_split


class Data(L.LightningDataModule):
    def setup(self, stage=None):
        full = TensorDataset(torch.randn(1000, 16), torch.randint(0, 4, (1000,)))
        self.train_set, self.val_set = random_split(full, [900, 100])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=32, shuffle=True)


if __name__ == "__main__":
    from model import Classifier

    L.seed_everything(42)
    L.Trainer(strategy="ddp", devices=4, max_epochs=5).fit(Classifier(), datamodule=Data())
