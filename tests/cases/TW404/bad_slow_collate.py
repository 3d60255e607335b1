"""TW404: a collate_fn that tokenizes text in Python for every batch dominates each step."""
import time

import torch
from torch import nn
from torch.utils.data import DataLoader

VOCAB = {w: i for i, w in enumerate("the a cat dog sat ran on mat far home".split())}


def tokenize_collate(samples):
    time.sleep(0.03)  # stands in for slow per-batch Python tokenization
    ids = [torch.tensor([VOCAB[w] for w in text.split()]) for text, _ in samples]
    labels = torch.tensor([label for _, label in samples])
    return {"input_ids": nn.utils.rnn.pad_sequence(ids, batch_first=True), "labels": labels}


def train_one_epoch(model, loader, optimizer):
    model.train()
    for batch in loader:  # runtime: TW404
        optimizer.zero_grad()
        logits = model(batch["input_ids"]).mean(dim=1)
        loss = nn.functional.cross_entropy(logits, batch["labels"])
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
texts = [("the cat sat on the mat", 0), ("a dog ran far home", 1)] * 16
loader = DataLoader(texts, batch_size=8, shuffle=True, collate_fn=tokenize_collate,
                    generator=torch.Generator().manual_seed(0))
model = nn.Sequential(nn.Embedding(len(VOCAB), 16), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    print(epoch, train_one_epoch(model, loader, optimizer))
