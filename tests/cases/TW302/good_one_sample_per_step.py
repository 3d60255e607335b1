"""One question per step: the average of per-step losses is the average over samples (no batches to weigh)."""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(6, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
qa_pairs = [(torch.randn(6), torch.randn(1)) for _ in range(7)]
for epoch in range(2):
    total_loss = 0.0
    for question, answer in qa_pairs:
        loss = (model(question) - answer).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    print(epoch, total_loss / len(qa_pairs))
