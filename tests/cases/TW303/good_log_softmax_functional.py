"""F.log_softmax then F.nll_loss."""
import torch
import torch.nn.functional as F
from torch import nn


def train_one_epoch(model, batches, optimizer):
    model.train()
    for batch in batches:
        optimizer.zero_grad()
        logits = model(batch["input_ids"]).mean(dim=1)
        loss = F.nll_loss(F.log_softmax(logits, dim=1), batch["labels"])
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(30, 16), nn.Linear(16, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = [{"input_ids": torch.randint(0, 30, (4, 5)), "labels": torch.randint(0, 4, (4,))} for _ in range(4)]
for epoch in range(2):
    order = torch.randperm(len(data)).tolist()
    print(epoch, train_one_epoch(model, [data[i] for i in order], optimizer))
