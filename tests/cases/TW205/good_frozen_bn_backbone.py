"""A frozen backbone kept in eval mode (BatchNorm statistics fixed), trained head only."""
import torch
from torch import nn


class FineTuner:
    def __init__(self, backbone, num_classes):
        self.backbone = backbone.requires_grad_(False)
        self.head = nn.Linear(16, num_classes)
        self.optimizer = torch.optim.Adam(self.head.parameters(), lr=1e-3)

    def fit(self, batches, epochs=2):
        self.head.train()
        self.backbone.eval()
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
