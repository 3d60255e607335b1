"""Gradients cleared by hand with `p.grad = None`; dict batches."""
import torch
from torch import nn

torch.manual_seed(0)
vocab, dim = 20, 8
embed = nn.Embedding(vocab, dim)
head = nn.Linear(dim, 2)
params = list(embed.parameters()) + list(head.parameters())
optimizer = torch.optim.SGD(params, lr=0.1)

batches = [
    {"input_ids": torch.randint(0, vocab, (4, 6)), "labels": torch.randint(0, 2, (4,))}
    for _ in range(4)
]

for epoch in range(2):
    for i in torch.randperm(len(batches)).tolist():
        batch = batches[i]
        for p in params:
            p.grad = None
        logits = head(embed(batch["input_ids"]).mean(dim=1))
        loss = nn.functional.cross_entropy(logits, batch["labels"])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
