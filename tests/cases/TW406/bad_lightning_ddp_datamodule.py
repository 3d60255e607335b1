# case: static-only
"""TW406: a LightningDataModule splits with random_split (no generator) in setup(), which runs in every DDP process."""
import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset, random_split


class Data(L.LightningDataModule):
    def setup(self, stage=None):
        full = TensorDataset(torch.randn(1000, 16), torch.randint(0, 4, (1000,)))
        self.train_set, self.val_set = random_split(full, [900, 100])  # error: TW406

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=32, shuffle=True)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=64)


if __name__ == "__main__":
    from model import Classifier

    L.Trainer(strategy="ddp", devices=4, max_epochs=5).fit(Classifier(), datamodule=Data())
