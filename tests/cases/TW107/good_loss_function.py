"""The division by the accumulation count happens inside the loss helper."""
import torch
from torch import nn


def compute_loss(model, batch, accum):
    logits = model(batch["input_ids"]).mean(dim=1)
    return nn.functional.cross_entropy(logits, batch["labels"]) / accum


def train_one_epoch(model, batches, optimizer, gradient_accumulation_steps):
    model.train()
    optimizer.zero_grad()
    for step, batch in enumerate(batches):
        loss = compute_loss(model, batch, gradient_accumulation_steps)
        loss.backward()
        if (step + 1) % gradient_accumulation_steps == 0:
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
    return loss.item()


torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(30, 16), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [{"input_ids": torch.randint(0, 30, (4, 5)), "labels": torch.randint(0, 2, (4,))} for _ in range(6)]
for epoch in range(2):
    order = torch.randperm(len(data)).tolist()
    print(epoch, train_one_epoch(model, [data[i] for i in order], optimizer, gradient_accumulation_steps=3))
