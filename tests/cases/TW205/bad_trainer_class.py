"""TW205: a fine-tuning trainer whose freeze_backbone() only switches the backbone to eval mode."""
import torch
from torch import nn


class FineTuner:
    def __init__(self, backbone, num_classes):
        self.backbone = backbone
        self.head = nn.Linear(16, num_classes)
        params = list(backbone.parameters()) + list(self.head.parameters())
        self.optimizer = torch.optim.Adam(params, lr=1e-3)

    def freeze_backbone(self):
        self.backbone.eval()  # error: TW205

    def fit(self, batches, epochs=2):
        self.head.train()
        self.freeze_backbone()
        for epoch in range(epochs):
            for i in torch.randperm(len(batches)).tolist():
                batch = batches[i]
                self.optimizer.zero_grad()
                logits = self.head(self.backbone(batch["pixels"]))
                loss = nn.functional.cross_entropy(logits, batch["label"])
                loss.backward()
                self.optimizer.step()
            print(epoch, loss.item())


torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(12, 16), nn.BatchNorm1d(16), nn.ReLU())
batches = [{"pixels": torch.randn(8, 12), "label": torch.randint(0, 4, (8,))} for _ in range(4)]
FineTuner(backbone, 4).fit(batches)
